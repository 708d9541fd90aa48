import { Observable, Subscriber } from 'rxjs';
import type { ProviderEvent } from '../../types.js';
import { failureText } from './error-text.js';
import { failedEnd, failureKindOf } from './failure.js';
import { WireTranslator, replyEvents } from './reply.js';
import { retryFailures } from './retry.js';
import { sendOnce } from './send.js';
import { DEFAULT_IDLE_TIMEOUT_MS, StreamRequest } from './settings.js';

// what the providers import from here
export type { FetchLike, HttpProviderOptions, HttpSettings, StreamRequest, ToolChoice } from './settings.js';
export type { WireTranslator } from './reply.js';
export { httpSettings } from './settings.js';
export { WireError, messageOf } from './error-text.js';
export { failedEnd, statusOfErrorType, streamFailure } from './failure.js';
export type { FailureKind } from './failure.js';

/**
 * One model call as a cold Observable (P1): on subscribe, sends `prepare()`'s request — `sendOnce`,
 * retried per P4 by `retryFailures` until the response is accepted — then emits the reply's events
 * (`replyEvents`): `message_start`, what `translate()` makes of each server-sent event, `message_end`,
 * completion. Never errors: a failure before the reply is `message_start` and `message_end {stopReason:
 * 'error'}`, with the request's secrets redacted (P4). Retries happen only before `message_start`.
 * Unsubscribing before the end aborts the request, or the wait for a retry. P12: no byte for
 * `idleTimeoutMs` aborts the request: before the headers (and so before `message_start`) it is retried
 * like a 5xx; after, the call ends with `message_end` `no data for N ms`.
 *
 * The reply's events go to the subscriber directly, not through an operator: the per-chunk path has
 * nothing on it but the reader and the translator.
 *
 * ```text
 * sendOnce:       -#                                 one request each; # a RetryableError (a 503)
 *                 - 500ms -#                         subscribed again by retryFailures, 0.5 s later
 *                 - 500ms - 1000ms -a|               then 1 s later; a: the accepted response
 * streamRequest:  - 500ms - 1000ms -s-T-T-(Te|)      s: message_start, T: the reply's events, e: message_end
 * ```
 *
 * ```ts
 * const provider: Provider = (input) =>
 *   streamRequest(() => ({ url, headers, body: JSON.stringify(toBody(input)), maxRetries: 2, fetch, secrets: [key] }),
 *                 () => new MyApiTranslator());
 * ```
 */
export function streamRequest(prepare: () => StreamRequest, translate: () => WireTranslator): Observable<ProviderEvent> {
  return new Observable<ProviderEvent>((subscriber) => {
    let request: StreamRequest;
    try {
      request = prepare();
    } catch (error) {
      return failBeforeReply(subscriber, error, []);
    }
    const { secrets, idleTimeoutMs = DEFAULT_IDLE_TIMEOUT_MS } = request;
    return sendOnce(request)
      .pipe(retryFailures(request.maxRetries))
      .subscribe({
        next: (accepted) => replyEvents(accepted, translate, secrets, idleTimeoutMs).subscribe(subscriber),
        error: (error: unknown) => failBeforeReply(subscriber, error, secrets),
      });
  });
}

function failBeforeReply(subscriber: Subscriber<ProviderEvent>, error: unknown, secrets: readonly string[]): void {
  subscriber.next({ type: 'message_start' });
  subscriber.next(failedEnd(failureText(error, secrets), failureKindOf(error)));
  subscriber.complete();
}
