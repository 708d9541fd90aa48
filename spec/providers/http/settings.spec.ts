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
    ['an empty model', { model: '' }, TypeError, 'testProvider: model must be a non-empty string (got "", a string)'],
    ['a fractional maxRetries', { maxRetries: 1.5 }, RangeError, 'testProvider: maxRetries must be an integer >= 0 (got 1.5, a number)'],
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

  // left open (c): every setting checked at call time, as R20 checks the loop's options
  it.each<[string, unknown, ErrorConstructor, string]>([
    ['options that are no object', 'gpt-4o', TypeError, 'testProvider: options must be an object (got "gpt-4o", a string)'],
    ['headers that are a string', { headers: 'abc' }, TypeError, 'testProvider: headers must be a record of strings (got "abc", a string)'],
    ['headers that are an array', { headers: [['x-a', '1']] }, TypeError, 'testProvider: headers must be a record of strings (got [["x-a","1"]], an array)'],
    ['headers that are a Map', { headers: new Map([['x-a', '1']]) }, TypeError, 'testProvider: headers must be a record of strings (got {}, a Map)'],
    ['a header that is a number', { headers: { 'x-a': 3 } }, TypeError, 'testProvider: headers["x-a"] must be a string (got 3, a number)'],
    ['a credential header that is no string (its value not shown)', { headers: { authorization: ['Bearer sk-secret-0123456'] } }, TypeError, 'testProvider: headers["authorization"] must be a string (got an array)'],
    ['a header name with a space', { headers: { 'x a': '1' } }, TypeError, 'testProvider: headers["x a"] cannot be sent as an HTTP header: a name must be a token, a value on one line (got "1", a string)'],
    ['a header value with a line break', { headers: { 'x-a': '1\r\nx-b: 2' } }, TypeError, 'testProvider: headers["x-a"] cannot be sent as an HTTP header: a name must be a token, a value on one line (got "1\\r\\nx-b: 2", a string)'],
    ['a baseURL that is no string', { baseURL: 42 }, TypeError, 'testProvider: baseURL must be an http or https URL (got 42, a number)'],
    ['a baseURL that is no URL', { baseURL: 'not a url' }, TypeError, 'testProvider: baseURL must be an http or https URL (got "not a url", a string)'],
    ['a baseURL without its scheme', { baseURL: 'localhost:11434/v1' }, TypeError, 'testProvider: baseURL must be an http or https URL (got "localhost:11434/v1", a string)'],
    ['a baseURL of another scheme', { baseURL: 'ftp://example.com/v1' }, TypeError, 'testProvider: baseURL must be an http or https URL (got "ftp://example.com/v1", a string)'],
    ['a fetch that is no function', { fetch: 'fetch' }, TypeError, 'testProvider: fetch must be a function (got "fetch", a string)'],
    ['an apiKey that is no string (its value not shown)', { apiKey: 12345678 }, TypeError, 'testProvider: apiKey must be a string (got a number)'],
    ['an apiKey with a line break', { apiKey: 'sk-1\nsk-2' }, TypeError, 'testProvider: apiKey cannot be sent as an HTTP header: it holds a line break or a character that is not Latin-1'],
    ['a model that is no string', { model: 7 }, TypeError, 'testProvider: model must be a non-empty string (got 7, a number)'],
    ['a system that is no string', { system: ['Be brief.'] }, TypeError, 'testProvider: system must be a string (got ["Be brief."], an array)'],
    ['a system that is null', { system: null }, TypeError, 'testProvider: system must be a string (got null)'],
    ['a maxRetries that is a string', { maxRetries: '2' }, RangeError, 'testProvider: maxRetries must be an integer >= 0 (got "2", a string)'],
    ['a maxRetries of -1', { maxRetries: -1 }, RangeError, 'testProvider: maxRetries must be an integer >= 0 (got -1, a number)'],
    ['a maxRetries of Infinity', { maxRetries: Infinity }, RangeError, 'testProvider: maxRetries must be an integer >= 0 (got Infinity, a number)'],
    ['a temperature of NaN', { temperature: NaN }, RangeError, 'testProvider: temperature must be a number >= 0 (got NaN, a number)'],
    ['a maxTokens that is a string', { maxTokens: '100' }, RangeError, 'testProvider: maxTokens must be an integer >= 1 (got "100", a string)'],
    ['an idleTimeoutMs that is a string (P12)', { idleTimeoutMs: '100' }, RangeError, 'testProvider: idleTimeoutMs must be an integer >= 1 or Infinity (got "100", a string)'],
    ['an idleTimeoutMs of -Infinity (P12)', { idleTimeoutMs: -Infinity }, RangeError, 'testProvider: idleTimeoutMs must be an integer >= 1 or Infinity (got -Infinity, a number)'],
    ['a stop list with a number', { stop: ['END', 3] }, TypeError, 'testProvider: stop must be a string or an array of strings (got ["END",3], an array)'],
    ['an extraBody that cannot be JSON', { extraBody: { n: 1n } }, TypeError, 'testProvider: extraBody must survive JSON.stringify (Do not know how to serialize a BigInt)'],
  ])('left open (c): rejects %s at call time, naming the setting and the value', (_, options, type, message) => {
    const given = typeof options === 'object' && options !== null && !Array.isArray(options) ? { model: 'm', apiKey: 'sk-1', fetch, ...options } : options;
    const make = () => httpSettings(given as HttpProviderOptions, 'testProvider', 'https://api.example.com/v1/', 'TEST_API_KEY');
    expect(make).toThrow(type);
    expect(make).toThrow(message);
  });

  it('left open (c): a value that cannot be put into words (a Proxy that throws, a null-prototype object with a BigInt) is named by its kind', () => {
    const hostile = new Proxy({}, { get: () => { throw new Error('no'); } }); // prettier-ignore
    const nullProto = Object.assign(Object.create(null) as object, { n: 1n });
    expect(() => settings({ model: hostile as never })).toThrow(new TypeError('testProvider: model must be a non-empty string (got an object)'));
    expect(() => settings({ system: nullProto as never })).toThrow(new TypeError('testProvider: system must be a string (got an object)'));
  });

  it('left open (c): takes what is right: an https or http baseURL, an empty key (none), a header record of strings', () => {
    expect(settings({ baseURL: 'http://localhost:11434/v1/' }).baseURL).toBe('http://localhost:11434/v1');
    expect(settings({ apiKey: '' }).apiKey).toBe('');
    const request = settings({ headers: { 'x-trace': 'a b;c', 'X-Other': '' } }).request('/c', {}, {});
    expect([request.headers.get('x-trace'), request.headers.get('x-other')]).toEqual(['a b;c', '']);
  });

  it('left open (c): the settings are copied at call time: changing the options, their headers, stop or extraBody afterwards changes no request', () => {
    const headers: Record<string, string> = { 'x-trace': 't1' };
    const stop = ['END'];
    const extraBody: Record<string, unknown> = { top_k: 5, nested: { a: 1 } };
    const options: HttpProviderOptions = { model: 'm', apiKey: 'sk-1', fetch, headers, stop, extraBody, maxRetries: 1, idleTimeoutMs: 50 };
    const made = httpSettings(options, 'testProvider', 'https://api.example.com/v1/', 'TEST_API_KEY');
    headers['x-trace'] = 't2';
    headers['x-new'] = 'n';
    stop.push('STOP');
    extraBody.top_k = 9;
    (extraBody.nested as { a: number }).a = 2;
    Object.assign(options, { model: 'other', apiKey: 'sk-2', baseURL: 'https://elsewhere.test', maxRetries: 5, idleTimeoutMs: 1 });
    const request = made.request('/chat', {}, { model: made.model });
    expect([made.model, made.apiKey, made.baseURL, made.stop]).toEqual(['m', 'sk-1', 'https://api.example.com/v1', ['END']]);
    expect([request.url, request.headers.get('x-trace'), request.headers.get('x-new'), request.maxRetries, request.idleTimeoutMs]).toEqual([
      'https://api.example.com/v1/chat',
      't1',
      null,
      1,
      50,
    ]);
    expect(JSON.parse(request.body)).toEqual({ model: 'm', top_k: 5, nested: { a: 1 } });
  });

  it('P4: the secrets are the key and the credentials of the headers as they are sent (without surrounding blanks)', () => {
    const request = settings({ apiKey: ' sk-test-12345678\n', headers: { authorization: ' Bearer sk-header-12345678 ' } }).request('/c', {}, {});
    expect(request.secrets).toEqual(['sk-test-12345678', 'sk-header-12345678']);
  });

  it('takes Infinity for idleTimeoutMs: no limit (P12)', () => {
    expect(settings({ idleTimeoutMs: Infinity }).idleTimeoutMs).toBe(Infinity);
  });
});
