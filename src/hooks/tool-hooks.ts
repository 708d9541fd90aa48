import { EMPTY, NEVER, Observable, catchError, concat, defer, filter, map, merge, mergeMap, of, take, tap } from 'rxjs';
import { firstAnswer } from '../util/first-answer.js';
import { LazyAbort } from '../util/lazy-abort.js';
import { isPlainObject, shown } from '../util/values.js';
import { ToolSettled, resultOf, settled } from '../tools/tool-outcome.js';
import type { ToolProgress } from '../tools/tool-outcome.js';
import { failureResult, isToolOutput, toolErrorMessage, toolResultMessage } from '../tools/tool-result.js';
import type { AfterToolCall, AgentMessage, ApprovalDecision, BeforeToolCall, HookContext, ToolApprovals, ToolCall, ToolDecision, ToolOutput, ToolResultMessage } from '../types.js';

/** The hooks of one turn's calls, and what they are told (H2, H3). */
export interface ToolHooks {
  before: BeforeToolCall | undefined;
  after: AfterToolCall | undefined;
  /** H8: the calls that wait for a person, and where the decisions come from. */
  approvals: ToolApprovals | undefined;
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

/** A call's run: on the checked input as asked, or on `input`, checked again. */
type Run = (input?: Record<string, unknown>) => Observable<ToolProgress>;

/**
 * One known, valid call between its hooks (H1–H5, H8): `beforeToolCall` decides — run as asked, run on a rewritten
 * input (`run(input)` checks it again), deny, or answer without running — then, for a call `approvals.needsApproval`
 * picks, a person's decision does the same, then `afterToolCall` may replace the result. Either hook may answer at
 * once, with a Promise or with an Observable (its first value); while one (or a decision) waits, only this call
 * waits. Unsubscribing while a hook waits aborts that hook's `signal`. It never errors: a hook that fails gives the
 * result `error: beforeToolCall failed: MESSAGE` (or `afterToolCall`, or `approval`).
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
export function hooked(hooks: ToolHooks, call: ToolCall, run: Run): Observable<ToolProgress> {
  const { before, after, approvals } = hooks;
  // H8: asked once beforeToolCall let the call run, on the input it runs on
  const gated: Run =
    approvals === undefined ? run : (input) => approved(approvals, input === undefined ? call : { ...call, input }, (decided) => run(decided === undefined ? input : decided));
  const decided =
    before === undefined
      ? gated()
      : ask(hooks, (context) => before(call, context)).pipe(
          mergeMap((decision) => act(decision, call, gated)),
          // only the hook can fail here: a run never errors (R9), nor does an approval's wait
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

/**
 * H8: a call `needsApproval` picks takes the first answer for its id from `decisions`, subscribed now: one there at
 * once (`of(…)`, a `ReplaySubject`) decides without a word; otherwise the call says it waits (`approval`, which
 * draftTurn announces as `tool_approval`) and waits, holding its slot. `decisions` completing leaves it waiting;
 * its error, or an answer that is no decision, is the call's failure (`error: approval failed: MESSAGE`, H4).
 * Unsubscribing tears the wait down.
 *
 * ```text
 * decisions:  ---x---(a|)    x = another call's answer, a = { toolCallId: call.id, decision: true }
 * approved:   W------S--(r|) W = approval, S = tool_start, r = the result
 * ```
 */
function approved(approvals: ToolApprovals, call: ToolCall, run: Run): Observable<ToolProgress> {
  return defer(() => {
    if (approvals.needsApproval(call) !== true) return run();
    let decided = false;
    const decision = concat(approvals.decisions, NEVER).pipe(
      // an answer whose fields throw when read fails the call (R20); anything but an object is passed over
      filter((answer) => typeof answer === 'object' && answer !== null && answer.toolCallId === call.id),
      take(1),
      tap(() => (decided = true)),
      mergeMap((answer) => act(toDecision(answer.decision), call, run)),
    );
    // subscribed after `decision`: an answer there at once has decided, and the call never says it waits
    const waits = defer(() => (decided ? EMPTY : of<ToolProgress>({ type: 'approval', call })));
    return merge(decision, waits);
  }).pipe(
    // a run never errors (R9): only needsApproval, decisions or the answer can fail here
    catchError((error: unknown) => of(approvalFailed(call, error))),
  );
}

/** H8: why a call a person answered `false` was denied. */
const NOT_APPROVED = 'not approved';

/** H8, D3: what a person answered as an H2 decision: `true` runs the call, `false` denies it; anything else is no decision. */
export function toDecision(decision: ApprovalDecision): ToolDecision {
  if (decision === true) return { action: 'run' };
  if (decision === false) return { action: 'deny', reason: NOT_APPROVED };
  if (isPlainObject(decision) && ['run', 'deny', 'answer'].includes(decision.action as string)) return decision;
  throw new TypeError(`approval decision must be true, false or a ToolDecision (got ${shown(decision)})`);
}

/** H2, H8: a denied call's result, `denied: REASON`; without a reason, a person's `false` (`denied: not approved`). */
export function deniedResult(call: ToolCall, reason: string = NOT_APPROVED): ToolResultMessage {
  return toolErrorMessage(call, `denied: ${reason}`);
}

function ask<T>(hooks: ToolHooks, hook: (context: HookContext) => T | PromiseLike<T> | Observable<T>): Observable<T> {
  const context = new HookCallContext(hooks.turn, hooks.messages);
  return firstAnswer(() => hook(context), () => context.abort());
}

/** What a decision means for the call (H2); a value that is no decision is the hook's failure. */
function act(decision: ToolDecision | void | null, call: ToolCall, run: Run): Observable<ToolProgress> {
  if (decision === undefined || decision === null) return run();
  const { action, input, reason, output } = (isPlainObject(decision) ? decision : {}) as { action?: unknown; input?: unknown; reason?: unknown; output?: unknown };
  if (action === 'run') return input === undefined ? run() : run(input as Record<string, unknown>);
  if (action === 'deny' && typeof reason === 'string') return of(settled(deniedResult(call, reason)));
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

/** H8, H4: `error: approval failed: MESSAGE`, the cause kept (R25). */
function approvalFailed(call: ToolCall, error: unknown): ToolSettled {
  return settled(failureResult(call, error, 'approval failed: '));
}

/** H4: `error: beforeToolCall failed: MESSAGE`, the cause kept as any failure's (R25). */
function hookFailed(hook: 'beforeToolCall' | 'afterToolCall', call: ToolCall, error: unknown): ToolSettled {
  return settled(failureResult(call, error, `${hook} failed: `));
}
