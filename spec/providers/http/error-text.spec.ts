import { MIN_SECRET_LENGTH, WireError, errorTextWithCauses, failureText, messageOf, redact, responseMessage } from '../../../src/providers/http/error-text.js';

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

  it('errorTextWithCauses: an error and its causes', () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { cause: new Error('deeper') });
    expect(errorTextWithCauses(new TypeError('fetch failed', { cause }))).toBe('fetch failed (connect ECONNREFUSED 127.0.0.1:9) (deeper)');
    const many = new AggregateError([new Error('one'), new Error('two')], 'all failed');
    expect(errorTextWithCauses(new Error('fetch failed', { cause: many }))).toBe('fetch failed (one; two)');
  });

  it('P4: errorTextWithCauses: an error that throws when it is read is said to be one, never thrown on', () => {
    const hostile = new Proxy({}, { get: () => { throw new Error('no'); } }); // prettier-ignore
    expect(errorTextWithCauses(hostile)).toBe('an error that cannot be read');
    expect(failureText(hostile, [])).toBe('an error that cannot be read');
  });

  it('P4: redact and failureText: no secret in any text', () => {
    const key = 'sk-test-12345678';
    expect(redact(`key ${key} and ${key} and x-key-0987654321`, [key, '', 'x-key-0987654321'])).toBe('key [redacted] and [redacted] and [redacted]');
    expect(failureText(new WireError(`HTTP 401 from POST https://api.test/v1: bad key ${key}`), [key])).toBe('HTTP 401 from POST https://api.test/v1: bad key [redacted]');
    expect(failureText(new Error(`boom ${key}`), [key])).toBe('boom [redacted]');
  });

  it('P2 (key redaction): a key of fewer than 8 characters is left alone, so a one-letter key takes no letter out of a word', () => {
    expect(redact('the stream broke off', ['k'])).toBe('the stream broke off');
    expect(redact('the stream broke off', ['broke'])).toBe('the stream broke off');
    expect(redact('key 1234567 and 12345678', ['1234567', '12345678'])).toBe('key 1234567 and [redacted]');
    expect(MIN_SECRET_LENGTH).toBe(8);
  });

  it('P2 (key redaction): a key is removed only where it stands as a whole token, not inside a word', () => {
    const key = 'abcdefgh';
    expect(redact('abcdefghij xabcdefgh abcdefgh_1 1abcdefgh', [key])).toBe('abcdefghij xabcdefgh abcdefgh_1 1abcdefgh');
    expect(redact('abcdefgh', [key])).toBe('[redacted]');
    expect(redact('"abcdefgh", key=abcdefgh; (abcdefgh) Bearer abcdefgh\nabcdefgh.', [key])).toBe(
      '"[redacted]", key=[redacted]; ([redacted]) Bearer [redacted]\n[redacted].',
    );
    expect(redact('sk-abcdefgh-x abcdefgh-2', [key])).toBe('sk-[redacted]-x [redacted]-2'); // a hyphen ends a word
    expect(redact('éabcdefgh abcdefghü 𝐀abcdefgh', [key])).toBe('éabcdefgh abcdefghü 𝐀abcdefgh'); // letters beyond ASCII are letters too
    expect(redact('abcdefghabcdefgh abcdefgh', [key])).toBe('abcdefghabcdefgh [redacted]');
  });

  it('P2 (key redaction): the longest secret goes first, so that nothing of it is left behind', () => {
    expect(redact('token sk-long-secret-0123456789', ['sk-long-secret', 'sk-long-secret-0123456789'])).toBe('token [redacted]');
  });
});
