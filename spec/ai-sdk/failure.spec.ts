/** P18 (L1): what an AI SDK model threw, or streamed as an error part, as `errorMessage` and `failure`. */
import { APICallError } from '@ai-sdk/provider';
import { aiSdkFailure } from '../../src/ai-sdk/failure.js';

const call = (fields: { statusCode?: number; responseHeaders?: Record<string, string>; url?: string; message?: string; cause?: unknown }) =>
  new APICallError({ message: fields.message ?? 'Service Unavailable', url: fields.url ?? 'https://api.example.test/v1/messages', requestBodyValues: {}, ...fields });

describe('aiSdkFailure', () => {
  it('P18: an APICallError with a status is an http failure naming the status and the URL without its query; retry-after-ms wins over retry-after', () => {
    const message = 'HTTP 503 from POST https://api.example.test/v1/models/m:streamGenerateContent: Service Unavailable';
    expect(aiSdkFailure(call({ statusCode: 503, url: 'https://api.example.test/v1/models/m:streamGenerateContent?alt=sse&key=secret-key', responseHeaders: { 'retry-after': '4', 'retry-after-ms': '1500' } }))).toEqual({
      errorMessage: message,
      failure: { kind: 'http', status: 503, retryAfterMs: 1500, message },
    });
    expect(aiSdkFailure(call({ statusCode: 400, message: 'Bad request' })).failure).toEqual({ kind: 'http', status: 400, message: 'HTTP 400 from POST https://api.example.test/v1/messages: Bad request' });
  });

  it('P18: an APICallError without a status is a network failure, with its causes; a TimeoutError a timeout; anything else a protocol failure in its own words', () => {
    const refused = aiSdkFailure(call({ message: 'Cannot connect to API: fetch failed', cause: new Error('connect ECONNREFUSED 127.0.0.1:9') }));
    expect(refused).toEqual({
      errorMessage: 'Cannot connect to API: fetch failed (connect ECONNREFUSED 127.0.0.1:9)',
      failure: { kind: 'network', message: 'Cannot connect to API: fetch failed (connect ECONNREFUSED 127.0.0.1:9)' },
    });
    expect(aiSdkFailure(new DOMException('The operation timed out.', 'TimeoutError')).failure).toEqual({ kind: 'timeout', message: 'The operation timed out.' });
    expect(aiSdkFailure({ type: 'overloaded_error', message: 'Overloaded' })).toEqual({ errorMessage: 'Overloaded', failure: { kind: 'protocol', message: 'Overloaded' } });
    expect(aiSdkFailure('stream broke').failure).toEqual({ kind: 'protocol', message: 'stream broke' });
  });
});
