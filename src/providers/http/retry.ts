/** The longest `retry-after` that is waited for; a server asking for more is not retried. */
export const MAX_RETRY_AFTER_MS = 60_000;

/** P4: the statuses that are retried: 408, 409, 429 and 5xx. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** The server's `retry-after-ms` / `retry-after` (seconds or an HTTP date), else exponential backoff; `undefined`: too long to wait. */
export function retryDelay(headers: Headers, attempt: number): number | undefined {
  let ms: number | undefined;
  const retryAfterMs = headers.get('retry-after-ms');
  const retryAfter = headers.get('retry-after');
  if (retryAfterMs !== null && /^\d+(\.\d+)?$/.test(retryAfterMs.trim())) ms = Number(retryAfterMs);
  else if (retryAfter !== null && /^\d+(\.\d+)?$/.test(retryAfter.trim())) ms = Number(retryAfter) * 1000;
  else if (retryAfter !== null && !Number.isNaN(Date.parse(retryAfter))) ms = Math.max(0, Date.parse(retryAfter) - Date.now());
  if (ms === undefined) return backoff(attempt);
  return ms <= MAX_RETRY_AFTER_MS ? ms : undefined;
}

/** 0.5 s, 1 s, 2 s, … up to 8 s, less up to a quarter at random so that clients spread out. */
export function backoff(attempt: number): number {
  return Math.min(8000, 500 * 2 ** attempt) * (1 - Math.random() * 0.25);
}
