import type { ProviderFailure } from '../types.js';
import { errorTextWithCauses } from '../providers/http/error-text.js';
import { retryAfter } from '../providers/http/retry.js';

/** What an AI SDK model threw or streamed as an `error` part, as `message_end` tells it (P4, L1). */
export interface AiSdkFailure {
  errorMessage: string;
  failure: ProviderFailure;
}

/**
 * An AI SDK model's error as `errorMessage` and `failure`. The fields are read by shape, not with
 * `APICallError.isInstance`, so that the entry needs `@ai-sdk/provider` for its types only: an `APICallError`
 * with a `statusCode` is an HTTP failure (`HTTP 429 from POST URL: WORDS`, its `retry-after` read), one without
 * is a network failure (`Cannot connect to API: …`); a `TimeoutError` (an `AbortSignal.timeout` the model
 * honoured) a timeout; anything else a protocol failure, in the error's own words.
 *
 * ```ts
 * aiSdkFailure({ name: 'AI_APICallError', message: 'Rate limited', statusCode: 429, url: 'https://api.openai.com/v1/chat/completions', responseHeaders: { 'retry-after': '2' } });
 * // { errorMessage: 'HTTP 429 from POST https://api.openai.com/v1/chat/completions: Rate limited',
 * //   failure: { kind: 'http', status: 429, retryAfterMs: 2000, message: '…the same…' } }
 * ```
 */
export function aiSdkFailure(error: unknown): AiSdkFailure {
  const { name, statusCode, url, responseHeaders } = (typeof error === 'object' && error !== null ? error : {}) as {
    name?: unknown;
    statusCode?: unknown;
    url?: unknown;
    responseHeaders?: unknown;
  };
  const words = errorTextWithCauses(error);
  if (typeof statusCode === 'number') {
    // the query string is left out: a key may travel in it
    const where = typeof url === 'string' ? ` from POST ${url.split('?')[0]}` : '';
    const errorMessage = `HTTP ${statusCode}${where}: ${words}`;
    const failure: ProviderFailure = { kind: 'http', status: statusCode, message: errorMessage };
    const wait = headersOf(responseHeaders);
    const retryAfterMs = wait === undefined ? undefined : retryAfter(wait);
    if (retryAfterMs !== undefined) failure.retryAfterMs = retryAfterMs;
    return { errorMessage, failure };
  }
  const kind: ProviderFailure['kind'] =
    name === 'TimeoutError' ? 'timeout' : name === 'AI_APICallError' && typeof url === 'string' ? 'network' : 'protocol';
  return { errorMessage: words, failure: { kind, message: words } };
}

function headersOf(value: unknown): Headers | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  try {
    return new Headers(value as Record<string, string>);
  } catch {
    return undefined; // a header the platform refuses: no retry-after, rather than no failure
  }
}
