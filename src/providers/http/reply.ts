import { Observable } from 'rxjs';
import type { ProviderEvent } from '../../types.js';
import { drain } from './drain.js';
import { WireError, errorTextWithCauses, failureText, redact } from './error-text.js';
import { failedEnd, failureKindOf, withFailure } from './failure.js';
import { ChunkCount, idleTimeout } from './idle-timeout.js';
import type { AcceptedResponse } from './send.js';
import { SseEvent, isRetryOnly, readServerSentEvents } from './sse.js';

type MessageEnd = Extract<ProviderEvent, { type: 'message_end' }>;

/** Turns one API's stream into provider events; one per call, so it may keep state. */
export interface WireTranslator {
  /** The provider events for one SSE event; a `message_end` among them ends the call. Throw a `WireError` to fail it. */
  next(event: SseEvent): ProviderEvent[];
  /** The stream ended: the closing `message_end`, or a `WireError` when the reply is incomplete. */
  end(): ProviderEvent[];
}

/**
 * The events of an accepted reply: `message_start` at once, then what `translate()` makes of each
 * server-sent event as it arrives (P3), then `message_end`, then completion. Never errors: a failure —
 * a broken stream, a translator's `WireError`, a stream that ends too soon — is `message_end {stopReason:
 * 'error'}`, and no `secrets` in any `errorMessage` (P4). Unsubscribing before `message_end` aborts the
 * response; after it, the few bytes that close the body are still read (`drain`), so that the connection
 * can serve the next call. One subscription per accepted response.
 *
 * P12: when no byte arrives for `idleTimeoutMs`, the response is aborted and the call ends at that moment
 * with `message_end {stopReason: 'error', errorMessage: 'no data for N ms'}` (noticed a little later: see
 * `idleTimeout`). A comment line (`: keep-alive`) is data too.
 *
 * ```text
 * body:         --a--b---c|      a, b, c: server-sent events; c completes the reply
 * replyEvents:  s-A--B---(Ce|)   s: message_start, A, B, C: their provider events, e: message_end
 *
 * body:         --a-------------    then nothing (idleTimeoutMs = 8: looked at every 2 frames)
 * replyEvents:  s-A---------(e|)    e at 12: message_end 'no data for 8 ms', the response aborted
 * ```
 */
export function replyEvents(
  accepted: AcceptedResponse,
  translate: () => WireTranslator,
  secrets: readonly string[],
  idleTimeoutMs: number,
): Observable<ProviderEvent> {
  return new Observable<ProviderEvent>((subscriber) => {
    const { body, controller } = accepted;
    const count: ChunkCount = { chunks: 0 };
    let ended = false;

    const end = (event: MessageEnd): void => {
      ended = true; // before `next`: a consumer that unsubscribes on message_end must not abort the draining
      idle.unsubscribe();
      subscriber.next(event);
      subscriber.complete();
    };
    const emit = (event: ProviderEvent): void => {
      if (subscriber.closed) return;
      if (event.type !== 'message_end') return subscriber.next(event);
      if (event.errorMessage === undefined) return end(withFailure(event));
      const errorMessage = redact(event.errorMessage, secrets);
      end(withFailure(event.failure === undefined ? { ...event, errorMessage } : { ...event, errorMessage, failure: { ...event.failure, message: errorMessage } }));
    };

    const fail = (error: unknown): void => {
      if (subscriber.closed) return; // unsubscribed: the abort is the expected way out
      end(failedEnd(failureText(error, secrets), failureKindOf(error)));
      controller.abort(); // what is left of a failed stream is of no use
    };

    const read = async (): Promise<void> => {
      const translator = translate();
      const events = readServerSentEvents(body, count);
      for (;;) {
        let next: IteratorResult<SseEvent, void>;
        try {
          next = await events.next();
        } catch (error) {
          throw controller.signal.aborted ? error : new WireError(`the stream broke off: ${errorTextWithCauses(error)}`, { kind: 'network' });
        }
        if (next.done) break;
        if (isRetryOnly(next.value)) continue; // a reconnection time: a model's reply is never resumed
        for (const event of translator.next(next.value)) emit(event);
        if (ended) return drain(() => events.next(), controller);
        if (subscriber.closed) return void events.return().catch(() => undefined); // unsubscribed: the abort closed the connection
      }
      for (const event of translator.end()) emit(event);
      if (!ended) throw new WireError('the stream ended before the reply was complete');
    };

    const idle = idleTimeout(count, idleTimeoutMs).subscribe(() => fail(new WireError(`no data for ${idleTimeoutMs} ms`, { kind: 'timeout' })));
    subscriber.next({ type: 'message_start' });
    read().catch(fail);

    return () => {
      idle.unsubscribe();
      if (!ended) controller.abort();
    };
  });
}
