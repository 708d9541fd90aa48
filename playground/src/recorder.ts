/**
 * The model of a run the page draws (V2): the loop's output lane, a lane per provider call (its
 * subscription, from `^` to `!`) and per tool run (`tool_start` to its result or teardown), and a lane per
 * other cold line a scenario feeds in (prompts, an approval). Each event a mark with its letter, its
 * `describeEvent` line and the whole event. An agent tool's inner loop (A4, V5) is drawn from the events it forwards
 * as lanes nested under its call: the inner loop's own output, its provider calls and its tool runs (and theirs, at
 * any depth). The loop is also recorded by `recordMarbles` (T3) on the lanes' own clock: in virtual time as
 * spec/testing/round-trip.spec.ts does it, a tap into a Subject the recorder listens to; in real time from the
 * frames the loop lane drew (see {@link Recorder.loop}).
 */
import { Observable, Subject, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { ConversationEvent, LoopEvent, Provider, ProviderEvent } from 'rx-tool-loop';
import { describeEvent, recordMarbles } from 'rx-tool-loop/testing';
import type { MarbleRecording } from 'rx-tool-loop/testing';
import { LetterMap } from './letters';

export type LaneKind = 'provider' | 'tool' | 'input' | 'loop' | 'inner';

export interface Mark {
  frame: number;
  /** A value, an error (`#`) or the completion (`|`), as in marble syntax. */
  kind: 'N' | 'E' | 'C';
  letter: string;
  description: string;
  /** What hovering shows: the whole event or value, or the error. */
  detail: unknown;
  /** The colour: the event's kind. */
  tone: string;
}

export interface Lane {
  id: number;
  kind: LaneKind;
  label: string;
  caption: string;
  subscribed: number;
  unsubscribed?: number;
  marks: Mark[];
  /** V5: how deep it is nested (an agent tool's inner loop and its lanes: 1, theirs 2, …); absent at the top. */
  depth?: number;
  /** V5: the lane it is drawn under: an inner loop under its agent tool's call, its calls and tools under it. */
  parent?: number;
}

/** V5: what the page knows of one agent tool's inner loop, from the events the call forwards. */
interface Nest {
  name: string;
  depth: number;
  loop: Lane;
  call?: Lane;
  calls: number;
  tools: Map<string, Lane>;
  nests: Map<string, Nest>;
  lanes: Lane[];
}

/** What the loop lane drew: an event, the error or the completion, at its frame. */
type Drawn = { frame: number; kind: 'N'; event: ConversationEvent } | { frame: number; kind: 'E'; error: unknown } | { frame: number; kind: 'C' };

const PROVIDER_EVENTS = new Set(['message_start', 'text_delta', 'reasoning_delta', 'tool_call_delta', 'tool_call', 'message_end']);

export interface RecorderOptions {
  /** Letters given by a scenario's legend (letter → description). */
  legend?: Record<string, string>;
  /** Real time: milliseconds a frame of the page's clock (the recording is made from its frames); virtual time when absent. */
  frameMs?: number;
  /** A provider call's lane name, e.g. the scenario's `turn1`. */
  callLabel?: (provider: Provider, call: number) => string | undefined;
}

export class Recorder {
  /** The input lanes, in the order they were opened. */
  readonly lanes: Lane[] = [];
  loopLane?: Lane;
  /** What the operator box between the inputs and the output says. */
  operator = 'runEventedToolLoop';
  letters: LetterMap;
  recording?: MarbleRecording;
  recordingError?: string;
  /** The frame the run has reached. */
  frame = 0;
  /** Called on every change. */
  onChange: () => void = () => undefined;

  private ids = 0;
  private calls = 0;
  private readonly toolLanes = new Map<string, Lane>();
  /** V5: the inner loops of the running agent tool calls, by call id. */
  private readonly nests = new Map<string, Nest>();

  constructor(
    readonly now: () => number,
    private readonly options: RecorderOptions = {},
  ) {
    this.letters = new LetterMap(options.legend);
  }

  /** The provider, with a lane per subscription (each subscription is one model call, P1). */
  provider(provider: Provider): Provider {
    return (input) => {
      const events = provider(input);
      return new Observable<ProviderEvent>((subscriber) => {
        const call = ++this.calls;
        // J5: the call of an answer turn (asked for the typed answer, with no tools) says so on its lane
        const answer = input.output === undefined ? undefined : input.output.name;
        const lane = this.open(
          'provider',
          this.options.callLabel?.(provider, call) ?? (answer === undefined ? `call ${call}` : `answer call ${call}`),
          answer === undefined ? `provider call ${call}` : `provider call ${call}: the answer turn, asked for "${answer}" with no tools`,
        );
        const subscription = events.subscribe({
          next: (event) => {
            this.add(lane, this.eventMark(event));
            subscriber.next(event);
          },
          error: (error: unknown) => {
            this.add(lane, this.endMark('E', error));
            subscriber.error(error);
          },
          complete: () => {
            this.add(lane, this.endMark('C'));
            subscriber.complete();
          },
        });
        return () => {
          subscription.unsubscribe();
          this.close(lane);
        };
      });
    };
  }

  /**
   * The loop's output: drawn on the loop lane, tool runs opened and closed from its events, and recorded (T3).
   * In virtual time `recordMarbles` listens as the run goes, on the scheduler's clock that the lanes read too.
   * In real time the lanes' clock is the page's own, so the run is recorded when it ends, from the frames the
   * lanes drew: its events replayed at those frames in virtual time. One clock, so the recorded line is the
   * drawn one.
   */
  loop<T extends ConversationEvent>(run: Observable<T>, operator: string): Observable<T> {
    this.operator = operator;
    const live = this.options.frameMs === undefined ? new Subject<ConversationEvent>() : undefined;
    if (live !== undefined) this.record(live);
    const drawn: Drawn[] = [];
    return new Observable<T>((subscriber) => {
      const lane: Lane = { id: this.ids++, kind: 'loop', label: 'loop', caption: 'output', subscribed: this.now(), marks: [] };
      this.loopLane = lane;
      const subscription = run.subscribe({
        next: (event) => {
          this.loopEvent(lane, event);
          drawn.push({ frame: lane.marks[lane.marks.length - 1]!.frame, kind: 'N', event });
          live?.next(event);
          subscriber.next(event);
        },
        error: (error: unknown) => {
          this.add(lane, this.endMark('E', error));
          drawn.push({ frame: lane.marks[lane.marks.length - 1]!.frame, kind: 'E', error });
          if (live !== undefined) live.error(error);
          else this.recordDrawn(drawn);
          subscriber.error(error);
        },
        complete: () => {
          this.add(lane, this.endMark('C'));
          drawn.push({ frame: lane.marks[lane.marks.length - 1]!.frame, kind: 'C' });
          if (live !== undefined) live.complete();
          else this.recordDrawn(drawn);
          subscriber.complete();
        },
      });
      return () => {
        subscription.unsubscribe();
        this.close(lane);
        for (const tool of this.toolLanes.values()) this.close(tool); // torn down with the loop (R11)
        this.toolLanes.clear();
        for (const nest of this.nests.values()) this.closeNest(nest); // and the agent tools' inner loops with them (A3)
        this.nests.clear();
      };
    });
  }

  /** `recordMarbles` of `run$`: the recording (or its error) when the run ends. */
  private record(run$: Observable<ConversationEvent>): void {
    recordMarbles(run$).subscribe({
      next: (recording) => {
        this.recording = recording;
        this.onChange();
      },
      error: (error: unknown) => (this.recordingError = String(error)),
    });
  }

  /** Real time: the loop's events, its error or completion replayed in virtual time at the frames the loop lane drew them at. */
  private recordDrawn(drawn: readonly Drawn[]): void {
    new TestScheduler(() => undefined).run(() => {
      const replay = new Observable<ConversationEvent>((subscriber) => {
        const timers = drawn.map((entry) =>
          timer(entry.frame).subscribe(() => {
            if (entry.kind === 'N') subscriber.next(entry.event);
            else if (entry.kind === 'E') subscriber.error(entry.error);
            else subscriber.complete();
          }),
        );
        return () => timers.forEach((t) => t.unsubscribe());
      });
      this.record(replay);
    });
  }

  /** Opens a lane subscribed now. */
  open(kind: LaneKind, label: string, caption: string): Lane {
    const lane: Lane = { id: this.ids++, kind, label, caption, subscribed: this.now(), marks: [] };
    this.lanes.push(lane);
    this.onChange();
    return lane;
  }

  /** Unsubscribes a lane now (once). */
  close(lane: Lane): void {
    if (lane.unsubscribed !== undefined) return;
    lane.unsubscribed = this.now();
    this.onChange();
  }

  add(lane: Lane, mark: Mark): void {
    lane.marks.push(mark);
    this.onChange();
  }

  /** The letters of `recordMarbles` for the events it recorded, and fresh ones for the rest. */
  adoptLetters(values: Record<string, string>): void {
    this.letters = new LetterMap(values);
    for (const lane of [...this.lanes, ...(this.loopLane ? [this.loopLane] : [])]) {
      for (const mark of lane.marks) if (mark.kind === 'N' && lane.kind !== 'input') mark.letter = this.letters.letterOf(mark.description);
    }
    this.onChange();
  }

  eventMark(event: ConversationEvent): Mark {
    const description = describeEvent(event);
    return { frame: this.now(), kind: 'N', letter: this.letters.letterOf(description), description, detail: event, tone: tone(event) };
  }

  endMark(kind: 'E' | 'C', error?: unknown): Mark {
    const frame = this.now();
    return kind === 'C'
      ? { frame, kind, letter: '|', description: 'complete', detail: 'complete', tone: 'complete' }
      : { frame, kind, letter: '#', description: `error: ${error instanceof Error ? error.message : String(error)}`, detail: error instanceof Error ? { name: error.name, message: error.message } : error, tone: 'failed' };
  }

  /** V5: the inner loop of the agent call `id` (drawn under `under`), opened at its first forwarded event. */
  private nestOf(nests: Map<string, Nest>, id: string, name: string, under: Lane, depth: number): Nest {
    let nest = nests.get(id);
    if (nest === undefined) {
      const loop = this.nestedLane('inner', `${name} loop`, 'inner loop', depth, under.id);
      nest = { name, depth, loop, calls: 0, tools: new Map(), nests: new Map(), lanes: [loop] };
      nests.set(id, nest);
    }
    return nest;
  }

  /** V5: one inner event: on the inner loop's lane, and on its provider call's or tool run's lane, as the outer loop's are drawn. */
  private nested(nest: Nest, event: LoopEvent): void {
    const mark = this.eventMark(event);
    this.add(nest.loop, mark);
    if (event.type === 'turn_start' && event.turn > 0) {
      nest.call = this.nestedLane('provider', `${nest.name} call ${++nest.calls}`, 'inner provider call', nest.depth, nest.loop.id);
      nest.lanes.push(nest.call);
    } else if (PROVIDER_EVENTS.has(event.type) && nest.call !== undefined) {
      this.add(nest.call, { ...mark });
    } else if (event.type === 'turn_end' && nest.call !== undefined) {
      // R5: the turn ends once its provider call has completed — the events' nearest sign of it (an aborted one was torn down)
      if (event.assistant.stopReason !== 'aborted') this.add(nest.call, this.endMark('C'));
      this.close(nest.call);
      nest.call = undefined;
    } else if (event.type === 'tool_start') {
      const tool = this.nestedLane('tool', event.call.name, 'inner tool run', nest.depth, nest.loop.id);
      nest.tools.set(event.call.id, tool);
      nest.lanes.push(tool);
    } else if (event.type === 'tool_update') {
      const tool = nest.tools.get(event.toolCallId);
      if (tool === undefined) return;
      this.add(tool, { ...mark });
      if (event.event !== undefined) this.nested(this.nestOf(nest.nests, event.toolCallId, event.toolName, tool, nest.depth + 1), event.event);
    } else if (event.type === 'tool_result') {
      const tool = nest.tools.get(event.message.toolCallId);
      if (tool === undefined) return;
      nest.tools.delete(event.message.toolCallId);
      this.add(tool, { ...mark });
      if (!event.message.isError) this.add(tool, this.endMark('C'));
      this.close(tool);
      const inner = nest.nests.get(event.message.toolCallId);
      if (inner !== undefined) this.closeNest(inner);
      nest.nests.delete(event.message.toolCallId);
    } else if (event.type === 'loop_end') {
      this.add(nest.loop, this.endMark('C'));
      this.closeNest(nest);
    }
  }

  private nestedLane(kind: LaneKind, label: string, caption: string, depth: number, parent: number): Lane {
    const lane = this.open(kind, label, caption);
    lane.depth = depth;
    lane.parent = parent;
    return lane;
  }

  /** Closes every lane of an inner loop, and of the loops nested in it, that is still open. */
  private closeNest(nest: Nest): void {
    for (const lane of nest.lanes) this.close(lane);
    for (const inner of nest.nests.values()) this.closeNest(inner);
  }

  private loopEvent(lane: Lane, event: ConversationEvent): void {
    const mark = this.eventMark(event);
    this.add(lane, mark);
    if (event.type === 'tool_start') {
      this.toolLanes.set(event.call.id, this.open('tool', event.call.name, 'tool run'));
    } else if (event.type === 'tool_update') {
      const tool = this.toolLanes.get(event.toolCallId);
      if (tool !== undefined) this.add(tool, { ...mark });
      if (tool !== undefined && event.event !== undefined) this.nested(this.nestOf(this.nests, event.toolCallId, event.toolName, tool, 1), event.event);
    } else if (event.type === 'tool_result') {
      const tool = this.toolLanes.get(event.message.toolCallId);
      if (tool === undefined) return; // never ran (unknown tool, bad input, denied): no run to draw
      this.toolLanes.delete(event.message.toolCallId);
      const nest = this.nests.get(event.message.toolCallId);
      if (nest !== undefined) this.closeNest(nest); // the call is over: whatever of its inner loop still ran was torn down
      this.nests.delete(event.message.toolCallId);
      this.add(tool, { ...mark });
      // a result the tool gave completes it; a failure (thrown, timed out, aborted) ends the run without `|`
      if (!event.message.isError) this.add(tool, this.endMark('C'));
      this.close(tool);
    }
  }
}

/** The colour of an event: its kind. */

export function tone(event: ConversationEvent): string {
  switch (event.type) {
    case 'turn_start':
      return 'turn';
    case 'message_start':
    case 'message_end':
      return 'message';
    case 'text_delta':
    case 'reasoning_delta':
      return 'text';
    case 'tool_call':
    case 'tool_call_delta':
      return 'call';
    case 'tool_approval':
      return 'approval'; // H8: the call waits for a person
    case 'tool_start':
      return 'start';
    case 'tool_update':
      return 'update';
    case 'tool_result':
      return event.message.isError ? 'failed' : 'result';
    case 'turn_end':
      return 'turn-end';
    case 'loop_end':
      return 'loop-end';
    case 'user_message':
      return 'user';
    default:
      return 'value';
  }
}

/** Marks grouped by frame as a marble line draws them: a group takes as many frames as it has characters, and one that would start inside an earlier group moves right. */
export function groups(marks: readonly Mark[], from = 0): { at: number; marks: Mark[] }[] {
  const found: { frame: number; marks: Mark[] }[] = [];
  for (const mark of marks) {
    const last = found[found.length - 1];
    if (last !== undefined && last.frame === mark.frame) last.marks.push(mark);
    else found.push({ frame: mark.frame, marks: [mark] });
  }
  let next = from;
  return found.map(({ frame, marks: group }) => {
    const at = Math.max(frame, next);
    next = at + (group.length === 1 ? 1 : group.length + 2);
    return { at, marks: group };
  });
}

/** A lane as the project's diagrams write it: indented to its subscription with spaces (the loop is not), then a character a frame. */
export function laneLine(lane: Lane): string {
  const from = lane.kind === 'loop' ? 0 : lane.subscribed;
  let line = ' '.repeat(from);
  for (const { at, marks } of groups(lane.marks, from)) {
    if (at > line.length) line += '-'.repeat(at - line.length);
    const chars = marks.map((mark) => mark.letter).join('');
    line += marks.length === 1 ? chars : `(${chars})`;
  }
  return line;
}

/** The lane's subscription line: `^` where it was subscribed, `!` where it was unsubscribed. */
export function runsLine(lane: Lane): string {
  const pad = '-'.repeat(lane.subscribed);
  if (lane.unsubscribed === undefined) return `${pad}^`;
  if (lane.unsubscribed === lane.subscribed) return `${pad}(^!)`;
  return `${pad}^${'-'.repeat(lane.unsubscribed - lane.subscribed - 1)}!`;
}
