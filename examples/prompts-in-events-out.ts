/**
 * The loop inside an RxJS app: prompts in, events out, `takeUntil` to cancel.
 * Each prompt continues the conversation where the previous loop ended (`loop_end.messages`).
 */
import { Observable, concatMap, defer, takeUntil, tap } from 'rxjs';
import { AgentMessage, LoopEvent, Provider, ToolRegistry, runEventedToolLoop } from '../src/index.js';

export function conversation(prompts$: Observable<string>, stop$: Observable<unknown>, provider: Provider): Observable<LoopEvent> {
  const registry = new ToolRegistry().register({
    name: 'current_time',
    description: 'Returns the current time as an ISO 8601 string',
    input: {},
    handler: () => new Date().toISOString(),
  });

  return defer(() => {
    let history: readonly AgentMessage[] = []; // this subscription's conversation
    return prompts$.pipe(
      // one loop at a time: a prompt that arrives meanwhile waits for the running loop to end
      concatMap((prompt) =>
        runEventedToolLoop({ provider, registry, messages: [...history, { role: 'user', content: prompt }] }),
      ),
      tap((event) => {
        if (event.type === 'loop_end') history = event.messages;
      }),
      takeUntil(stop$), // unsubscribes the running loop: its provider call and its tools are torn down
    );
  });
}
