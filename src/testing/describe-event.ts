import { OperatorFunction, map } from 'rxjs';
import type { ConversationEvent, ProviderEvent } from '../types.js';
import { eventLine } from '../util/event-line.js';
import { argumentError, checkRecord } from './arguments.js';

/**
 * One short, stable line per event (T2) — the words of the project's marble diagrams:
 *
 * | event | line |
 * |---|---|
 * | `turn_start` | `turn_start 1`; a turn that asks for the typed answer (J2): `turn_start 3 answer` |
 * | `message_start`, `message_end` | `message_start`, `message_end toolUse` (the stop reason only) |
 * | `text_delta` | `text_delta hi` |
 * | `tool_call` | `tool_call search {"q":"rx"}` (the input as JSON; none for `{}`: `tool_call slow`) |
 * | `tool_start` | `tool_start search {"q":"rx"}` (the input the tool runs on, after a hook's edit) |
 * | `tool_approval` | `tool_approval transfer {"n":"1"}` (H8: the call waits for a person, on the input it would run on) |
 * | `tool_call_delta` | `tool_call_delta slow: {"pa` (the call's name when the event has it, else `#INDEX`) |
 * | `reasoning_delta` | `reasoning_delta TEXT` |
 * | `tool_update` | `tool_update slow: 50%`; one an agent tool forwards (A4): `tool_update researcher: tool_call search`, the inner event's line |
 * | `tool_result` | `tool_result search: 3 hits`, `tool_result slow: error: boom (isError)`; with attachments (F4) a line each: `tool_result chart: drawn [image image/png, 1234 bytes]` |
 * | `turn_end` | `turn_end 1 (toolUse): user, assistant "hm"[slow,fast], toolResult slow, toolResult fast` |
 * | `loop_end` | `loop_end stop`; with a typed answer (J2): `loop_end stop {"city":"Oslo"}` (its JSON, shortened as a payload) |
 * | `user_message` | `user_message what time is it?` (a conversation's prompt, C1); with attachments as `tool_result` |
 * | `prompt_dropped` | `prompt_dropped what time is it?` (a prompt a stop dropped, left open (a)) |
 *
 * A failed turn shows its error: `turn_end 2 (error: overloaded): …`. Payloads are in the lines (R32), so a
 * scenario whose call input or tool result changes fails: an input or a result's content longer than 60
 * characters reads as its first 48, `…` and a hash of the whole text
 * (`tool_call read {"path":"docs/a-very-long-name-for-a-file-that-g… #a3902ed4`),
 * which still changes with any edit. An input JSON cannot write (a cycle) reads as its kind: `tool_call x (an object)`.
 * `turn_end` keeps to the history's shape. Anything that is not an event throws
 * a `TypeError` that names it: `describeEvent: event must be a loop or conversation event (got null)`.
 */
export function describeEvent(event: ConversationEvent): string {
  if (typeof event !== 'object' || event === null || typeof (event as { type?: unknown }).type !== 'string') {
    throw argumentError('describeEvent', 'event must be a loop or conversation event', event);
  }
  try {
    return eventLine(event);
  } catch {
    // a known type without its fields (a tool_call without its call, …)
    throw argumentError('describeEvent', `event is not a well-formed ${event.type} event`, event);
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
