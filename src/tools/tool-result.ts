import { attachmentsProblem } from '../util/attachments.js';
import { errorText, isPlainObject, kindOf } from '../util/values.js';
import type { ToolCall, ToolOutput, ToolResultMessage } from '../types.js';

/** The result message the model reads for `call`, from what its tool produced. */
export function toolResultMessage(call: ToolCall, output: ToolOutput): ToolResultMessage {
  const message: ToolResultMessage = {
    role: 'toolResult',
    toolCallId: call.id,
    toolName: call.name,
    content: output.content,
    isError: output.isError === true,
  };
  if (output.details !== undefined) message.details = output.details;
  if (output.attachments !== undefined && output.attachments.length > 0) message.attachments = output.attachments;
  return message;
}

/** A failed result: the text says what went wrong, so the model can react on its next turn. */
export function toolErrorMessage(call: ToolCall, content: string): ToolResultMessage {
  return toolResultMessage(call, { content, isError: true });
}

/** `error: MESSAGE` for anything thrown, rejected or sent as an Observable error (R9); `error: WHAT MESSAGE` with a prefix (H4). */
export function describeFailure(error: unknown, what = ''): string {
  return `error: ${what}${errorText(error)}`;
}

/** What a failure result keeps of its cause (R25): plain JSON, so that a history stays saveable. */
export interface FailureCause {
  name: string;
  message: string;
  stack?: string;
}

/**
 * The result of a call whose tool threw, rejected or errored (R9, R25): the model reads `error: MESSAGE`;
 * the application finds the cause in `details.error`, stack included, which no model ever sees.
 *
 * ```ts
 * failureResult(call, new TypeError('bad')); // { content: 'error: bad', isError: true, details: { error: { name: 'TypeError', message: 'bad', stack } } }
 * failureResult(call, 'plain');              // details.error: { name: 'Error', message: 'plain' }
 * failureResult(call, error, 'afterToolCall failed: '); // content: 'error: afterToolCall failed: bad' (H4)
 * ```
 */
export function failureResult(call: ToolCall, error: unknown, what = ''): ToolResultMessage {
  return toolResultMessage(call, { content: describeFailure(error, what), isError: true, details: { error: causeOf(error) } });
}

/** R25: the JSON that a failure result keeps of what was thrown. */
export function causeOf(error: unknown): FailureCause {
  const { name, message, stack } = (typeof error === 'object' && error !== null ? error : {}) as { name?: unknown; message?: unknown; stack?: unknown };
  if (typeof message !== 'string') return { name: 'Error', message: errorText(error) };
  const cause: FailureCause = { name: typeof name === 'string' && name !== '' ? name : 'Error', message };
  if (typeof stack === 'string') cause.stack = stack;
  return cause;
}

/** What a tool (or a hook, H2, H3) may give as a result: a string or `{ content: string }`. */
export function isToolOutput(value: unknown): value is string | ToolOutput {
  return typeof value === 'string' || (typeof value === 'object' && value !== null && typeof (value as ToolOutput).content === 'string');
}

/**
 * A handler's value as a `ToolOutput`; anything else is a tool failure with a clear message — an invalid
 * attachment too (F1): `error: attachments[0].data must be standard base64 text (got …)`.
 */
export function toToolOutput(value: unknown): ToolOutput {
  if (typeof value === 'string') return { content: value };
  if (isToolOutput(value)) {
    const output = value as ToolOutput;
    if (output.attachments !== undefined) {
      const problem = attachmentsProblem(output.attachments);
      if (problem !== undefined) throw new TypeError(problem);
    }
    return output;
  }
  const kind = isPlainObject(value) ? 'an object without a string content' : kindOf(value);
  throw new TypeError(`tool returned ${kind}; expected a string or { content: string }`);
}

/** R11: the result of a call that the loop tore down before it finished (or before it started). */
export function abortedResult(call: ToolCall): ToolResultMessage {
  return toolErrorMessage(call, 'error: aborted');
}

/**
 * R26: a result whose content is longer than `max` UTF-16 code units keeps its first `max` and says how
 * much was cut; `details` stays whole.
 *
 * ```ts
 * limitOutput({ ...result, content: 'abcdef' }, 4).content; // 'abcd\n[truncated: 2 more characters]'
 * ```
 */
export function limitOutput(message: ToolResultMessage, max: number): ToolResultMessage {
  if (message.content.length <= max) return message;
  const more = message.content.length - max;
  return { ...message, content: `${message.content.slice(0, max)}\n[truncated: ${more} more characters]` };
}
