/**
 * A provider written from scratch: a cold Observable of events with a teardown. This one "streams"
 * the last user message back word by word, one word every `delayMs`; unsubscribing stops it, as
 * unsubscribing a real provider aborts its HTTP request.
 */
import { Observable } from 'rxjs';
import type { Provider, ProviderEvent } from '../src/index.js';

export function echoProvider(delayMs = 10): Provider {
  return ({ messages }) =>
    new Observable<ProviderEvent>((subscriber) => {
      const last = [...messages].reverse().find((message) => message.role === 'user');
      const words = (last?.content ?? '').split(/(?<= )/); // keep the spaces
      subscriber.next({ type: 'message_start' });
      let next = 0;
      const timer = setInterval(() => {
        if (next < words.length) return subscriber.next({ type: 'text_delta', text: words[next++]! });
        subscriber.next({ type: 'message_end', stopReason: 'stop' });
        subscriber.complete();
      }, delayMs);
      return () => clearInterval(timer); // the teardown: what unsubscribing cancels
    });
}
