import { from } from 'rxjs';
import type { Observable } from 'rxjs';
import type { UIMessage } from 'ai';
import type { AgentMessage, ApprovalAnswer, AssistantMessage, Attachment, ToolCall, ToolResultMessage } from '../types.js';
import { deniedResult } from '../hooks/tool-hooks.js';
import { abortedResult, toolErrorMessage, toolResultMessage } from '../tools/tool-result.js';
import { isPlainObject, shown } from '../util/values.js';
import { REASONING_KEY } from './to-ui-message-stream.js';

/** U2: what a `useChat` request becomes: the history to run on, and the person's answers to the calls that wait. */
export interface FromUiMessages {
  /** The history (R21-valid): the last assistant message's approved or denied calls are left without a result, for turn 0 to run (R22). */
  messages: AgentMessage[];
  /** H8: one answer a call the client approved or denied (`LoopOptions.approvals.decisions`), in message order. */
  decisions: Observable<ApprovalAnswer>;
}

/** What this reads of a tool part (`tool-NAME` or `dynamic-tool`), whatever its state. */
interface ToolPart {
  type: string;
  toolName?: string;
  toolCallId: string;
  state: string;
  input?: unknown;
  output?: unknown;
  errorText?: string;
  approval?: { approved?: boolean; reason?: string };
}

/**
 * U2, H8: the `messages` of a `useChat` request (`UIMessage[]`, as `toUiMessageStream` built them or any AI SDK
 * server did) as the loop takes them. Each user or system message's text parts are its `content` (a user's `file`
 * parts with a `url` its attachments, F1); each step of an assistant message (the parts after a `step-start`) is one
 * assistant message — its text, its calls (tool parts with an input) — followed by its results: `output-available`
 * (the output, text as it is, anything else as JSON), `output-error` (`isError`, the error text), `output-denied`
 * (`denied: not approved`). A step's reasoning is the API's blocks its reasoning parts carry (`providerMetadata.rxToolLoop.reasoning`, P10: sent
 * back as they came); the reasoning text alone is shown, never sent.
 *
 * The client's approvals come back as `decisions`: in the last message, a call in state `approval-responded` is left
 * without a result — turn 0 of the run on these `messages` (R22) takes the decision, `true` runs it, `false` (or a
 * reason) denies it — a call still `approval-requested` waits again, and a call there with its input but no output
 * (one that had not started when the message ended at an approval) runs. A call without an output in an earlier
 * message (the client stopped the run while it ran, or wrote again instead of answering) gets R11's
 * `error: aborted`, so the history stays valid. A part still `input-streaming` never became a call and is left out.
 *
 * ```ts
 * // a POST handler of useChat's DefaultChatTransport (body: { messages })
 * const { messages, decisions } = fromUiMessages(body.messages);
 * const events$ = runEventedToolLoop({ provider, registry, messages, approvals: { needsApproval, decisions } });
 * ```
 */
export function fromUiMessages(messages: readonly UIMessage[]): FromUiMessages {
  if (!Array.isArray(messages)) throw new TypeError(`fromUiMessages: messages must be an array of UIMessage (got ${shown(messages)})`);
  const history: AgentMessage[] = [];
  const decisions: ApprovalAnswer[] = [];
  messages.forEach((message: unknown, index) => {
    if (!isPlainObject(message) || !Array.isArray(message['parts'])) {
      throw new TypeError(`fromUiMessages: messages[${index}] must be a UIMessage, an object with a role and parts (got ${shown(message)})`);
    }
    const parts = message['parts'] as Record<string, unknown>[];
    const role = message['role'];
    if (role === 'system') history.push({ role: 'system', content: textOf(parts) });
    else if (role === 'user') history.push(userFromParts(parts));
    else if (role === 'assistant') assistantSteps(parts, index === messages.length - 1, history, decisions);
    else throw new TypeError(`fromUiMessages: messages[${index}].role must be 'system', 'user' or 'assistant' (got ${shown(role)})`);
  });
  return { messages: history, decisions: from(decisions) };
}

