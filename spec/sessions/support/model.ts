/**
 * A model and tools for the session specs that answer from the history alone, so that a conversation cut
 * anywhere and resumed ends exactly as one never cut: a prompt that asks the time gets two calls (`clock` and
 * `zone`), their results get an answer; any other prompt is repeated.
 */
import { Observable } from 'rxjs';
import type { Provider, ProviderEvent } from '../../../src/index.js';
import { ToolRegistry } from '../../../src/index.js';

export function historyModel(): Provider {
  return ({ messages }) => {
    const last = messages[messages.length - 1];
    let events: ProviderEvent[];
    if (last?.role === 'toolResult') {
      const results = messages.slice(messages.findLastIndex((m) => m.role === 'assistant') + 1).map((m) => m.content);
      events = [{ type: 'message_start' }, { type: 'text_delta', text: `It is ${results.join(' ')}.` }, { type: 'message_end', stopReason: 'stop' }];
    } else if (last?.role === 'user' && /time/.test(last.content)) {
      const n = messages.length;
      events = [
        { type: 'message_start' },
        { type: 'text_delta', text: 'Let me look.' },
        { type: 'tool_call', call: { id: `clock_${n}`, name: 'clock', input: {} } },
        { type: 'tool_call', call: { id: `zone_${n}`, name: 'zone', input: { city: 'Paris' } } },
        { type: 'message_end', stopReason: 'toolUse', usage: { inputTokens: inputTokens(messages), outputTokens: 5 } },
      ];
    } else {
      events = [{ type: 'message_start' }, { type: 'text_delta', text: `You said: ${last?.content ?? ''}` }, { type: 'message_end', stopReason: 'stop' }];
    }
    return new Observable<ProviderEvent>((subscriber) => {
      for (const event of events) subscriber.next(event);
      subscriber.complete();
    });
  };
}

/** What the model reports it was sent: chars/4 of the contents, plus 7 for the request's own framing. */
export function inputTokens(messages: readonly { content: string }[]): number {
  return Math.ceil(messages.reduce((sum, m) => sum + m.content.length, 0) / 4) + 7;
}

export function historyTools(): ToolRegistry {
  return new ToolRegistry()
    .register({ name: 'clock', description: 'the time', input: {}, handler: () => '12:00' })
    .register({ name: 'zone', description: 'the time zone of a city', input: { city: 'the city' }, handler: (input) => `CET (${input.city})` });
}
