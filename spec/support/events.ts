import type { Observable } from 'rxjs';
import type { ConversationEvent, LoopEvent, LoopEventOf, ProviderEvent, Tool, ToolCall } from '../../src/index.js';

import { call, end, start, text } from '../../src/testing/index.js';

/** Provider event builders: the testing kit's, so that specs, marbles and users build events one way. */
export { call, end, start, text };
export const callOf = (id: string, name: string, input: Record<string, unknown> = {}): ToolCall => ({ id, name, input });

/** A whole turn that asks for the given calls. */
export const toolTurn = (...calls: ProviderEvent[]): ProviderEvent[] => [start, ...calls, end('toolUse')];
/** A whole turn that answers with text. */
export const answerTurn = (answer: string): ProviderEvent[] => [start, text(answer), end('stop')];

export const tool = (name: string, handler: Tool['handler'], input: Record<string, string> = {}): Tool => ({
  name,
  description: `the ${name} tool`,
  input,
  handler,
});

export function only<T extends ConversationEvent['type']>(events: readonly ConversationEvent[], type: T): Extract<ConversationEvent, { type: T }>[] {
  return events.filter((event): event is Extract<ConversationEvent, { type: T }> => event.type === type);
}

export function loopEndOf(events: readonly LoopEvent[]): LoopEventOf<'loop_end'> {
  const last = events[events.length - 1];
  if (last?.type !== 'loop_end') throw new Error(`the last event is ${last?.type ?? 'missing'}, not loop_end`);
  return last;
}

/** Subscribes and collects; `completed` stays live. Fails the test if the Observable errors. */
export function collectSync<T>(source: Observable<T>): { values: T[]; completed: boolean } {
  const result = { values: [] as T[], completed: false };
  source.subscribe({
    next: (value) => result.values.push(value),
    error: (error: unknown) => {
      throw new Error(`the Observable errored: ${String(error)}`);
    },
    complete: () => (result.completed = true),
  });
  return result;
}
