import { MonoTypeOperatorFunction, retry, throwError, timer } from 'rxjs';
import { WireError } from './error-text.js';
import type { FailureKind } from './failure.js';

/**
 * The longest `retry-after` that is waited for; a server asking for more is not retried, so no retry waits on
 * a timer past 2^31 - 1 ms (which would fire after about 1 ms).
 */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * A failure before the reply began that P4 retries: a network failure, an HTTP 408, 409, 429 or 5xx, or
 * (P12) a server that sent no response in time. Its message is the call's `errorMessage` if it is the last.
 */
export class RetryableError extends WireError {
  override name = 'RetryableError';

  /**
   * @param retryAfterMs what the server asked to wait (`retry-after-ms`, `retry-after`); `undefined`: it did not say.
   * @param failure what kind of failure, if it is the last (L1): a `network` one unless said.
   */
  constructor(
    message: string,
    readonly retryAfterMs?: number,
    failure: FailureKind = retryAfterMs === undefined ? { kind: 'network' } : { kind: 'network', retryAfterMs },
  ) {
    super(message, failure);
  }
}

/** P4: the statuses that are retried: 408, 409, 429 and 5xx. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * How long a response asks the client to wait before it retries: `retry-after-ms` in milliseconds (it
 * wins), else `retry-after` in seconds or as an HTTP date, counted from `now`; `undefined` when it asks
 * nothing readable.
 *
 * ```ts
 * retryAfter(new Headers({ 'retry-after': '2', 'retry-after-ms': '1500' })); // 1500
 * retryAfter(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:03 GMT' }), Date.UTC(2026, 0, 1)); // 3000
 * ```
 */
export function retryAfter(headers: Headers, now = Date.now()): number | undefined {
  const retryAfterMs = headers.get('retry-after-ms')?.trim();
  if (retryAfterMs !== undefined && NUMBER.test(retryAfterMs)) return Number(retryAfterMs);
  const retryAfter = headers.get('retry-after')?.trim();
  if (retryAfter === undefined) return undefined;
  if (NUMBER.test(retryAfter)) return Number(retryAfter) * 1000;
  const date = /[a-z]/i.test(retryAfter) ? Date.parse(retryAfter) : NaN; // an HTTP date names its day; Date.parse('-1') is a year
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

const NUMBER = /^\d+(\.\d+)?$/;

/**
 * The wait before retry `n` (1, 2, …) when the server did not say: 0.5 s, 1 s, 2 s, … up to 8 s, less up
 * to a quarter at random (`random` in [0, 1)) so that clients that failed together spread out.
 *
 * ```ts
 * [1, 2, 3, 4, 5, 6].map((n) => backoff(n, 0)); // [500, 1000, 2000, 4000, 8000, 8000]
 * backoff(1, 0.5); // 437.5
 * ```
 */
export function backoff(n: number, random = Math.random()): number {
  return Math.min(8000, 500 * 2 ** (n - 1)) * (1 - random * 0.25);
}

/**
 * The wait before retry `n` (1, 2, …) after `error`: what the server asked for, else the backoff;
 * `undefined` when `error` is not retried: it is not a `RetryableError`, or the server asks for more than
 * `MAX_RETRY_AFTER_MS`.
 */
export function retryDelay(error: unknown, n: number): number | undefined {
  if (!(error instanceof RetryableError)) return undefined;
  const { retryAfterMs } = error;
  if (retryAfterMs === undefined) return backoff(n);
  return retryAfterMs <= MAX_RETRY_AFTER_MS ? retryAfterMs : undefined;
}

/**
 * P4 as an operator: resubscribes to the source — one request per subscription — after each
 * `RetryableError`, at most `maxRetries` times, each time after `retryDelay` on the async scheduler;
 * any other error, the last one, or one whose server asks to wait more than a minute passes through.
 * Put it where nothing was emitted yet: a retry after an emission would repeat it.
 *
 * ```text
 * source:            -#                        each subscription: one attempt; # a RetryableError
 * subscriptions:     ^!
 *                    - 500ms ^!                (backoff 1: 0.5 s, less up to a quarter at random)
 *                    - 500ms - 1000ms ^!       (backoff 2: 1 s, …)
 * retryFailures(2):  - 500ms - 1000ms -#       the third failure is the last
 * ```
 */
export function retryFailures<T>(maxRetries: number): MonoTypeOperatorFunction<T> {
  return retry({
    count: maxRetries,
    delay: (error: unknown, n: number) => {
      const ms = retryDelay(error, n);
      return ms === undefined ? throwError(() => error) : timer(ms);
    },
  });
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
