/**
 * The textbook loop: the tool loop as a learner first writes it — `expand` while the stop reason is
 * `toolUse`, `take(maxTurns)` for the cap, each tool's failure caught into a result message — in a few
 * dozen lines. It emits the library's own events (`turn_start`, the provider's events, `tool_result`,
 * `turn_end`, `loop_end`), so the same marble diagrams describe it, and
 * `spec/examples/textbook-loop.spec.ts` runs it beside `runEventedToolLoop` on the same scenarios.
 *
 * It is here to be read, not used. On the simple scenarios its output is the library's, frame for
 * frame; where it fails is why the library is built the way it is:
 *
 * - R8, the cap. `take(maxTurns)` can only count a turn that already exists: `expand` hands the N-th
 *   `turn_end` downstream and *then* starts turn N+1, so the provider is subscribed an (N+1)-th time
 *   and torn down at once (for an HTTP provider: a request sent and aborted). The library decides
 *   whether to go on before it creates the next turn.
 * - R12, the stack. With a synchronous provider and tools, each turn is subscribed from inside the last
 *   event of the one before, so the call stack grows with every turn until it overflows (in turn 134
 *   in the spec, on Node 20), and the loop stops without `loop_end`, error or completion: rxjs catches
 *   the `RangeError`, has no stack left to deliver it, and drops it. The library subscribes each next
 *   turn from a trampoline of its own (`Trampoline`, a queue scheduler per loop): still synchronous, but a flat stack.
 * - R4, the history. `toArray()` collects the results in completion order; the library keeps one slot
 *   per call, so each result follows its request (call order), as every provider API requires.
 * - R10, R11, failures and cancellation. A provider that errors errors the whole loop, and there is no
 *   `signal`: the library ends such a turn as a message (`error`, `aborted`) and keeps the history
 *   sendable.
 */
import { EMPTY, Observable, defer, expand, mergeMap, map, take, tap, toArray } from 'rxjs';
import { MAX_TURNS } from '../src/index.js';
import type { AgentMessage, AssistantMessage, LoopEvent, LoopEventOf, LoopOptions, ToolResultMessage } from '../src/index.js';

type TurnEnd = LoopEventOf<'turn_end'>;

export function textbookLoop({
  provider,
  registry,
  messages,
  maxTurns = MAX_TURNS,
}: Pick<LoopOptions, 'provider' | 'registry' | 'messages' | 'maxTurns'>): Observable<LoopEvent> {
  return new Observable<LoopEvent>((out) => {
    // one turn: one provider call, its events passed on as they come, each tool started at its call;
    // it emits one value, its turn_end, once the provider and every tool have finished
    const runTurn = (turn: number, history: readonly AgentMessage[]): Observable<TurnEnd> =>
      defer(() => {
        out.next({ type: 'turn_start', turn });
        const assistant: AssistantMessage = { role: 'assistant', content: '', stopReason: 'error' };
        const done: ToolResultMessage[] = [];
        return provider({ messages: history, tools: registry.getSpecs() }).pipe(
          tap((event) => {
            out.next(event);
            if (event.type === 'text_delta') assistant.content += event.text;
            if (event.type === 'tool_call') assistant.toolCalls = [...(assistant.toolCalls ?? []), event.call];
            if (event.type === 'message_end') assistant.stopReason = event.stopReason;
          }),
          // registry.run is where each tool's catchError lives: a failure comes out as a result message
          mergeMap((event) => (event.type === 'tool_call' ? registry.run(event.call) : EMPTY)),
          tap((message) => {
            done.push(message);
            out.next({ type: 'tool_result', message, messages: [...history, assistant, ...done] });
          }),
          toArray(), // the results, in completion order
          map((toolResults): TurnEnd => {
            const after = [...history, assistant, ...toolResults];
            return { type: 'turn_end', turn, assistant, toolResults, messages: after, usage: { inputTokens: 0, outputTokens: 0 } };
          }),
        );
      });

    // the pipeline carries one value per turn, its turn_end, so that take(maxTurns) counts turns;
    // every other event goes straight to `out` as it happens
    let last: TurnEnd | undefined;
    return runTurn(1, messages)
      .pipe(
        expand((end) => (end.assistant.stopReason === 'toolUse' ? runTurn(end.turn + 1, end.messages) : EMPTY)),
        take(maxTurns),
      )
      .subscribe({
        next(end) {
          last = end;
          out.next(end);
        },
        error: (error: unknown) => out.error(error),
        complete() {
          if (last !== undefined) {
            const { assistant, messages: history } = last;
            const reason = assistant.stopReason === 'toolUse' ? 'maxTurns' : assistant.stopReason;
            out.next({ type: 'loop_end', reason, assistant, messages: history, usage: last.usage });
          }
          out.complete();
        },
      });
  });
}
