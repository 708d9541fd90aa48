/**
 * The loop inside an RxJS app: prompts in, events out. `conversation()` runs one loop per prompt and carries
 * the history from each to the next; a prompt that arrives while a loop runs waits for it (policy `'queue'`,
 * the default). `takeUntil(stop$)` ends the conversation, tearing down the running loop's provider call and
 * tools; pass `signal` instead to end it with that loop's `loop_end` `aborted`, its turn kept in the history.
 */
import { Observable, takeUntil } from 'rxjs';
import { ConversationEvent, Provider, ToolRegistry, conversation } from '../src/index.js';

export function chat(prompts$: Observable<string>, stop$: Observable<unknown>, provider: Provider): Observable<ConversationEvent> {
  const registry = new ToolRegistry().register({
    name: 'current_time',
    description: 'Returns the current time as an ISO 8601 string',
    input: {},
    handler: () => new Date().toISOString(),
  });
  return prompts$.pipe(conversation({ provider, registry }), takeUntil(stop$));
}
