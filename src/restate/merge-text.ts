import type { ProviderEvent } from '../types.js';

/**
 * D1: a reply as it is journaled — consecutive `text_delta`s joined into one, every other event as it came.
 * Journaling every token is what makes a journal grow past an engine's limits; the joined text is the same.
 *
 * ```ts
 * mergeText([start, text('Hel'), text('lo'), end('stop')]); // [start, text('Hello'), end('stop')]
 * ```
 */
export function mergeText(events: readonly ProviderEvent[]): ProviderEvent[] {
  const merged: ProviderEvent[] = [];
  for (const event of events) {
    const last = merged[merged.length - 1];
    if (event.type === 'text_delta' && last?.type === 'text_delta') merged[merged.length - 1] = { type: 'text_delta', text: last.text + event.text };
    else merged.push(event);
  }
  return merged;
}
