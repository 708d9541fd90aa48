import { describeFailure, failureResult, toToolOutput, toolErrorMessage, toolResultMessage } from './tool-result.js';
import type { LoopEventOf, ToolCall, ToolResultMessage } from '../types.js';

/** R23: the handler is about to run. */
export type ToolStart = LoopEventOf<'tool_start'>;

/** Progress of a running tool (R14): a `toolProgress` value, or a value that a later one showed was not the last. */
export type ToolUpdate = LoopEventOf<'tool_update'>;

/**
 * How a call ended: its result message. Not a loop event (the loop emits the message as `tool_result`);
 * `terminate` stays inside the loop, the model never sees it.
 */
export interface ToolSettled {
  type: 'settled';
  message: ToolResultMessage;
  terminate: boolean;
}

/** H8: the call waits for a person's decision (the loop announces it as `tool_approval`, with the history to save). */
export interface ToolAwaiting {
  type: 'approval';
  call: ToolCall;
}

/** What running one call reports: its start (or its wait for a decision, H8), its progress, and last how it ended. */
export type ToolProgress = ToolStart | ToolUpdate | ToolSettled | ToolAwaiting;

export function settled(message: ToolResultMessage, terminate = false): ToolSettled {
  return { type: 'settled', message, terminate };
}

/** A value a tool (or a hook) gave as the result; a value that is no result is a failure that says why. */
export function resultOf(call: ToolCall, value: unknown): ToolSettled {
  try {
    const output = toToolOutput(value);
    return settled(toolResultMessage(call, output), output.terminate === true);
  } catch (error) {
    return failed(call, error);
  }
}

/** R9, R25: `error: MESSAGE`, the cause kept in `details.error` — but a timeout is the loop's own deadline, with no cause to keep. */
export function failed(call: ToolCall, error: unknown): ToolSettled {
  if (error instanceof ToolTimeout) return settled(toolErrorMessage(call, describeFailure(error)));
  return settled(failureResult(call, error));
}

/** R16: the tool ran past `toolTimeoutMs`. */
export class ToolTimeout extends Error {
  override name = 'ToolTimeout';
}