function textOf(parts: readonly Record<string, unknown>[]): string {
  let text = '';
  for (const part of parts) if (part['type'] === 'text' && typeof part['text'] === 'string') text += part['text'];
  return text;
}

function userFromParts(parts: readonly Record<string, unknown>[]): AgentMessage {
  const attachments: Attachment[] = [];
  for (const part of parts) {
    if (part['type'] !== 'file' || typeof part['url'] !== 'string' || typeof part['mediaType'] !== 'string') continue;
    const mimeType = part['mediaType'];
    const type = mimeType.startsWith('image/') ? 'image' : mimeType.startsWith('audio/') ? 'audio' : 'file';
    const attachment: Attachment = { type, mimeType, url: part['url'] };
    if (typeof part['filename'] === 'string') attachment.name = part['filename'];
    attachments.push(attachment);
  }
  const content = textOf(parts);
  return attachments.length === 0 ? { role: 'user', content } : { role: 'user', content, attachments };
}

/** P10: the API's reasoning blocks a reasoning part carries (`toUiMessageStream` puts them there). */
function reasoningBlocks(part: Record<string, unknown>): unknown[] {
  if (part['type'] !== 'reasoning' || !isPlainObject(part['providerMetadata'])) return [];
  const ours = part['providerMetadata'][REASONING_KEY];
  return isPlainObject(ours) && Array.isArray(ours['reasoning']) ? ours['reasoning'] : [];
}

function isToolPart(part: Record<string, unknown>): boolean {
  const type = part['type'];
  return typeof type === 'string' && (type === 'dynamic-tool' || type.startsWith('tool-')) && typeof part['toolCallId'] === 'string';
}

/** An assistant message's steps, each an assistant message and its results; the last message's answered approvals as decisions. */
function assistantSteps(parts: readonly Record<string, unknown>[], last: boolean, history: AgentMessage[], decisions: ApprovalAnswer[]): void {
  const steps: Record<string, unknown>[][] = [[]];
  for (const part of parts) {
    if (part['type'] === 'step-start') steps.push([]);
    else steps[steps.length - 1]!.push(part);
  }
  const lastStep = steps.length - 1;
  steps.forEach((step, at) => {
    if (at === 0 && step.length === 0) return; // the parts before the first step-start: none
    const resumes = last && at === lastStep; // only the run's last step can wait for its calls (R22)
    const calls: ToolCall[] = [];
    const results: ToolResultMessage[] = [];
    for (const raw of step) {
      if (!isToolPart(raw)) continue;
      const part = raw as unknown as ToolPart;
      if (part.state === 'input-streaming') continue;
      const name = part.type === 'dynamic-tool' ? String(part.toolName) : part.type.slice('tool-'.length);
      const call: ToolCall = { id: part.toolCallId, name, input: isPlainObject(part.input) ? part.input : {} };
      calls.push(call);
      if (part.state === 'output-available') results.push(toolResultMessage(call, { content: typeof part.output === 'string' ? part.output : JSON.stringify(part.output) ?? '' }));
      else if (part.state === 'output-error') results.push(toolErrorMessage(call, part.errorText ?? 'error'));
      else if (part.state === 'output-denied') results.push(deniedResult(call));
      else if (resumes && part.state === 'approval-responded' && part.approval !== undefined) {
        const { approved, reason } = part.approval;
        decisions.push({ toolCallId: part.toolCallId, decision: approved === true ? true : reason === undefined ? false : { action: 'deny', reason } });
      } else if (!(resumes && (part.state === 'approval-requested' || part.state === 'input-available'))) results.push(abortedResult(call)); // R11: stopped
    }
    const assistant: AssistantMessage = { role: 'assistant', content: textOf(step), stopReason: calls.length > 0 ? 'toolUse' : 'stop' };
    if (calls.length > 0) assistant.toolCalls = calls;
    const reasoning = step.flatMap(reasoningBlocks);
    if (reasoning.length > 0) assistant.reasoning = reasoning;
    history.push(assistant, ...results);
  });
}
