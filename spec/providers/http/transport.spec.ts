import { Observable, lastValueFrom, toArray } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { ProviderEvent } from '../../../src/index.js';
import type { FailureKind } from '../../../src/providers/http/failure.js';
import type { FetchLike, StreamRequest } from '../../../src/providers/http/settings.js';
import { WireError, WireTranslator, streamRequest } from '../../../src/providers/http/transport.js';
import { LoopbackServer, never } from '../loopback-server';

const URL = 'http://api.test/v1/chat';
const KEY = 'sk-secret-0123';

/** A translator for a made-up API: each event's data is a text; `[END]` ends the reply. */
class TextTranslator implements WireTranslator {
  next({ data }: { data: string }): ProviderEvent[] {
    if (data === '[END]') return [{ type: 'message_end', stopReason: 'stop' }];
    if (data.startsWith('!')) throw new WireError(`error in the stream: ${data.slice(1)}`);
    return [{ type: 'text_delta', text: data }];
  }
  end(): ProviderEvent[] {
    return [];
  }
}

function call(fetch: FetchLike, options: Partial<StreamRequest> = {}): Observable<ProviderEvent> {
  return streamRequest(
    () => ({ url: URL, headers: new Headers(), body: '{}', maxRetries: 2, fetch, secrets: [KEY], ...options }),
    () => new TextTranslator(),
  );
}

const testScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const collect = (events: Observable<ProviderEvent>) => lastValueFrom(events.pipe(toArray()));

/** A fetch that gives these responses in turn, counting its calls. */
function replies(...responses: (() => Response)[]): FetchLike & { calls: number } {
  const fetch = Object.assign(async () => responses[fetch.calls++]!(), { calls: 0 });
  return fetch;
}

const sse = (body: string | ReadableStream<Uint8Array>) => () => new Response(body, { headers: { 'content-type': 'text/event-stream' } });
const status = (code: number, headers: Record<string, string> = {}) => () =>
  new Response(`{"error":{"message":"status ${code}, key ${KEY}"}}`, { status: code, headers: { 'content-type': 'application/json', ...headers } });

const start: ProviderEvent = { type: 'message_start' };
const text = (value: string): ProviderEvent => ({ type: 'text_delta', text: value });
const failed = (errorMessage: string, failure: FailureKind): ProviderEvent => ({
  type: 'message_end',
  stopReason: 'error',
  errorMessage,
  failure: { ...failure, message: errorMessage },
});

describe('streamRequest: the request\'s lifetime', () => {
  it('sends, and streams the reply: message_start, the translated events, message_end', async () => {
    const fetch = replies(sse('data: Hi\n\ndata: there\n\ndata: [END]\n\n'));
    expect(await collect(call(fetch))).toEqual([start, text('Hi'), text('there'), { type: 'message_end', stopReason: 'stop' }]);
    expect(fetch.calls).toBe(1);
  });

  it('a block that only sets retry: (a reconnection time) reaches no translator: a model reply is never resumed', async () => {
    const fetch = replies(sse('retry: 3000\n\ndata: Hi\n\nretry: 10\n\ndata: [END]\n\n'));
    expect(await collect(call(fetch))).toEqual([start, text('Hi'), { type: 'message_end', stopReason: 'stop' }]);
  });

  it('P4: retries a 5xx and a 429 before the reply, then streams it', async () => {
    const fetch = replies(status(503, { 'retry-after-ms': '0' }), status(429, { 'retry-after': '0' }), sse('data: ok\n\ndata: [END]\n\n'));
    expect(await collect(call(fetch))).toEqual([start, text('ok'), { type: 'message_end', stopReason: 'stop' }]);
    expect(fetch.calls).toBe(3);
  });

  it('P4: a failure before the reply is message_start and message_end, its text redacted', async () => {
    const fetch = replies(status(503, { 'retry-after': '0' }), status(401));
    expect(await collect(call(fetch))).toEqual([start, failed(`HTTP 401 from POST ${URL}: status 401, key [redacted]`, { kind: 'http', status: 401 })]);
    expect(fetch.calls).toBe(2);
  });

  it('P4: never retries after message_start: a stream that breaks off ends the call', async () => {
    let pulls = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulls++ === 0) controller.enqueue(new TextEncoder().encode('data: Hal\n\n'));
        else controller.error(new Error(`connection reset (${KEY})`));
      },
    });
    const fetch = replies(sse(body), sse('data: never\n\n'));
    expect(await collect(call(fetch))).toEqual([start, text('Hal'), failed('the stream broke off: connection reset ([redacted])', { kind: 'network' })]);
    expect(fetch.calls).toBe(1);
  });

  it('P4: a translator\'s WireError ends the call, its text redacted, without a retry', async () => {
    const fetch = replies(sse(`data: a\n\ndata: !bad key ${KEY}\n\n`));
    expect(await collect(call(fetch))).toEqual([start, text('a'), failed('error in the stream: bad key [redacted]', { kind: 'protocol' })]);
    expect(fetch.calls).toBe(1);
  });

  it('a prepare() that throws is a failed call, not an Observable error', async () => {
    const events = streamRequest(
      () => {
        throw new Error('no body for this input');
      },
      () => new TextTranslator(),
    );
    expect(await collect(events)).toEqual([start, failed('no body for this input', { kind: 'protocol' })]);
  });
});

