import { from, type Observable } from 'rxjs';
import type { ResumeEntry, RunAgentInput } from '@ag-ui/core';
import { savedTurn } from '../loop/resume-turn.js';
import type { AgentMessage, ApprovalAnswer, ApprovalDecision } from '../types.js';
import { isPlainObject, shown } from '../util/values.js';
import { fromAgUiMessages } from './ag-ui-messages.js';

/** What one AG-UI request gives the loop: its history, the decisions its `resume` carries, and its ids. */
export interface AgUiRun {
  threadId: string;
  runId: string;
  /** The history to run the loop on (R22 resumes the calls of its last turn that have no result). */
  messages: AgentMessage[];
  /** H8: one decision per `resume` entry, for `LoopOptions.approvals.decisions`. */
  decisions: Observable<ApprovalAnswer>;
  /** The same decisions as a list. */
  answers: ApprovalAnswer[];
}

/** H8: a resume entry's answer as a decision: `{ approved, editedArgs?, reason? }`; `cancelled` denies. */
function decisionOf(entry: ResumeEntry, where: string): ApprovalDecision {
  if (entry.status === 'cancelled') return false;
  if (entry.status !== 'resolved') throw new TypeError(`fromAgUiInput: ${where}.status must be 'resolved' or 'cancelled', got ${shown(entry.status)}`);
  const payload: unknown = entry.payload;
  if (typeof payload === 'boolean') return payload;
  if (!isPlainObject(payload) || typeof payload.approved !== 'boolean') {
    throw new TypeError(`fromAgUiInput: ${where}.payload must be { approved: boolean, editedArgs?, reason? }, got ${shown(payload)}`);
  }
  if (!payload.approved) return typeof payload.reason === 'string' ? { action: 'deny', reason: payload.reason } : false;
  if (payload.editedArgs === undefined) return true;
  if (!isPlainObject(payload.editedArgs)) throw new TypeError(`fromAgUiInput: ${where}.payload.editedArgs must be an object, got ${shown(payload.editedArgs)}`);
  return { action: 'run', input: payload.editedArgs };
}

/**
 * An AG-UI request (`RunAgentInput`) as what the loop takes (U1, H8): its `messages` as the history
 * (`fromAgUiMessages`), and each `resume` entry — the answer to an interrupt `toAgUi` ended the last run with, whose
 * id is the call's — as a decision for that call: `{ approved: true }` runs it, with `editedArgs` on those, and
 * `{ approved: false, reason? }` or `status: 'cancelled'` denies it. An entry for a call the history does not hold
 * waiting is refused with an error naming it (AG-UI answers such a request with `RUN_ERROR`). `tools` (front-end
 * tools) and `state` are not read.
 *
 * ```ts
 * const run = fromAgUiInput(JSON.parse(body));
 * runEventedToolLoop({ provider, registry, messages: run.messages, approvals: { needsApproval, decisions: run.decisions } })
 *   .pipe(toAgUi({ threadId: run.threadId, runId: () => run.runId }));
 * ```
 */
export function fromAgUiInput(input: RunAgentInput): AgUiRun {
  if (!isPlainObject(input)) throw new TypeError(`fromAgUiInput: input must be a RunAgentInput object, got ${shown(input)}`);
  if (typeof input.threadId !== 'string' || input.threadId === '') throw new TypeError(`fromAgUiInput: threadId must be a non-empty string, got ${shown(input.threadId)}`);
  if (typeof input.runId !== 'string' || input.runId === '') throw new TypeError(`fromAgUiInput: runId must be a non-empty string, got ${shown(input.runId)}`);
  const messages = fromAgUiMessages(input.messages);
  const resume = input.resume ?? [];
  if (!Array.isArray(resume)) throw new TypeError(`fromAgUiInput: resume must be an array, got ${shown(resume)}`);
  // the calls R22 resumes, found as the loop finds them
  const waiting = new Set(savedTurn(messages)?.calls.flatMap((part) => (part.answered === undefined ? [part.call.id] : [])));
  const answers = resume.map((entry, i): ApprovalAnswer => {
    const where = `resume[${i}]`;
    if (!isPlainObject(entry)) throw new TypeError(`fromAgUiInput: ${where} must be an object, got ${shown(entry)}`);
    if (!waiting.has(entry.interruptId)) {
      throw new TypeError(`fromAgUiInput: ${where}.interruptId ${JSON.stringify(entry.interruptId)} names no call that waits in messages`);
    }
    return { toolCallId: entry.interruptId, decision: decisionOf(entry, where) };
  });
  return { threadId: input.threadId, runId: input.runId, messages, decisions: from(answers), answers };
}
