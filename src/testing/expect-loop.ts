import { Observable } from 'rxjs';
import { TestScheduler, type RunHelpers } from 'rxjs/testing';
import type { ConversationEvent } from '../types.js';
import { describeEvent } from './describe-event.js';
import { argumentError, checkObservable, checkRecord, checkString } from './arguments.js';
import { Letters, Mark, drawLine, frameClock } from './marble-line.js';

/** What {@link expectLoop} returns. */
export interface LoopExpectation {
  /** Runs virtual time to the end and throws when the run's line is not `diagram` (T5). */
  toBe(diagram: string, legend: Record<string, string>): void;
}

/**
 * Like `expectObservable(run$.pipe(described)).toBe(diagram, legend)`, but a mismatch reads as marbles
 * (T5): the expected line and the actual one, one above the other — the actual drawn with the legend's
 * letters where a description matches, fresh letters otherwise — and the legend entries that differ.
 * Call it inside `TestScheduler.run`; `toBe` subscribes `run$` at the current frame and flushes the
 * scheduler (`helpers.flush()`), so expectations set up after it see the whole run too.
 *
 * ```ts
 * testScheduler.run((helpers) => {
 *   expectLoop(helpers, runEventedToolLoop(options)).toBe('1s-e(EL|)', legend);
 * });
 * // Error: expectLoop: the loop's line differs
 * //   expected: 1s-e(EL|)
 * //   actual:   1s--e(EL|)
 * ```
 */
export function expectLoop(helpers: RunHelpers, run$: Observable<ConversationEvent>): LoopExpectation {
  if (typeof (helpers as Partial<RunHelpers> | null)?.flush !== 'function') throw argumentError('expectLoop', 'helpers must be the helpers of TestScheduler.run', helpers);
  checkObservable('expectLoop', 'run$', run$);
  return {
    toBe(diagram, legend) {
      checkString('expectLoop', 'diagram', diagram);
      checkRecord('expectLoop', 'legend', legend);
      // T8: a letter the legend lacks stands for nothing: say so, rather than compare `undefined`
      const unknown = new Map<string, string>();
      for (const c of diagram) if (!SYNTAX.includes(c) && !(c in legend)) unknown.set(c, `${c}: not in the legend`);
      const expected: Mark[] = TestScheduler.parseMarbles(diagram, legend, undefined, true, true).map(({ frame, notification }) => ({
        frame,
        kind: notification.kind,
        ...(notification.kind === 'N' ? { value: describedValue(notification.value, unknown) } : notification.kind === 'E' ? { value: String(notification.error) } : {}),
      }));
      const actual: Mark[] = [];
      const events: { frame: number; event: ConversationEvent }[] = [];
      const now = frameClock(1);
      const subscription = run$.subscribe({
        next: (event) => {
          const frame = now();
          events.push({ frame, event });
          actual.push({ frame, kind: 'N', value: describeEvent(event) });
        },
        error: (error: unknown) => actual.push({ frame: now(), kind: 'E', value: String(error) }),
        complete: () => actual.push({ frame: now(), kind: 'C' }),
      });
      helpers.flush();
      const end = now();
      subscription.unsubscribe();
      const problem = difference({ expected, actual, diagram, legend, unknown, events, end });
      if (problem !== undefined) throw new Error(problem);
    },
  };
}

/** The marble syntax's own characters: everything else in a diagram is a letter. */
const SYNTAX = ' -|#()^!';

function describedValue(value: unknown, unknown: Map<string, string>): string {
  const text = String(value);
  return value === undefined ? [...unknown.values()][0] ?? text : text;
}

interface Compared {
  expected: Mark[];
  actual: Mark[];
  diagram: string;
  legend: Record<string, string>;
  unknown: Map<string, string>;
  events: { frame: number; event: ConversationEvent }[];
  /** The last frame of virtual time. */
  end: number;
}

function difference({ expected, actual, diagram, legend, unknown, events, end }: Compared): string | undefined {
  const same =
    unknown.size === 0 &&
    expected.length === actual.length &&
    expected.every((mark, i) => mark.frame === actual[i]!.frame && mark.kind === actual[i]!.kind && mark.value === actual[i]!.value);
  if (same) return undefined;
  const letters = new Letters(legend, diagram);
  const actualLine = drawLine(actual, (value) => letters.letterOf(value));
  const wanted = diagram.trim();
  const lines = ["expectLoop: the loop's line differs", `  expected: ${wanted}`];
  // T8: never two identical lines: a line that reads the same is not printed twice, the frames say how it differs
  lines.push(actualLine === wanted ? '  actual:   the same line when drawn, but not the same events at the same frames (see the frames below)' : `  actual:   ${actualLine}`);
  if (unknown.size > 0) {
    lines.push('  letters of the expected line that the legend lacks:');
    for (const letter of unknown.keys()) lines.push(`    ${letter}: not in the legend`);
  }
  const used = new Set(actual.filter((m) => m.kind === 'N').map((m) => m.value!));
  const fresh = Object.entries(letters.legend()).filter(([letter]) => !(letter in legend));
  const missing = [...new Set(expected.filter((m) => m.kind === 'N' && !used.has(m.value!) && legend[letters.find(m.value!) ?? ''] === m.value).map((m) => m.value!))];
  if (fresh.length > 0 || missing.length > 0) {
    lines.push('  legend entries that differ:');
    for (const value of missing) lines.push(`    - ${letters.find(value)}: ${value}`);
    for (const [letter, value] of fresh) lines.push(`    + ${letter}: ${value}`);
  }
  const shifted = undrawable(actual);
  if (shifted.length > 0) {
    lines.push("  the actual line cannot draw these events at their frames (a group takes as many frames as it has characters, so they are drawn later):");
    for (const { mark, group } of shifted) {
      const chars = group.marks.map((m) => (m.kind === 'N' ? letters.letterOf(m.value!) : m.kind === 'E' ? '#' : '|')).join('');
      lines.push(`    ${said(mark)} at frame ${mark.frame} is inside the group (${chars}) of frame ${group.frame}, which takes frames ${group.frame}-${group.frame + chars.length + 1}`);
    }
  }
  if (shifted.length > 0 || actualLine === wanted) lines.push('  frame by frame (expected | actual):', ...frameTable(expected, actual));
  const error = actual.find((m) => m.kind === 'E');
  if (error !== undefined) lines.push(`  the run errored: ${error.value}`);
  if (!actual.some((m) => m.kind !== 'N')) lines.push(...unfinished(events, end));
  return lines.join('\n');
}

