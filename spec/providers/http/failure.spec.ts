import { failedEnd, failureKindOf, statusOfErrorType, streamFailure, withFailure } from '../../../src/providers/http/failure.js';
import { WireError } from '../../../src/providers/http/error-text.js';
import { RetryableError } from '../../../src/providers/http/retry.js';

describe('failure: what a provider says went wrong (L1)', () => {
  it('L1: failedEnd is an error message_end whose failure repeats its message, with status and retryAfterMs only when known', () => {
    expect(failedEnd('HTTP 503 from POST u: busy', { kind: 'http', status: 503, retryAfterMs: 2000 })).toEqual({
      type: 'message_end',
      stopReason: 'error',
      errorMessage: 'HTTP 503 from POST u: busy',
      failure: { kind: 'http', status: 503, retryAfterMs: 2000, message: 'HTTP 503 from POST u: busy' },
    });
    expect(Object.keys(failedEnd('no', { kind: 'refusal' }).failure!)).toEqual(['kind', 'message']);
  });

  it('L1: a thrown error says its kind — a WireError protocol unless said, a RetryableError network unless said, anything else protocol', () => {
    expect(failureKindOf(new WireError('bad JSON'))).toEqual({ kind: 'protocol' });
    expect(failureKindOf(new WireError('HTTP 401', { kind: 'http', status: 401 }))).toEqual({ kind: 'http', status: 401 });
    expect(failureKindOf(new RetryableError('fetch failed'))).toEqual({ kind: 'network' });
    expect(failureKindOf(new RetryableError('HTTP 429', 1500, { kind: 'http', status: 429, retryAfterMs: 1500 }))).toEqual({ kind: 'http', status: 429, retryAfterMs: 1500 });
    expect(failureKindOf(new Error('prepare threw'))).toEqual({ kind: 'protocol' });
    expect(failureKindOf(undefined)).toEqual({ kind: 'protocol' });
  });

  it("L1: an API's error type in a 200's stream stands for its status (Anthropic's overloaded_error is a 529); an unknown one for none", () => {
    expect(statusOfErrorType('overloaded_error')).toBe(529);
    expect(statusOfErrorType('rate_limit_error')).toBe(429);
    expect(statusOfErrorType('api_error')).toBe(500);
    expect(statusOfErrorType('toString')).toBeUndefined(); // no prototype key is an error type
    expect(statusOfErrorType(42)).toBeUndefined();
    expect(streamFailure({ type: 'server_error', message: 'oops' })).toEqual({ kind: 'http', status: 500 });
    expect(streamFailure({ code: 'rate_limit_exceeded' })).toEqual({ kind: 'http', status: 429 });
    expect(streamFailure({ code: 'insufficient_quota' })).toEqual({ kind: 'protocol' });
    expect(streamFailure(null)).toEqual({ kind: 'protocol' });
  });

  it('L1: an error message_end a translator made without a failure gets a protocol one; any other event is left as it is', () => {
    expect(withFailure({ type: 'message_end', stopReason: 'error', errorMessage: 'odd' })).toEqual({
      type: 'message_end',
      stopReason: 'error',
      errorMessage: 'odd',
      failure: { kind: 'protocol', message: 'odd' },
    });
    const stop = { type: 'message_end', stopReason: 'stop' } as const;
    expect(withFailure(stop)).toBe(stop);
    const refusal = failedEnd('no', { kind: 'refusal' });
    expect(withFailure(refusal)).toBe(refusal);
  });
});
