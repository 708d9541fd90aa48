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
  return message;
}

/** A failed result: the text says what went wrong, so the model can react on its next turn. */
export function toolErrorMessage(call: ToolCall, content: string): ToolResultMessage {
  return toolResultMessage(call, { content, isError: true });
}

/** `error: MESSAGE` for anything thrown, rejected or sent as an Observable error (R9). */
export function describeFailure(error: unknown): string {
  return `error: ${errorText(error)}`;
}

/** A handler's value as a `ToolOutput`; anything else is a tool failure with a clear message. */
export function toToolOutput(value: unknown): ToolOutput {
  if (typeof value === 'string') return { content: value };
  if (typeof value === 'object' && value !== null && typeof (value as ToolOutput).content === 'string') {
    return value as ToolOutput;
  }
  const kind = isPlainObject(value) ? 'an object without a string content' : kindOf(value);
  throw new TypeError(`tool returned ${kind}; expected a string or { content: string }`);
}

/** R11: the result of a call that the loop tore down before it finished (or before it started). */
export function abortedResult(call: ToolCall): ToolResultMessage {
  return toolErrorMessage(call, 'error: aborted');
}
