import type { ProviderEvent, StopReason, Usage } from '../types.js';
import { isPlainObject } from '../util/values.js';
import { argumentError, checkString } from './arguments.js';

/**
 * Provider events by name, so that a test's legend reads like the turn it plays. One source of these
 * events for everyone: the kit's users, the project's marbles and its specs.
 *
 * ```ts
 * const events = { s: start, h: text('Let me check.'), c: call('weather', { city: 'Paris' }), u: end('toolUse') };
 * const turn1 = cold('-s-h-c-u|', events);
 * ```
 */
export const start: ProviderEvent = Object.freeze({ type: 'message_start' });

/** A `text_delta`. */
export function text(t: string): ProviderEvent {
  checkString('text', 't', t);
  return { type: 'text_delta', text: t };
}

/**
 * A `tool_call` of the tool `name`; its id is the name unless given, so that one call per tool needs none. The
 * input goes as given, unchecked, so that a test can send what a hostile model sends (`null`, an array: R17).
 */
export function call(name: string, input: Record<string, unknown> = {}, id: string = name): ProviderEvent {
  if (typeof name !== 'string' || name === '') throw argumentError('call', 'name must be a non-empty string', name);
  if (typeof id !== 'string' || id === '') throw argumentError('call', 'id must be a non-empty string', id);
  return { type: 'tool_call', call: { id, name, input } };
}

/** What `end` may add to `message_end`. */
export interface EndExtra {
  errorMessage?: string;
  usage?: Usage;
}

/** A `message_end` with its stop reason (and an `errorMessage`, for `error`; the call's `usage`, R27). */
export function end(reason: StopReason, extra: EndExtra = {}): ProviderEvent {
  if (!STOP_REASONS.includes(reason)) throw argumentError('end', `reason must be one of ${STOP_REASONS.join(', ')}`, reason);
  if (!isPlainObject(extra as unknown)) throw argumentError('end', 'extra must be an object', extra);
  if (extra.errorMessage !== undefined) checkString('end', 'extra.errorMessage', extra.errorMessage);
  if (extra.usage !== undefined && !isPlainObject(extra.usage)) throw argumentError('end', 'extra.usage must be a Usage object', extra.usage);
  const event: Extract<ProviderEvent, { type: 'message_end' }> = { type: 'message_end', stopReason: reason };
  if (extra.errorMessage !== undefined) event.errorMessage = extra.errorMessage;
  if (extra.usage !== undefined) event.usage = extra.usage;
  return event;
}

const STOP_REASONS: readonly StopReason[] = ['stop', 'toolUse', 'length', 'error', 'aborted'];
