import { Observable } from 'rxjs';
import { isToolProgress } from '../tools/tool-progress.js';
import { ToolRegistry } from '../tools/tool-registry.js';
import { type FailureCause, causeOf } from '../tools/tool-result.js';
import type { ToolProgressValue } from '../types.js';
import type { Tool, ToolContext, ToolOutput } from '../types.js';
import { subscribeAnswer } from '../util/answer.js';
import type { Journal } from './journal.js';

type Output = string | ToolOutput | ToolProgressValue;

/** One tool call as journaled (JSON): its result — the handler's last value — or its failure. */
export type ToolStep =
  | { result: string | ToolOutput }
  | { failed: FailureCause }
  /** The handler completed without a result (R9: `error: tool produced no result`). */
  | { empty: true }
  /** Torn down before it finished (a timeout, an abort): not an outcome, so a replay waits again. */
  | { cancelled: true };

/**
 * D1: a registry with the same tools whose handlers run as journaled steps, named `tool NAME ID`: a tool that
 * finished is not run again on a replay — its journaled result (or failure, R25's cause kept) is the result. On
 * the first run, progress (`toolProgress`, earlier values) reaches the loop live; a replay has only the result.
 * Schemas, hooks and timeouts stay the loop's: they run outside the steps, on every replay, as in the first run.
 *
 * ```ts
 * runEventedToolLoop({ provider, registry: journaledTools(journal, registry), messages });
 * ```
 */
export function journaledTools(journal: Journal, registry: ToolRegistry): ToolRegistry {
  const durable = new ToolRegistry();
  for (const { name } of registry.getSpecs()) {
    const tool = registry.get(name);
    if (tool !== undefined) durable.register({ ...tool, handler: (input, context) => journaledRun(journal, tool, input, context) });
  }
  return durable;
}

function journaledRun(journal: Journal, tool: Tool, input: Record<string, unknown>, context: ToolContext): Observable<Output> {
  return new Observable<Output>((subscriber) => {
    let closed = false;
    let stop: (() => void) | undefined;
    const step = journal.run(`tool ${tool.name} ${context.call.id}`, () =>
      new Promise<ToolStep>((resolve) => {
        if (closed) return resolve({ cancelled: true });
        let returned: unknown;
        try {
          returned = tool.handler(input, context);
        } catch (error) {
          return resolve({ failed: causeOf(error) });
        }
        // R14: progress goes out at once, an earlier value when the next arrives; the last is the result
        let held: { value: unknown } | undefined;
        const inner = subscribeAnswer(returned, {
          next: (value) => {
            if (isToolProgress(value)) return closed || subscriber.next(value);
            if (held !== undefined && !closed) subscriber.next(held.value as Output);
            held = { value };
          },
          error: (error: unknown) => resolve({ failed: causeOf(error) }),
          complete: () => resolve(held === undefined ? { empty: true } : { result: held.value as string | ToolOutput }),
        });
        stop = () => {
          inner?.unsubscribe();
          resolve({ cancelled: true });
        };
      }),
    );
    const journaled = subscribeAnswer(step, {
      next: (done) => {
        if ('cancelled' in done) return;
        if ('failed' in done) return subscriber.error(done.failed);
        if ('result' in done) subscriber.next(done.result);
        subscriber.complete();
      },
      error: (error: unknown) => subscriber.error(error), // the engine failed the step itself: a failure result (R9)
      complete: () => undefined,
    });
    return () => {
      closed = true;
      journaled?.unsubscribe();
      stop?.();
    };
  });
}
