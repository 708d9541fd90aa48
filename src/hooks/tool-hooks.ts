import { Observable, catchError, map, mergeMap, of } from 'rxjs';
import { firstAnswer } from '../util/first-answer.js';
import { LazyAbort } from '../util/lazy-abort.js';
import { isPlainObject, shown } from '../util/values.js';
import { ToolSettled, resultOf, settled } from '../tools/tool-outcome.js';
import type { ToolProgress } from '../tools/tool-outcome.js';
import { failureResult, isToolOutput, toolErrorMessage, toolResultMessage } from '../tools/tool-result.js';
import type { AfterToolCall, AgentMessage, BeforeToolCall, HookContext, ToolCall, ToolDecision, ToolOutput } from '../types.js';

/** The hooks of one turn's calls, and what they are told (H2, H3). */
export interface ToolHooks {
  before: BeforeToolCall | undefined;
  after: AfterToolCall | undefined;
  turn: number;
  /** The history as of the turn's start. */
  messages: readonly AgentMessage[];
}

/** A hook's context; its `signal` is made only if the hook reads it, and aborts if the loop stops waiting. */
class HookCallContext extends LazyAbort implements HookContext {
  constructor(
    readonly turn: number,
    readonly messages: readonly AgentMessage[],
  ) {
    super();
  }
}

/**
 * One known, valid call between its hooks (H1–H5): `beforeToolCall` decides — run as asked, run on a rewritten
 * input (`run(input)` checks it again), deny, or answer without running — then `afterToolCall` may replace the
 * result. Either hook may answer at once, with a Promise or with an Observable (its first value); while one
 * waits, only this call waits. Unsubscribing while a hook waits aborts that hook's `signal`. It never errors:
 * a hook that fails gives the result `error: beforeToolCall failed: MESSAGE` (or `afterToolCall`).
 *
 * ```text
 * beforeToolCall:  ----(d|)          d = { action: 'run' }: approved at frame 4
 * run():               S--(r|)       S = tool_start, r = the tool's result
 * afterToolCall:          (a|)       a = 'redacted'
 * hooked:          ----S--(a|)       the timeout (R16) counts from S, not from the call
 * ```
 *
 * @param run the handler's run (with `tool_start`): on the checked input as asked, or on `input`, checked again
 */
export function hooked(hooks: ToolHooks, call: ToolCall, run: (input?: Record<string, unknown>) => Observable<ToolProgress>): Observable<ToolProgress> {
  const { before, after } = hooks;
  const decided =
    before === undefined
      ? run()
      : ask(hooks, (context) => before(call, context)).pipe(
          mergeMap((decision) => act(decision, call, run)),
          // only the hook can fail here: a run never errors (R9)
          catchError((error: unknown) => of(hookFailed('beforeToolCall', call, error))),
        );
  if (after === undefined) return decided;
  return decided.pipe(
    mergeMap((progress) => {
      if (progress.type !== 'settled') return of(progress);
      return ask(hooks, (context) => after(progress.message, context)).pipe(
        map((output) => replaced(call, progress, output)),
        catchError((error: unknown) => of(hookFailed('afterToolCall', call, error))),
      );
    }),
  );
}

function ask<T>(hooks: ToolHooks, hook: (context: HookContext) => T | PromiseLike<T> | Observable<T>): Observable<T> {
  const context = new HookCallContext(hooks.turn, hooks.messages);
  return firstAnswer(() => hook(context), () => context.abort());
}

/** What a decision means for the call (H2); a value that is no decision is the hook's failure. */
function act(decision: ToolDecision | void | null, call: ToolCall, run: (input?: Record<string, unknown>) => Observable<ToolProgress>): Observable<ToolProgress> {
  if (decision === undefined || decision === null) return run();
  const { action, input, reason, output } = (isPlainObject(decision) ? decision : {}) as { action?: unknown; input?: unknown; reason?: unknown; output?: unknown };
  if (action === 'run') return input === undefined ? run() : run(input as Record<string, unknown>);
  if (action === 'deny' && typeof reason === 'string') return of(settled(toolErrorMessage(call, `denied: ${reason}`)));
  if (action === 'answer' && isToolOutput(output)) return of(resultOf(call, output));
  throw new TypeError(`expected { action: 'run' | 'deny' | 'answer' } or nothing, got ${shown(decision)}`);
}

/** H3: a string is `{ content }`; a `ToolOutput` replaces the result whole; nothing keeps it. */
function replaced(call: ToolCall, result: ToolSettled, output: ToolOutput | string | void | null): ToolSettled {
  if (output === undefined || output === null) return result;
  if (typeof output === 'string') return settled(toolResultMessage(call, { content: output }));
  if (isToolOutput(output)) return resultOf(call, output); // its attachments checked as a tool's (F1)
  throw new TypeError(`expected a string, { content: string } or nothing, got ${shown(output)}`);
}

/** H4: `error: beforeToolCall failed: MESSAGE`, the cause kept as any failure's (R25). */
function hookFailed(hook: 'beforeToolCall' | 'afterToolCall', call: ToolCall, error: unknown): ToolSettled {
  return settled(failureResult(call, error, `${hook} failed: `));
}