// P12 in virtual time: a server that never answers fails each attempt at idleTimeoutMs, synchronously,
// so the whole schedule — timeouts, backoff, the last failure — runs on the TestScheduler's clock
describe('streamRequest: idle timeout before the reply, in virtual time (P12)', () => {
  beforeEach(() => jest.spyOn(Math, 'random').mockReturnValue(0)); // no jitter
  afterEach(() => jest.restoreAllMocks());

  it('a server that never answers: each attempt aborted at idleTimeoutMs, retried like a 5xx, then message_end', () => {
    const scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    scheduler.run(({ expectObservable }) => {
      const sent: { at: number; signal: AbortSignal }[] = [];
      const silent: FetchLike = (_, init) => {
        sent.push({ at: scheduler.now(), signal: init.signal! });
        return new Promise(() => undefined);
      };
      // 100 ms without headers, 0.5 s backoff, 100 ms, 1 s backoff, 100 ms
      expectObservable(call(silent, { idleTimeoutMs: 100 })).toBe('1800ms (se|)', { s: start, e: failed('no data for 100 ms', { kind: 'timeout' }) });
      scheduler.flush();
      expect(sent.map(({ at, signal }) => [at, signal.aborted])).toEqual([
        [0, true],
        [600, true],
        [1700, true],
      ]);
    });
  });

  it('idleTimeoutMs defaults to 300,000; maxRetries 0 gives up at the first timeout', () => {
    testScheduler().run(({ expectObservable }) => {
      const silent: FetchLike = () => new Promise(() => undefined);
      expectObservable(call(silent, { maxRetries: 0 })).toBe('300s (se|)', { s: start, e: failed('no data for 300000 ms', { kind: 'timeout' }) });
      expectObservable(call(silent, { maxRetries: 0, idleTimeoutMs: Infinity }), '3600s !').toBe('');
    });
  });

  it('unsubscribing while it waits for the headers aborts the request', () => {
    testScheduler().run(({ expectObservable, flush }) => {
      const signals: AbortSignal[] = [];
      const silent: FetchLike = (_, init) => {
        signals.push(init.signal!);
        return new Promise(() => undefined);
      };
      expectObservable(call(silent, { idleTimeoutMs: 100 }), '50ms !').toBe('');
      flush();
      expect(signals.map((signal) => signal.aborted)).toEqual([true]);
    });
  });
});

