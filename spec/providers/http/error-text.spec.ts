import { WireError, describe as describeError, failureText, messageOf, redact, responseMessage } from '../../../src/providers/http/error-text.js';

describe('error texts (P4)', () => {
  it('messageOf: error.message, error or message of a JSON text', () => {
    expect(messageOf('{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}')).toBe('invalid x-api-key');
    expect(messageOf('{"error":"model not found"}')).toBe('model not found');
    expect(messageOf('{"message":"Bad request"}')).toBe('Bad request');
    expect(messageOf('<html>Bad Gateway</html>')).toBeUndefined();
    expect(messageOf('"just a string"')).toBeUndefined();
  });

  it('responseMessage: the API\'s words, else the text, else the status text', async () => {
    expect(await responseMessage(new Response('{"error":{"message":"Overloaded"}}', { status: 529 }))).toBe('Overloaded');
    expect(await responseMessage(new Response(' <html>Bad Gateway</html>\n', { status: 502 }))).toBe('<html>Bad Gateway</html>');
    expect(await responseMessage(new Response('', { status: 503, statusText: 'Service Unavailable' }))).toBe('Service Unavailable');
    expect(await responseMessage(new Response('', { status: 503 }))).toBe('no message');
  });

  it('describe: an error and its causes', () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { cause: new Error('deeper') });
    expect(describeError(new TypeError('fetch failed', { cause }))).toBe('fetch failed (connect ECONNREFUSED 127.0.0.1:9) (deeper)');
    const many = new AggregateError([new Error('one'), new Error('two')], 'all failed');
    expect(describeError(new Error('fetch failed', { cause: many }))).toBe('fetch failed (one; two)');
  });

  it('redact and failureText: no secret in any text', () => {
    expect(redact('key sk-1 and sk-1 and xk', ['sk-1', '', 'xk'])).toBe('key [redacted] and [redacted] and [redacted]');
    expect(failureText(new WireError('HTTP 401: bad key sk-123'), ['sk-123'])).toBe('HTTP 401: bad key [redacted]');
    expect(failureText(new Error('boom sk-123'), ['sk-123'])).toBe('boom [redacted]');
  });
});
