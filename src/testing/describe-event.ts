import { OperatorFunction, map } from 'rxjs';
import type { AgentMessage, AssistantMessage, ConversationEvent, ProviderEvent } from '../types.js';
import { argumentError, checkRecord } from './arguments.js';

/**
 * One short, stable line per event (T2) — the words of the project's marble diagrams:
 *
 * | event | line |
 * |---|---|
 * | `turn_start` | `turn_start 1` |
 * | `message_start`, `message_end` | `message_start`, `message_end toolUse` (the stop reason only) |
 * | `text_delta` | `text_delta hi` |
 * | `tool_call` | `tool_call slow` |
 * | `tool_start` | `tool_start slow` |
 * | `tool_call_delta` | `tool_call_delta slow: {"pa` (the call's name when the event has it, else `#INDEX`) |
 * | `reasoning_delta` | `reasoning_delta TEXT` |
 * | `tool_update` | `tool_update slow: 50%` |
 * | `tool_result` | `tool_result slow: S`, `tool_result slow: error: boom (isError)` |
 * | `turn_end` | `turn_end 1 (toolUse): user, assistant "hm"[slow,fast], toolResult slow, toolResult fast` |
 * | `loop_end` | `loop_end stop` |
 * | `user_message` | `user_message what time is it?` (a conversation's prompt, C1) |
 * | `prompt_dropped` | `prompt_dropped what time is it?` (a prompt a stop dropped, left open (a)) |
 *
 * A failed turn shows its error: `turn_end 2 (error: overloaded): …`. Anything that is not an event throws
 * a `TypeError` that names it: `describeEvent: event must be a loop or conversation event (got null)`.
 */
export function describeEvent(event: ConversationEvent): string {
  if (typeof event !== 'object' || event === null || typeof (event as { type?: unknown }).type !== 'string') {
    throw argumentError('describeEvent', 'event must be a loop or conversation event', event);
  }
  try {
    return line(event);
  } catch {
    // a known type without its fields (a tool_call without its call, …)
    throw argumentError('describeEvent', `event is not a well-formed ${event.type} event`, event);
  }
}

function line(event: ConversationEvent): string {
  // a prompt a conversation's abort$ dropped (version 2, left open a): the text, so a test can see it is not lost
  const loose = event as { type: string; message?: { content?: unknown } };
  if (loose.type === 'prompt_dropped' && typeof loose.message?.content === 'string') return `prompt_dropped ${loose.message.content}`;
  switch (event.type) {
    case 'turn_start':
      return `turn_start ${event.turn}`;
    case 'message_start':
      return 'message_start';
    case 'text_delta':
      return `text_delta ${event.text}`;
    case 'tool_call':
      return `tool_call ${event.call.name}`;
    case 'tool_start':
      return `tool_start ${event.call.name}`;
    case 'tool_call_delta':
      return `tool_call_delta ${event.name ?? `#${event.index}`}: ${event.argumentsDelta}`;
    case 'reasoning_delta':
      return `reasoning_delta ${event.text}`;
    case 'message_end':
      return `message_end ${event.stopReason}`;
    case 'tool_update':
      return `tool_update ${event.toolName}: ${event.content}`;
    case 'tool_result':
      return `tool_result ${event.message.toolName}: ${event.message.content}${event.message.isError ? ' (isError)' : ''}`;
    case 'turn_end':
      return `turn_end ${event.turn} (${why(event.assistant)}): ${event.messages.map(brief).join(', ')}`;
    case 'loop_end':
      return `loop_end ${event.reason}`;
    case 'user_message':
      return `user_message ${event.message.content}`;
    case 'prompt_dropped':
      return `prompt_dropped ${event.message.content}`;
    default:
      // `as never`: an event type added to ConversationEvent later still compiles here, and reads as unknown
      return unknownEvent(event as never);
  }
}

/**
 * The loop's events as {@link describeEvent} lines: the values of a marble expectation.
 *
 * ```ts
 * expectObservable(runEventedToolLoop(options).pipe(described)).toBe('1s-e(EL|)', legend);
 * ```
 */
export const described: OperatorFunction<ConversationEvent, string> = map(describeEvent);

/**
 * The legend of a loop line: the provider's letters, described as the loop re-emits them, plus the
 * loop's own letters (which win where a letter is in both).
 *
 * ```ts
 * const events = { s: start, e: end('stop') };
 * loopLegend(events, { 1: 'turn_start 1', L: 'loop_end stop' });
 * // { s: 'message_start', e: 'message_end stop', 1: 'turn_start 1', L: 'loop_end stop' }
 * ```
 */
export function loopLegend(providerValues: Record<string, ProviderEvent>, loopValues: Record<string, string>): Record<string, string> {
  checkRecord('loopLegend', 'providerValues', providerValues);
  checkRecord('loopLegend', 'loopValues', loopValues);
  for (const [letter, value] of Object.entries(loopValues)) {
    if (typeof value !== 'string') throw argumentError('loopLegend', `loopValues.${letter} must be a describeEvent line (a string)`, value);
  }
  const legend: Record<string, string> = {};
  for (const [letter, event] of Object.entries(providerValues)) {
    if (typeof event !== 'object' || event === null || typeof (event as { type?: unknown }).type !== 'string') {
      throw argumentError('loopLegend', `providerValues.${letter} must be a provider event`, event);
    }
    legend[letter] = describeEvent(event);
  }
  return Object.assign(legend, loopValues);
}

function why({ stopReason, errorMessage }: AssistantMessage): string {
  return errorMessage === undefined ? stopReason : `${stopReason}: ${errorMessage}`;
}

/** `system`, `user`, `assistant "text"[tool,tool]`, `toolResult tool`: the shape of the history. */
function brief(message: AgentMessage): string {
  switch (message.role) {
    case 'system':
      return 'system';
    case 'user':
      return 'user';
    case 'assistant': {
      const content = message.content === '' ? '' : ` "${message.content}"`;
      const calls = message.toolCalls === undefined ? '' : `[${message.toolCalls.map((c) => c.name).join(',')}]`;
      return `assistant${content}${calls}`;
    }
    case 'toolResult':
      return `toolResult ${message.toolName}`;
  }
}

function unknownEvent(event: never): string {
  return `unknown event ${JSON.stringify((event as { type?: unknown }).type)}`;
}