// P12 for real: servers on loopback that hang before the headers or in the middle of the body
describe('streamRequest: idle timeout over a real connection (P12)', () => {
  let server: LoopbackServer;
  beforeAll(async () => {
    server = await LoopbackServer.start();
  });
  afterAll(() => server.stop());
  beforeEach(() => server.reset());

  const overHttp = (options: Partial<StreamRequest> = {}) => call(globalThis.fetch, { url: `${server.url}/v1/chat`, idleTimeoutMs: 100, ...options });

  it('a server that hangs in the middle of the body: aborted, message_end "no data for N ms", not retried', async () => {
    server.reply({ body: 'data: Hal\n\n', then: 'hang' }, { body: 'data: never\n\n' });
    const began = Date.now();
    expect(await collect(overHttp())).toEqual([start, text('Hal'), failed('no data for 100 ms', { kind: 'timeout' })]);
    expect(Date.now() - began).toBeGreaterThanOrEqual(100);
    await server.requests[0]!.closed; // the connection is closed, not left hanging
    expect(server.requests).toHaveLength(1);
  });

  it('a server that sends the headers and then nothing: message_start came, so it is not retried', async () => {
    server.reply({ body: [], then: 'hang' }, { body: 'data: never\n\n' });
    expect(await collect(overHttp())).toEqual([start, failed('no data for 100 ms', { kind: 'timeout' })]);
    await server.requests[0]!.closed;
    expect(server.requests).toHaveLength(1);
  });

  it('a server that hangs before the headers: aborted and retried like a 5xx', async () => {
    server.reply({ hold: never }, { body: 'data: Hello\n\ndata: [END]\n\n' });
    expect(await collect(overHttp())).toEqual([start, text('Hello'), { type: 'message_end', stopReason: 'stop' }]);
    await server.requests[0]!.closed;
    expect(server.requests).toHaveLength(2);
  });

  it('a server that never sends the headers: the last timeout is the message', async () => {
    server.reply({ hold: never }, { hold: never });
    expect(await collect(overHttp({ maxRetries: 1 }))).toEqual([start, failed('no data for 100 ms', { kind: 'timeout' })]);
    expect(server.requests).toHaveLength(2);
  });

  it('an error body that stalls is cut short: its status counts, with the status text', async () => {
    server.reply({ status: 503, body: ['{"error":'], then: 'hang' });
    expect(await collect(overHttp({ maxRetries: 0 }))).toEqual([start, failed(`HTTP 503 from POST ${server.url}/v1/chat: Service Unavailable`, { kind: 'http', status: 503 })]);
    await server.requests[0]!.closed;
  });

  it('a slow stream whose pieces, keep-alive comments included, come more often than idleTimeoutMs is read to the end', async () => {
    const pieces = ['data: one\n\n', ': keep-alive\n\n', ': keep-alive\n\n', 'data: two\n\n', ': keep-alive\n\n', 'data: [END]\n\n'];
    server.reply({ body: pieces, between: () => new Promise((resolve) => setTimeout(resolve, 60)) });
    expect(await collect(overHttp())).toEqual([start, text('one'), text('two'), { type: 'message_end', stopReason: 'stop' }]); // 300 ms in all
  });
});

// item 3 of issue 19: on the platform's timers, a wait past 2^31 - 1 ms must not overflow to about 1 ms (jest's
// fake clock overflows as Node's setTimeout does); microtasks and the streams' own ticks stay real
describe('streamRequest: timers past 2^31 ms, on the platform\'s clock (P12)', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] }));
  afterEach(() => jest.useRealTimers());

  const LONG = 2 ** 33;

  /** The events so far of a subscription that runs while the test moves the clock. */
  function watch(events: Observable<ProviderEvent>): ProviderEvent[] {
    const seen: ProviderEvent[] = [];
    events.subscribe((event) => seen.push(event));
    return seen;
  }

  it('P12: an idleTimeoutMs past 2^31 ms never fires early, before the headers or within the stream', async () => {
    const silent: FetchLike = () => new Promise(() => undefined);
    const waiting = watch(call(silent, { idleTimeoutMs: LONG, maxRetries: 0 }));
    await jest.advanceTimersByTimeAsync(LONG - 1);
    expect(waiting).toEqual([]);
    await jest.advanceTimersByTimeAsync(LONG);
    expect(waiting).toEqual([start, failed(`no data for ${LONG} ms`, { kind: 'timeout' })]);

    const body = new ReadableStream<Uint8Array>({ start: (controller) => controller.enqueue(new TextEncoder().encode('data: Hi\n\n')) });
    const streaming = watch(call(replies(sse(body)), { idleTimeoutMs: LONG }));
    await jest.advanceTimersByTimeAsync(LONG - 1);
    expect(streaming).toEqual([start, text('Hi')]);
    await jest.advanceTimersByTimeAsync(LONG);
    expect(streaming).toEqual([start, text('Hi'), failed(`no data for ${LONG} ms`, { kind: 'timeout' })]);
  });

  it.each<[string, Record<string, string>]>([
    ['retry-after in seconds', { 'retry-after': String(2 ** 31 / 1000 + 1) }],
    ['retry-after-ms', { 'retry-after-ms': String(3 * 2 ** 31) }],
    ['retry-after as a date a year ahead', { 'retry-after': new Date(Date.now() + 365 * 24 * 3600 * 1000).toUTCString() }],
  ])('P12: a %s past 2^31 ms is not a retry after about 1 ms: the call ends with that reply, at once', async (_, headers) => {
    const fetch = replies(status(429, headers), sse('data: never\n\ndata: [END]\n\n'));
    const events = watch(call(fetch));
    await jest.advanceTimersByTimeAsync(1000);
    expect(events).toEqual([start, failed(`HTTP 429 from POST ${URL}: status 429, key [redacted]`, { kind: 'http', status: 429, retryAfterMs: expect.any(Number) })]);
    expect(fetch.calls).toBe(1);
  });
});
