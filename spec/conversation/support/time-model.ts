/**
 * A model and tools that answer from the history alone, so that a run cut anywhere and resumed ends as one never
 * cut: a prompt that asks the time gets two calls (`clock`, `zone`), their results get an answer.
 */
import { NEVER, Observable } from 'rxjs';
import type { Provider, ProviderEvent } from '../../../src/index.js';
import { ToolRegistry } from '../../../src/index.js';

export function timeModel(): Provider {
  return ({ messages }) => {
    const last = messages[messages.length - 1];
    let events: ProviderEvent[];
    if (last?.role === 'toolResult') {
      const results = messages.slice(messages.findLastIndex((m) => m.role === 'assistant') + 1).map((m) => m.content);
      events = [{ type: 'message_start' }, { type: 'text_delta', text: `It is ${results.join(' ')}.` }, { type: 'message_end', stopReason: 'stop' }];
    } else {
      events = [
        { type: 'message_start' },
        { type: 'text_delta', text: 'Let me look.' },
        { type: 'tool_call', call: { id: 'clock_1', name: 'clock', input: {} } },
        { type: 'tool_call', call: { id: 'zone_1', name: 'zone', input: { city: 'Paris' } } },
        { type: 'message_end', stopReason: 'toolUse', usage: { inputTokens: 12, outputTokens: 5 } },
      ];
    }
    return new Observable<ProviderEvent>((subscriber) => {
      for (const event of events) subscriber.next(event);
      subscriber.complete();
    });
  };
}

/** `clock` and `zone`; with `stuck`, `clock` runs until it is unsubscribed (a process that dies mid-tool). */
export function timeTools(stuck = false): ToolRegistry {
  return new ToolRegistry()
    .register({ name: 'clock', description: 'the time', input: {}, handler: () => (stuck ? NEVER : '12:00') })
    .register({ name: 'zone', description: 'the time zone of a city', input: { city: 'the city' }, handler: (input) => `CET (${input.city})` });
}
