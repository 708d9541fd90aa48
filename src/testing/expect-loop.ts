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
      const expected: Mark[] = TestScheduler.parseMarbles(diagram, legend, undefined, true, true).map(({ frame, notification }) => ({
        frame,
        kind: notification.kind,
        ...(notification.kind === 'N' ? { value: String(notification.value) } : {}),
      }));
      const actual: Mark[] = [];
      const now = frameClock(1);
      const subscription = run$.subscribe({
        next: (event) => actual.push({ frame: now(), kind: 'N', value: describeEvent(event) }),
        error: (error: unknown) => actual.push({ frame: now(), kind: 'E', value: String(error) }),
        complete: () => actual.push({ frame: now(), kind: 'C' }),
      });
      helpers.flush();
      subscription.unsubscribe();
      const problem = difference(expected, actual, diagram, legend);
      if (problem !== undefined) throw new Error(problem);
    },
  };
}

function difference(expected: Mark[], actual: Mark[], diagram: string, legend: Record<string, string>): string | undefined {
  const same =
    expected.length === actual.length &&
    expected.every((mark, i) => mark.frame === actual[i]!.frame && mark.kind === actual[i]!.kind && mark.value === actual[i]!.value);
  if (same) return undefined;
  const letters = new Letters(legend);
  const actualLine = drawLine(actual, (value) => letters.letterOf(value));
  const lines = ["expectLoop: the loop's line differs", `  expected: ${diagram.trim()}`, `  actual:   ${actualLine}`];
  const used = new Set(actual.filter((m) => m.kind === 'N').map((m) => m.value!));
  const fresh = Object.entries(letters.legend()).filter(([letter]) => !(letter in legend));
  const missing = [...new Set(expected.filter((m) => m.kind === 'N' && !used.has(m.value!)).map((m) => m.value!))];
  if (fresh.length > 0 || missing.length > 0) {
    lines.push('  legend entries that differ:');
    for (const value of missing) lines.push(`    - ${letters.find(value)}: ${value}`);
    for (const [letter, value] of fresh) lines.push(`    + ${letter}: ${value}`);
  }
  const error = actual.find((m) => m.kind === 'E');
  if (error !== undefined) lines.push(`  the run errored: ${error.value}`);
  return lines.join('\n');
}
