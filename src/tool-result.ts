import type { ToolCall, ToolOutput, ToolResultMessage } from './types.js';

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

export function errorText(error: unknown): string {
  // by shape, not `instanceof`: errors from another realm (a vm context, jest's sandbox) count too
  if (isErrorLike(error)) return error.message || error.name || 'unknown error';
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

/** A handler's value as a `ToolOutput`; anything else is a tool failure with a clear message. */
export function toToolOutput(value: unknown): ToolOutput {
  if (typeof value === 'string') return { content: value };
  if (typeof value === 'object' && value !== null && typeof (value as ToolOutput).content === 'string') {
    return value as ToolOutput;
  }
  const kind = typeof value === 'object' && value !== null && !Array.isArray(value) ? 'an object without a string content' : kindOf(value);
  throw new TypeError(`tool returned ${kind}; expected a string or { content: string }`);
}

/** `null`, `an array`, `a string`, `a Map`…: what a value is, for an error message. */
export function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  if (typeof value !== 'object') return `a ${typeof value}`;
  const name: unknown = Object.getPrototypeOf(value)?.constructor?.name;
  return typeof name === 'string' && name !== 'Object' && name !== '' ? `a ${name}` : 'an object';
}

function isErrorLike(value: unknown): value is { message: string; name?: string } {
  return typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string';
}
