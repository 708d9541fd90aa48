import { HttpProviderOptions, httpSettings } from '../../../src/providers/http/settings.js';

const fetch = () => Promise.reject(new Error('not sent'));
const settings = (options: Partial<HttpProviderOptions> = {}) =>
  httpSettings({ model: 'm', apiKey: 'sk-1', fetch, ...options }, 'testProvider', 'https://api.example.com/v1/', 'TEST_API_KEY');

describe('httpSettings: the options both HTTP providers share', () => {
  it('fills in the defaults', () => {
    const { model, apiKey, system, baseURL, temperature, maxTokens, toolChoice, stop, idleTimeoutMs } = settings();
    expect({ model, apiKey, system, baseURL, temperature, maxTokens, toolChoice, stop, idleTimeoutMs }).toEqual({
      model: 'm',
      apiKey: 'sk-1',
      system: undefined,
      baseURL: 'https://api.example.com/v1', // the trailing slash is dropped
      temperature: undefined,
      maxTokens: undefined,
      toolChoice: undefined,
      stop: undefined,
      idleTimeoutMs: 300_000,
    });
    const request = settings().request('/chat', {}, {});
    expect([request.maxRetries, request.idleTimeoutMs]).toEqual([2, 300_000]);
  });

  it('makes the request: the URL, its own headers, then the caller\'s, and extraBody merged last (P11)', () => {
    const request = settings({ headers: { 'x-trace': 't1', 'x-own': 'caller' }, extraBody: { top_k: 5, stream: false }, idleTimeoutMs: 50, maxRetries: 0 })
      .request('/chat', { 'x-own': 'provider', authorization: 'Bearer sk-1' }, { model: 'm', stream: true });
    expect(request.url).toBe('https://api.example.com/v1/chat');
    expect(Object.fromEntries(request.headers)).toEqual({
      accept: 'text/event-stream',
      authorization: 'Bearer sk-1',
      'content-type': 'application/json',
      'x-own': 'caller',
      'x-trace': 't1',
    });
    expect(JSON.parse(request.body)).toEqual({ model: 'm', stream: false, top_k: 5 });
    expect([request.maxRetries, request.idleTimeoutMs, request.fetch]).toEqual([0, 50, fetch]);
  });

  it('keeps the key and every credential passed in headers as secrets (P4)', () => {
    const request = settings({ headers: { Authorization: 'Bearer sk-header', 'x-api-key': 'xk', 'Api-Key': 'ak', 'x-trace': 'public' } }).request('/c', {}, {});
    expect(request.secrets).toEqual(['sk-1', 'sk-header', 'xk', 'ak']);
  });

  it('turns one stop text into a list (P11)', () => {
    expect(settings({ stop: 'END' }).stop).toEqual(['END']);
    expect(settings({ stop: ['a', 'b'] }).stop).toEqual(['a', 'b']);
  });

  it.each<[string, Partial<HttpProviderOptions>, ErrorConstructor, string]>([
    ['an empty model', { model: '' }, TypeError, 'testProvider: model must be a non-empty string'],
    ['a fractional maxRetries', { maxRetries: 1.5 }, RangeError, 'testProvider: maxRetries must be an integer >= 0 (got 1.5)'],
    ['a negative temperature', { temperature: -1 }, RangeError, 'testProvider: temperature must be a number >= 0 (got -1, a number)'],
    ['maxTokens 0', { maxTokens: 0 }, RangeError, 'testProvider: maxTokens must be an integer >= 1 (got 0, a number)'],
    ['an empty toolChoice', { toolChoice: '' }, TypeError, `testProvider: toolChoice must be 'auto', 'none', 'required' or a tool's name (got "", a string)`],
    ['a stop that is a number', { stop: 3 as unknown as string }, TypeError, 'testProvider: stop must be a string or an array of strings (got 3, a number)'],
    ['an extraBody that is an array', { extraBody: [] as unknown as Record<string, unknown> }, TypeError, 'testProvider: extraBody must be a plain object (got [], an array)'],
    ['idleTimeoutMs 0 (P12)', { idleTimeoutMs: 0 }, RangeError, 'testProvider: idleTimeoutMs must be an integer >= 1 or Infinity (got 0, a number)'],
    ['a fractional idleTimeoutMs (P12)', { idleTimeoutMs: 0.5 }, RangeError, 'testProvider: idleTimeoutMs must be an integer >= 1 or Infinity (got 0.5, a number)'],
  ])('rejects %s', (_, options, type, message) => {
    expect(() => settings(options)).toThrow(type);
    expect(() => settings(options)).toThrow(message);
  });

  it('takes Infinity for idleTimeoutMs: no limit (P12)', () => {
    expect(settings({ idleTimeoutMs: Infinity }).idleTimeoutMs).toBe(Infinity);
  });
});
