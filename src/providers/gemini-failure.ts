import type { ProviderEvent, ProviderFailure } from '../types.js';
import type { FetchLike } from './http/transport.js';
import { retryAfter } from './http/retry.js';

/** What the last attempt of one call saw: its HTTP status and `retry-after`, or a network failure. */
export interface Attempt {
  status?: number;
  retryAfterMs?: number;
  network?: boolean;
}

/**
 * `fetch`, noting in `attempt` what each request came to (the last one wins: retries are the transport's, P4),
 * so that the call's error end can say why it failed (L1).
 */
export function observedFetch(fetch: FetchLike, attempt: Attempt): FetchLike {
  return async (url, init) => {
    delete attempt.status;
    delete attempt.retryAfterMs;
    attempt.network = false;
    let response: Response;
    try {
      response = await fetch(url, init);
    } catch (error) {
      attempt.network = init.signal?.aborted !== true;
      throw error;
    }
    if (typeof response?.status === 'number') {
      attempt.status = response.status;
      const wait = typeof response.headers?.get === 'function' ? retryAfter(response.headers) : undefined;
      if (wait !== undefined) attempt.retryAfterMs = wait;
      // Gemini says how long to wait in the error's RetryInfo, seldom in a header: read it from a copy of the body
      else if (response.status === 429 && typeof response.clone === 'function') {
        const delay = retryInfoMs(await response.clone().text().catch(() => ''));
        if (delay !== undefined) attempt.retryAfterMs = delay;
      }
    }
    return response;
  };
}

/**
 * The `retryDelay` of a Google API error's `RetryInfo` detail, in ms: `undefined` when there is none.
 *
 * ```ts
 * retryInfoMs('{"error":{"code":429,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}'); // 37000
 * ```
 */
export function retryInfoMs(body: string): number | undefined {
  let details: unknown;
  try {
    details = (JSON.parse(body) as { error?: { details?: unknown } } | null)?.error?.details;
  } catch {
    return undefined;
  }
  if (!Array.isArray(details)) return undefined;
  for (const detail of details) {
    const delay = (detail as { retryDelay?: unknown } | null)?.retryDelay;
    const seconds = typeof delay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(delay)?.[1] : undefined;
    if (seconds !== undefined) return Math.round(Number(seconds) * 1000);
  }
  return undefined;
}

/**
 * L1: `event` with `failure` when it is an error end that has none (the translator sets its own: `refusal`,
 * `protocol`, an error in the stream): `http` with the status and `retry-after` of a response that was not
 * 2xx, `network` when the request failed, `timeout` when the idle timeout ended it (P12), else `protocol`
 * (a stream that broke off, bad JSON, a reply that ended too soon).
 *
 * ```ts
 * withFailure({ type: 'message_end', stopReason: 'error', errorMessage: 'HTTP 429 from POST …: slow down' }, { status: 429, retryAfterMs: 2000 }, 300_000);
 * // { …, failure: { kind: 'http', status: 429, retryAfterMs: 2000, message: 'HTTP 429 from POST …: slow down' } }
 * ```
 */
export function withFailure(event: ProviderEvent, attempt: Attempt, idleTimeoutMs: number): ProviderEvent {
  if (event.type !== 'message_end' || event.stopReason !== 'error' || event.failure !== undefined) return event;
  const message = event.errorMessage ?? 'error';
  let failure: ProviderFailure;
  if (message === `no data for ${idleTimeoutMs} ms`) failure = { kind: 'timeout', message };
  else if (attempt.status !== undefined && !(attempt.status >= 200 && attempt.status < 300)) {
    failure = { kind: 'http', status: attempt.status, message };
    if (attempt.retryAfterMs !== undefined) failure.retryAfterMs = attempt.retryAfterMs;
  } else if (attempt.network === true) failure = { kind: 'network', message };
  else failure = { kind: 'protocol', message };
  return { ...event, failure };
}