/** A mark in words: its description, `complete` or `error: …`. */
function said(mark: Mark): string {
  return mark.kind === 'N' ? mark.value! : mark.kind === 'C' ? 'complete' : `error: ${mark.value ?? ''}`;
}

/** The marks that marble syntax cannot draw at their frames: inside the span of an earlier frame's group. */
function undrawable(marks: readonly Mark[]): { mark: Mark; group: { frame: number; marks: Mark[] } }[] {
  const groups: { frame: number; marks: Mark[] }[] = [];
  for (const mark of marks) {
    const last = groups[groups.length - 1];
    if (last !== undefined && last.frame === mark.frame) last.marks.push(mark);
    else groups.push({ frame: mark.frame, marks: [mark] });
  }
  const found: { mark: Mark; group: { frame: number; marks: Mark[] } }[] = [];
  let open: { frame: number; marks: Mark[]; until: number } | undefined;
  for (const group of groups) {
    if (open !== undefined && group.frame < open.until) for (const mark of group.marks) found.push({ mark, group: open });
    else open = { ...group, until: group.frame + (group.marks.length === 1 ? 1 : group.marks.length + 2) };
  }
  return found;
}

/** Both sides, an event a row, side by side by frame: `frame 3: tool_start search`. */
function frameTable(expected: readonly Mark[], actual: readonly Mark[]): string[] {
  const frames = [...new Set([...expected, ...actual].map((m) => m.frame))].sort((a, b) => a - b);
  const rows: [string, string][] = [];
  for (const frame of frames) {
    const left = expected.filter((m) => m.frame === frame);
    const right = actual.filter((m) => m.frame === frame);
    for (let i = 0; i < Math.max(left.length, right.length); i++) {
      rows.push([left[i] ? `frame ${frame}: ${said(left[i]!)}` : '', right[i] ? `frame ${frame}: ${said(right[i]!)}` : '']);
    }
  }
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left === right ? ' ' : '≠'} ${left.padEnd(width)} | ${right}`.trimEnd());
}

/** T8: what is still going on when virtual time has run out: tools still running (a Promise, T4), calls waiting, provider calls open. */
function unfinished(events: readonly { frame: number; event: ConversationEvent }[], end: number): string[] {
  const running = new Map<string, { name: string; frame: number }>();
  const waiting = new Map<string, { name: string; frame: number }>();
  let turn: { n: number; frame: number; ended?: number } | undefined;
  for (const { frame, event } of events) {
    if (event.type === 'turn_start') turn = { n: event.turn, frame };
    else if (event.type === 'message_end' && turn !== undefined) turn.ended = frame;
    else if (event.type === 'turn_end' || event.type === 'loop_end') turn = undefined;
    else if (event.type === 'tool_call') waiting.set(event.call.id, { name: event.call.name, frame });
    else if (event.type === 'tool_start') {
      waiting.delete(event.call.id);
      running.set(event.call.id, { name: event.call.name, frame });
    } else if (event.type === 'tool_result') {
      waiting.delete(event.message.toolCallId);
      running.delete(event.message.toolCallId);
    }
  }
  const lines = [`  the run had not completed by the end of virtual time (frame ${end})`];
  for (const [id, { name, frame }] of running) {
    lines.push(`    the tool ${name} (call ${id}, started at frame ${frame}) is still running: a tool that returns a Promise never settles in virtual time (T4): give it a cold marble or of(value).pipe(delay(n))`);
  }
  for (const [id, { name, frame }] of waiting) lines.push(`    the call ${id} of ${name} (frame ${frame}) is still waiting for its slot or for beforeToolCall`);
  if (turn !== undefined && turn.n > 0) {
    lines.push(
      turn.ended === undefined
        ? `    the provider call of turn ${turn.n} (from frame ${turn.frame}) is still open: it has not sent message_end`
        : `    the provider call of turn ${turn.n} (from frame ${turn.frame}) is still open: it sent message_end at frame ${turn.ended} but has not completed`,
    );
  }
  return lines;
}
