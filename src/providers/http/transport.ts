import { Observable } from 'rxjs';
import type { ProviderEvent } from '../../types.js';
import { onAbort } from '../../util/abort-signal.js';
import { drain } from './drain.js';
import { WireError, describe, failureText, redact, responseMessage } from './error-text.js';
import { isRetryableStatus, backoff, retryDelay } from './retry.js';
import type { StreamRequest } from './settings.js';
import { SseEvent, readServerSentEvents } from './sse.js';

// what the providers import from here
export type { FetchLike, HttpProviderOptions, HttpSettings, StreamRequest, ToolChoice } from './settings.js';
export { httpSettings } from './settings.js';
export { WireError, messageOf } from './error-text.js';

/** Turns one API's stream into provider events; one per call, so it may keep state. */
export interface WireTranslator {
  /** The provider events for one SSE event; a `message_end` among them ends the call. Throw a `WireError` to fail it. */
  next(event: SseEvent): ProviderEvent[];
  /** The stream ended: the closing `message_end`, or a `WireError` when the reply is incomplete. */
  end(): ProviderEvent[];
}

/**
 * One model call as a cold Observable (P1): on subscribe, sends `prepare()`'s request (retrying per
 * P4 until the response is accepted), emits `message_start` once it is, then what `translate()` makes
 * of each server-sent event, then `message_end`, then completes. Never errors: every failure becomes
 * `message_end {stopReason: 'error'}`, with the request's secrets redacted (P4). Unsubscribing before
 * the end aborts the request and closes the connection; after a complete reply, the few bytes that
 * close the body are still read, so that the connection can serve the next turn.
 *
 * ```ts
 * const provider: Provider = (input) =>
 *   streamRequest(() => ({ url, headers, body: JSON.stringify(toBody(input)), maxRetries: 2, fetch, secrets: [key] }),
 *                 () => new MyApiTranslator());
 * ```
 */
export function streamRequest(prepare: () => StreamRequest, translate: () => WireTranslator): Observable<ProviderEvent> {
  return new Observable<ProviderEvent>((subscriber) => {
    const controller = new AbortController();
    let started = false;
    let ended = false;
    let secrets: readonly string[] = [];

    const emit = (event: ProviderEvent): void => {
      if (subscriber.closed) return;
      if (event.type === 'message_start') started = true;
      if (event.type !== 'message_end') return subscriber.next(event);
      ended = true; // before `next`: a consumer that unsubscribes on message_end must not abort the draining
      subscriber.next(event.errorMessage === undefined ? event : { ...event, errorMessage: redact(event.errorMessage, secrets) });
      subscriber.complete();
    };

    const run = async (): Promise<void> => {
      const request = prepare();
      secrets = request.secrets;
      const response = await send(request, controller.signal);
      if (response.body === null) throw new WireError(`HTTP ${response.status}: the response has no body`);
      const translator = translate();
      emit({ type: 'message_start' });
      const events = readServerSentEvents(response.body);
      for (;;) {
        let next: IteratorResult<SseEvent, void>;
        try {
          next = await events.next();
        } catch (error) {
          throw controller.signal.aborted ? error : new WireError(`the stream broke off: ${describe(error)}`);
        }
        if (next.done) break;
        for (const event of translator.next(next.value)) emit(event);
        if (ended) return drain(events, controller);
        if (subscriber.closed) return void events.return().catch(() => undefined); // unsubscribed: the abort closed the connection
      }
      for (const event of translator.end()) emit(event);
      if (!ended) throw new WireError('the stream ended before the reply was complete');
    };

    run().catch((error: unknown) => {
      if (subscriber.closed) return; // unsubscribed: the abort is the expected way out
      if (!started) emit({ type: 'message_start' });
      emit({ type: 'message_end', stopReason: 'error', errorMessage: failureText(error, []) });
      controller.abort(); // what is left of a failed stream is of no use
    });

    return () => {
      if (!ended) controller.abort();
    };
  });
}

/** Sends `request`; retries what P4 says, and returns the first accepted response. */
async function send(request: StreamRequest, signal: AbortSignal): Promise<Response> {
  const init: RequestInit = { method: 'POST', headers: request.headers, body: request.body, signal };
  for (let attempt = 0; ; attempt++) {
    const retriesLeft = attempt < request.maxRetries;
    let response: Response;
    try {
      response = await request.fetch(request.url, init);
    } catch (error) {
      if (signal.aborted) throw error;
      if (retriesLeft) {
        await sleep(backoff(attempt), signal);
        continue;
      }
      throw new WireError(`request to ${request.url} failed: ${describe(error)}`);
    }
    if (response.ok && !isJson(response)) return response;

    const message = await responseMessage(response);
    if (response.ok) throw new WireError(`HTTP ${response.status}: expected an event stream, got JSON: ${message}`);
    const wait = retriesLeft && isRetryableStatus(response.status) ? retryDelay(response.headers, attempt) : undefined;
    if (wait === undefined) throw new WireError(`HTTP ${response.status}: ${message}`);
    await sleep(wait, signal);
  }
}

function isJson(response: Response): boolean {
  return (response.headers.get('content-type') ?? '').includes('application/json');
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stop = onAbort(signal, () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
    if (signal.aborted) return;
    timer = setTimeout(() => {
      stop();
      resolve();
    }, ms);
  });
}

