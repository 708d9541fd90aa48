import { Observable, Subscription, from } from 'rxjs';
import { EventOrder, ProviderProtocolError } from '../providers/check-provider-events.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import { ToolQueue } from '../tools/tool-queue.js';
import { TurnDraft, TurnOutcome } from './turn-draft.js';
import type { AgentMessage, LoopEvent, Provider, ProviderEvent } from '../types.js';

/** The loop's options, checked once per `runEventedToolLoop` call. */
export interface LoopSettings {
  provider: Provider;
  registry: ToolRegistry;
  maxTurns: number;
  /** How many tools of a turn may run at once: 1 in sequential mode. */
  concurrency: number;
  toolTimeoutMs: number;
  signal: AbortSignal | undefined;
}

/**
 * One turn. It hands its events to `emit` as they happen: `turn_start`, the events of one provider
 * call as they arrive (R2), the tools' progress and results — each tool started as soon as its
 * `tool_call` arrives (R3) — and, once the provider has finished and every tool has too, `turn_end`
 * with the history after the turn (R4, R5). Then it emits what the turn came to, for the loop to decide
 * whether to go on, and completes.
 *
 * ```text
 * provider:   -s-c-----e|          s = message_start, c = tool_call, e = message_end(toolUse)
 * tool:          ---r|             (starts with c)
 * emit:      Ts-c---r--eE          T = turn_start, r = tool_result, E = turn_end
 * runTurn:   ----------(o|)        o = the turn's outcome
 * ```
 *
 * A provider that errors or breaks the event order ends the turn with stop reason `error`; the tools
 * it already asked for still finish (R10). The loop's `signal` stops the provider and every tool, and
 * the turn still ends, with stop reason `aborted` (R11). Unsubscribing tears everything down.
 *
 * It is one hand-written Observable rather than a chain of operators, and its events go straight to
 * `emit` rather than down the loop's pipeline: an agent turn streams many small events, and every
 * layer between the provider and the consumer would cost each of them (see bench/).
 */
export function runTurn(
  turn: number,
  history: AgentMessage[],
  loop: LoopSettings,
  emit: (event: LoopEvent) => void,
): Observable<TurnOutcome> {
  return new Observable<TurnOutcome>((subscriber) => {
    const draft = new TurnDraft(turn, history);
    const order = new EventOrder();
    let streaming = true; // the provider has not finished yet
    let provider: Subscription | undefined;

    // A consumer may abort while an event is being delivered to it (say, in a `tap`). The turn then
    // ends once that delivery is over, so that its last events do not overtake the one in flight.
    let delivering = 0;
    let endWanted = false;
    const deliver = (event: LoopEvent) => {
      delivering++;
      emit(event);
      if (--delivering === 0 && endWanted) end();
    };

    let ended = false;
    const end = () => {
      if (streaming || !tools.idle || ended || subscriber.closed) return;
      if (delivering > 0) {
        endWanted = true;
        return;
      }
      ended = true; // an abort while turn_end is being delivered belongs to the loop, not to this turn
      const { events, outcome } = draft.finish();
      for (const event of events) emit(event);
      subscriber.next(outcome);
      subscriber.complete();
    };

    const stopStreaming = () => {
      streaming = false;
      provider?.unsubscribe();
    };

    const tools = new ToolQueue(loop.registry, loop.concurrency, loop.toolTimeoutMs, {
      progress(index, progress) {
        if (progress.type === 'tool_update') return deliver(progress);
        draft.settle(index, progress);
        deliver({ type: 'tool_result', message: progress.message });
      },
      idle: end,
    });

    const onAbort = () => {
      draft.abort();
      stopStreaming();
      tools.stop();
      end();
    };

    const teardown = () => {
      stopStreaming();
      tools.stop();
      loop.signal?.removeEventListener('abort', onAbort);
    };

    deliver({ type: 'turn_start', turn });
    if (subscriber.closed) return teardown; // the consumer left at turn_start: no model call
    if (loop.signal?.aborted) {
      onAbort();
      return teardown;
    }
    loop.signal?.addEventListener('abort', onAbort, { once: true });

    let events: Observable<ProviderEvent>;
    try {
      events = from(loop.provider({ messages: history.slice(), tools: loop.registry.getSpecs() }));
    } catch (error) {
      draft.fail(error);
      stopStreaming();
      end();
      return teardown;
    }
    // cancelled while the provider function ran (it aborted the signal, say): do not subscribe
    if (!streaming || subscriber.closed) return teardown;

    provider = events.subscribe({
      next(event) {
        // a synchronous provider can go on emitting after we stopped it, or after the consumer left
        if (!streaming || subscriber.closed) return;
        const problem = order.accept(event);
        if (problem !== undefined) {
          draft.fail(new ProviderProtocolError(problem));
          stopStreaming();
          return end();
        }
        draft.record(event);
        deliver(event);
        if (event.type === 'tool_call' && !subscriber.closed) tools.add(event.call);
      },
      error(error: unknown) {
        if (!streaming) return;
        draft.fail(error);
        stopStreaming();
        end();
      },
      complete() {
        if (!streaming) return;
        const problem = order.complete();
        if (problem !== undefined) draft.fail(new ProviderProtocolError(problem));
        stopStreaming();
        end();
      },
    });
    // a closed subscriber runs the teardown as soon as it is returned
    return teardown;
  });
}
