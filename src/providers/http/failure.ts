import type { ProviderEvent, ProviderFailure } from '../../types.js';

type MessageEnd = Extract<ProviderEvent, { type: 'message_end' }>;

/** What a failure is, without its words: the part of a {@link ProviderFailure} a thrown `WireError` carries. */
export type FailureKind = Omit<ProviderFailure, 'message'>;

/**
 * L1: the `message_end` of a call that failed, with its `failure` for `withFallback` and the limiter — the one
 * way every real provider (and any provider written on `src/providers/http`) ends a call with `error`.
 *
 * ```ts
 * failedEnd('HTTP 503 from POST https://…: overloaded', { kind: 'http', status: 503, retryAfterMs: 2000 });
 * // { type: 'message_end', stopReason: 'error', errorMessage: 'HTTP 503 …', failure: { kind: 'http', status: 503, retryAfterMs: 2000, message: 'HTTP 503 …' } }
 * failedEnd('the model declined to answer', { kind: 'refusal' });
 * ```
 */
export function failedEnd(errorMessage: string, kind: FailureKind): MessageEnd {
  const failure: ProviderFailure = { kind: kind.kind, message: errorMessage };
  if (kind.status !== undefined) failure.status = kind.status;
  if (kind.retryAfterMs !== undefined) failure.retryAfterMs = kind.retryAfterMs;
  return { type: 'message_end', stopReason: 'error', errorMessage, failure };
}

/**
 * An error `message_end` a translator made without a `failure`, given one: what the API said went wrong is a
 * `protocol` failure unless the translator knew better. Any other event passes as it is.
 */
export function withFailure(end: MessageEnd): MessageEnd {
  if (end.stopReason !== 'error' || end.failure !== undefined) return end;
  return { ...end, failure: { kind: 'protocol', message: end.errorMessage ?? 'error' } };
}

/**
 * The HTTP status an API's own error type stands for, where an error comes in the stream of a 200 (Anthropic's
 * `overloaded_error` is its 529): so that a fail-over or a limiter reads it as it would the status.
 *
 * ```ts
 * statusOfErrorType('overloaded_error'); // 529
 * statusOfErrorType('something_new');    // undefined
 * ```
 */
export function statusOfErrorType(type: unknown): number | undefined {
  return typeof type === 'string' ? ERROR_TYPE_STATUS.get(type) : undefined;
}

// Anthropic's documented error types and their statuses; OpenAI's stream errors use `server_error` and `rate_limit_exceeded`
const ERROR_TYPE_STATUS = new Map<string, number>([
  ['invalid_request_error', 400],
  ['authentication_error', 401],
  ['permission_error', 403],
  ['not_found_error', 404],
  ['request_too_large', 413],
  ['rate_limit_error', 429],
  ['rate_limit_exceeded', 429],
  ['api_error', 500],
  ['server_error', 500],
  ['overloaded_error', 529],
]);

/**
 * The failure a thrown error stands for: a `WireError` says its kind (a `protocol` failure unless it said
 * otherwise); anything else — a `prepare()` that threw, a broken translator — is a `protocol` failure.
 */
export function failureKindOf(error: unknown): FailureKind {
  const failure = (error as { failure?: FailureKind } | null)?.failure;
  return typeof failure === 'object' && failure !== null && typeof failure.kind === 'string' ? failure : { kind: 'protocol' };
}

/** L1: an error object in the stream, as the failure its `type` or `code` stands for (`server_error`: a 500). */
export function streamFailure(error: unknown): FailureKind {
  const { type, code } = (typeof error === 'object' && error !== null ? error : {}) as { type?: unknown; code?: unknown };
  const status = statusOfErrorType(type) ?? statusOfErrorType(code);
  return status === undefined ? { kind: 'protocol' } : { kind: 'http', status };
}
