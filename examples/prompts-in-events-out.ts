/**
 * The loop inside an RxJS app: prompts in, events out, `takeUntil` to cancel.
 * Each prompt continues the conversation where the previous loop ended (`loop_end.messages`).
 */
import { Observable, mergeScan, takeUntil } from 'rxjs';
import { LoopEvent, Provider, ToolRegistry, runEventedToolLoop } from '../src/index.js';

export function conversation(prompts$: Observable<string>, stop$: Observable<unknown>, provider: Provider): Observable<LoopEvent> {
  const registry = new ToolRegistry().register({
    name: 'current_time',
    description: 'Returns the current time as an ISO 8601 string',
    input: {},
    handler: () => new Date().toISOString(),
  });

  return prompts$.pipe(
    // one loop at a time; the accumulator is the last event seen, i.e. the previous loop's loop_end
    mergeScan(
      (last: LoopEvent | undefined, prompt: string) =>
        runEventedToolLoop({
          provider,
          registry,
          messages: [...(last?.type === 'loop_end' ? last.messages : []), { role: 'user', content: prompt }],
        }),
      undefined,
      1,
    ),
    takeUntil(stop$), // unsubscribes the running loop: its provider call and tools are torn down
  );
}
