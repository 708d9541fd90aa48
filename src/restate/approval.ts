import { toDecision } from '../hooks/tool-hooks.js';
import type { ApprovalDecision, BeforeToolCall, ToolCall } from '../types.js';
import type { Awakeables, Journal } from './journal.js';

/** D3: a call waiting for a person: resolve the awakeable `awakeableId` (`approve(id, decision)`) to go on. */
export interface ApprovalWaiting {
  type: 'approval_waiting';
  call: ToolCall;
  awakeableId: string;
}


/** D3: which calls wait for approval, and how the waiting event reaches a person. */
export interface ApprovalOptions {
  /** Calls for which this is true wait for a decision; the others go to the loop's own `beforeToolCall`, if any. */
  needsApproval?: (call: ToolCall) => boolean;
  /** Runs once per waiting call, as a journaled step (`announce approval ID`): post it to a UI, a queue, a chat. */
  announce?: (waiting: ApprovalWaiting) => void | PromiseLike<void>;
}

/**
 * D3: a `beforeToolCall` (H2) that makes each call `needsApproval` picks wait on an awakeable. The wait survives
 * restarts — Restate keeps the awakeable, and a replay waits on the same one — and holds only that call (H1);
 * `announce` hands out the waiting event once. A decision that is not an `ApprovalDecision` fails the call (H4).
 *
 * ```ts
 * beforeToolCall: approvalHook(ctx, { needsApproval: (call) => call.name === 'send_email', announce: post });
 * ```
 */
export function approvalHook(ctx: Journal & Awakeables, options: ApprovalOptions, otherwise?: BeforeToolCall): BeforeToolCall {
  const { needsApproval, announce } = options;
  return (call, context) => {
    if (needsApproval?.(call) !== true) return otherwise?.(call, context);
    const { id, promise } = ctx.awakeable<ApprovalDecision>();
    const waiting: ApprovalWaiting = { type: 'approval_waiting', call, awakeableId: id };
    // Restate runs a step only once something awaits it: the wait begins with the announcement
    const announced = announce === undefined ? Promise.resolve(null) : ctx.run(`announce approval ${call.id}`, async () => {
      await announce(waiting);
      return null;
    });
    // a Promise, which the loop's hook adapter waits on as it does any hook's answer (H1)
    return Promise.resolve(announced).then(() => promise).then(toDecision);
  };
}
