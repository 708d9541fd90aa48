import { Observable, defer } from 'rxjs';
import { type LoopOptions, checkOptions } from '../loop/loop-options.js';
import { runEventedToolLoop } from '../loop/run-evented-tool-loop.js';
import type { LoopEvent } from '../types.js';
import { shown } from '../util/values.js';
import { type ApprovalOptions, approvalHook } from './approval.js';
import type { Awakeables, Journal } from './journal.js';
import { journaledProvider } from './journaled-provider.js';
import { journaledTools } from './journaled-tools.js';
import { restateJournal } from './restate-journal.js';

/**
 * The options of {@link durableLoop}: the loop's, and which calls wait for approval (D3). Not H8's `approvals`:
 * its decisions are not journaled, so a replay would wait for them again; `needsApproval` waits on awakeables.
 */
export interface DurableLoopOptions extends Omit<LoopOptions, 'approvals'>, ApprovalOptions {}

/**
 * D1: the same loop, each provider call journaled as one step (its events, text merged) and each tool call as
 * one step (its result). Inside a Restate handler (`ctx` is its context: anything with `run(name, fn)`, and
 * `awakeable()` for approvals; its steps are waited on through {@link restateJournal}, D6), a replay after a
 * crash gets the finished steps from the journal — no model call, no tool runs again — and goes on live from
 * the first unfinished one. Hooks and `prepareTurn` run on every replay: keep them deterministic (what they do
 * outside belongs in a step of its own). Options are checked at call time (R20); nothing runs before subscribe
 * (R1).
 *
 * ```text
 * first run:   1 s-t-t-c ⋯ crash            model call 1 and tool c journaled
 * replay:      1 (s T c R E) 2 s-t-e L      from the journal at once, then model call 2 live
 * ```
 *
 * ```ts
 * const ask = async (ctx: restate.ObjectContext, prompt: string) => {
 *   const end = await lastValueFrom(durableLoop(ctx, { provider, registry, messages: [{ role: 'user', content: prompt }] }).pipe(last()));
 *   return end.type === 'loop_end' ? end.assistant.content : '';
 * };
 * ```
 */
export function durableLoop(ctx: Journal & Partial<Awakeables>, options: DurableLoopOptions): Observable<LoopEvent> {
  if (typeof ctx?.run !== 'function') throw new TypeError(`durableLoop: ctx must have a run(name, fn) method, as a Restate context has (got ${shown(ctx)})`);
  // refused before the options are checked: whatever its shape, what `approvals` asks cannot be durable here
  const { needsApproval, announce, approvals, ...loop } = options as DurableLoopOptions & Pick<LoopOptions, 'approvals'>;
  if (approvals !== undefined) {
    throw new TypeError(
      'durableLoop: approvals (H8) are not durable: their decisions are not journaled, so a replay would wait again; use needsApproval, whose answers are Restate awakeables (D3)',
    );
  }
  checkOptions(loop, 'durableLoop');
  if (needsApproval !== undefined && typeof needsApproval !== 'function') throw new TypeError(`durableLoop: needsApproval must be a function (got ${shown(needsApproval)})`);
  if (announce !== undefined && typeof announce !== 'function') throw new TypeError(`durableLoop: announce must be a function (got ${shown(announce)})`);
  if (needsApproval !== undefined && typeof ctx.awakeable !== 'function') {
    throw new TypeError(`durableLoop: needsApproval needs a ctx with awakeable(), as a Restate context has (got ${shown(ctx)})`);
  }
  // per subscription: the step names count this run's model calls from 1, as a replay counts them again; the
  // steps of one run are waited on one wait at a time (D6)
  return defer(() => {
    const journal = restateJournal(ctx);
    return runEventedToolLoop({
      ...loop,
      provider: journaledProvider(journal, loop.provider),
      registry: journaledTools(journal, loop.registry),
      ...(needsApproval === undefined ? {} : { beforeToolCall: approvalHook(journal as Journal & Awakeables, { needsApproval, announce }, loop.beforeToolCall) }),
    });
  });
}
