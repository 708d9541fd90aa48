/**
 * Two ways to cancel, and the history each leaves.
 *
 * - `takeUntil(stop$)` unsubscribes: the provider call and the running tools are torn down at once,
 *   and no more events come — no `turn_end` for the cancelled turn, no `loop_end`. The history to keep
 *   is the last `turn_end`'s, which is complete and can be sent to a provider as it is.
 * - `signal` (an `AbortSignal`) also tears everything down, but the loop still ends the turn: calls
 *   without a result get `error: aborted`, and `loop_end` (reason `aborted`) carries that history.
 */
import { Observable, Subject, lastValueFrom, takeUntil, tap } from 'rxjs';
import type { AgentMessage, LoopEvent, Provider } from '../src/index.js';
import { ToolRegistry, runEventedToolLoop, scriptedProvider } from '../src/index.js';

const provider = (): Provider =>
  scriptedProvider([
    [
      { type: 'message_start' },
      { type: 'tool_call', call: { id: 'c1', name: 'clock', input: {} } },
      { type: 'message_end', stopReason: 'toolUse' },
    ],
    [
      { type: 'message_start' },
      { type: 'tool_call', call: { id: 'c2', name: 'slow_report', input: {} } },
      { type: 'message_end', stopReason: 'toolUse' },
    ],
  ]);

const registry = new ToolRegistry()
  .register({ name: 'clock', description: 'the time', input: {}, handler: () => '12:00' })
  .register({
    name: 'slow_report',
    description: 'takes a while',
    input: {},
    handler: () => new Observable<string>(() => undefined), // never finishes on its own
  });

const ask: AgentMessage[] = [{ role: 'user', content: 'Report, please.' }];

/** The user presses stop while the slow tool runs: `takeUntil`. Resolves with what the app keeps. */
export function cancelWithTakeUntil(): Promise<{ history: readonly AgentMessage[]; last: LoopEvent['type'] | undefined }> {
  const stop$ = new Subject<void>();
  let history: readonly AgentMessage[] = ask;
  let last: LoopEvent | undefined;
  return new Promise((resolve) => {
    runEventedToolLoop({ provider: provider(), registry, messages: ask })
      .pipe(takeUntil(stop$))
      .subscribe({
        next(event) {
          last = event;
          if (event.type === 'turn_end') history = event.messages; // the last complete history
          if (event.type === 'tool_call' && event.call.name === 'slow_report') setTimeout(() => stop$.next(), 10);
        },
        complete: () => resolve({ history, last: last?.type }),
      });
  });
}

/** The same with an `AbortSignal`: the loop ends the turn itself, and `loop_end` carries the history. */
export function cancelWithSignal(): Promise<LoopEvent> {
  const controller = new AbortController();
  return lastValueFrom(
    runEventedToolLoop({ provider: provider(), registry, messages: ask, signal: controller.signal }).pipe(
      tap((event) => {
        if (event.type === 'tool_call' && event.call.name === 'slow_report') setTimeout(() => controller.abort(), 10);
      }),
    ),
  );
}
