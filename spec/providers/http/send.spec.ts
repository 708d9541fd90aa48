import { lastValueFrom } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { WireError } from '../../../src/providers/http/error-text.js';
import { RetryableError } from '../../../src/providers/http/retry.js';
import { AcceptedResponse, sendOnce } from '../../../src/providers/http/send.js';
import type { FetchLike, StreamRequest } from '../../../src/providers/http/settings.js';

const URL = 'http://api.test/v1/chat';

function request(fetch: FetchLike): StreamRequest {
  return { url: URL, headers: new Headers({ 'content-type': 'application/json' }), body: '{"model":"m"}', maxRetries: 2, fetch, secrets: [] };
}

const answering = (response: () => Response) => jest.fn<Promise<Response>, [string, RequestInit]>(async () => response());
const sse = () => new Response('data: {}\n\n', { headers: { 'content-type': 'text/event-stream' } });

async function failure(fetch: FetchLike): Promise<unknown> {
  return lastValueFrom(sendOnce(request(fetch))).then(
    () => 'no error',
    (error: unknown) => error,
  );
}

describe('sendOnce: one attempt, as a cold Observable (P1, P4)', () => {
  it('POSTs the request once per subscription, and emits the accepted event stream with its controller', async () => {
    const fetch = answering(sse);
    const attempt = sendOnce(request(fetch));
    expect(fetch).not.toHaveBeenCalled();
    const accepted: AcceptedResponse = await lastValueFrom(attempt);
    expect(await new Response(accepted.body).text()).toBe('data: {}\n\n');
    expect(accepted.controller.signal.aborted).toBe(false); // the subscriber's now
    await lastValueFrom(attempt);
    expect(fetch).toHaveBeenCalledTimes(2);
    const [url, init] = fetch.mock.calls[0]!;
    expect([url, init.method, init.body, (init.headers as Headers).get('content-type')]).toEqual([URL, 'POST', '{"model":"m"}', 'application/json']);
  });

  it('a 408, 409, 429 or 5xx is a RetryableError with the API\'s words and the server\'s retry-after', async () => {
    const error = await failure(
      answering(() => new Response('{"error":{"message":"Overloaded"}}', { status: 529, headers: { 'retry-after-ms': '1500', 'retry-after': '2' } })),
    );
    expect(error).toBeInstanceOf(RetryableError);
    expect(error).toMatchObject({ message: `HTTP 529 from POST ${URL}: Overloaded`, retryAfterMs: 1500 });
  });

  it('a network failure is a RetryableError naming the URL, whether fetch rejects or throws', async () => {
    const rejected = await failure(async () => {
      throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:9') });
    });
    expect(rejected).toEqual(new RetryableError(`request to ${URL} failed: fetch failed (connect ECONNREFUSED 127.0.0.1:9)`));
    expect(rejected).toMatchObject({ retryAfterMs: undefined });
    const thrown = await failure(() => {
      throw new TypeError('Invalid URL');
    });
    expect(thrown).toEqual(new RetryableError(`request to ${URL} failed: Invalid URL`));
  });

  it('P4, P2, left open (g): anything else is a WireError that is not retried, naming the method and URL: a 4xx, a 200 that is no event stream, a reply without a body', async () => {
    const errors = [
      await failure(answering(() => new Response('{"error":{"message":"invalid x-api-key"}}', { status: 401 }))),
      await failure(answering(() => new Response('{"error":"streaming is off"}', { headers: { 'content-type': 'application/json' } }))),
      await failure(answering(() => new Response('<h1>Sign in</h1>', { headers: { 'content-type': 'text/html' } }))),
      await failure(answering(() => new Response('data: {}\n\n'))), // a string body is text/plain unless said otherwise
      await failure(answering(() => new Response(null, { status: 200, headers: { 'content-type': 'text/event-stream' } }))),
    ];
    expect(errors.map((error) => [error instanceof WireError && !(error instanceof RetryableError), (error as Error).message])).toEqual([
      [true, `HTTP 401 from POST ${URL}: invalid x-api-key`],
      [true, `HTTP 200 from POST ${URL}: expected an event stream, got application/json: streaming is off`],
      [true, `HTTP 200 from POST ${URL}: expected an event stream, got text/html: <h1>Sign in</h1>`],
      [true, `HTTP 200 from POST ${URL}: expected an event stream, got text/plain;charset=UTF-8: data: {}`],
      [true, `HTTP 200 from POST ${URL}: the response has no body`],
    ]);
  });

  it('left open (g): an event stream is text/event-stream with any parameters, in any case; a reply that names no type is read as one', async () => {
    const types = ['text/event-stream', 'text/event-stream; charset=utf-8', ' TEXT/Event-Stream ;charset=utf-8'];
    for (const type of types) {
      const accepted: AcceptedResponse = await lastValueFrom(sendOnce(request(answering(() => new Response('data: {}\n\n', { headers: { 'content-type': type } })))));
      expect([type, await new Response(accepted.body).text()]).toEqual([type, 'data: {}\n\n']);
    }
    const untyped = new Response(new Blob(['data: {}\n\n']).stream()); // a stream body has no content type
    expect(untyped.headers.get('content-type')).toBeNull();
    const accepted: AcceptedResponse = await lastValueFrom(sendOnce(request(answering(() => untyped))));
    expect(await new Response(accepted.body).text()).toBe('data: {}\n\n');
  });

  it('P4, left open (c): a custom fetch that answers something that is no Response is named as such, not read', async () => {
    const odd = [undefined, {}, 'ok', { status: 200 }];
    const errors = await Promise.all(odd.map((value) => failure(async () => value as unknown as Response)));
    expect(errors.map((error) => [error instanceof RetryableError, (error as Error).message])).toEqual([
      [false, 'fetch returned undefined, not a Response'],
      [false, 'fetch returned {}, an object, not a Response'],
      [false, 'fetch returned "ok", a string, not a Response'],
      [false, 'fetch returned {"status":200}, an object, not a Response'],
    ]);
    const bodiless = { status: 200, ok: true, headers: new Headers({ 'content-type': 'text/event-stream' }), body: undefined } as unknown as Response;
    expect(((await failure(async () => bodiless)) as Error).message).toBe(`HTTP 200 from POST ${URL}: the response has no body`);
  });

  it('P12: an error body that stalls ends at idleTimeoutMs with the status text, even from a fetch that does not tie the body to its signal', async () => {
    const stalled = () => new Response(new ReadableStream({ pull: () => new Promise<void>(() => undefined) }), { status: 503, statusText: 'Service Unavailable' });
    const error = await lastValueFrom(sendOnce({ ...request(async () => stalled()), idleTimeoutMs: 20 })).then(
      () => 'no error',
      (failed: unknown) => failed,
    );
    expect(error).toEqual(new RetryableError(`HTTP 503 from POST ${URL}: Service Unavailable`));
  });

  it('unsubscribing before the response aborts the request, and nothing is emitted', async () => {
    let signal: AbortSignal | undefined;
    const fetch: FetchLike = (_, init) => {
      signal = init.signal ?? undefined;
      return new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal?.reason)));
    };
    const seen: unknown[] = [];
    const subscription = sendOnce(request(fetch)).subscribe({ next: (value) => seen.push(value), error: (error) => seen.push(error) });
    expect(signal?.aborted).toBe(false);
    subscription.unsubscribe();
    expect(signal?.aborted).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([]);
  });

  it('P12: a server that sends no headers in idleTimeoutMs is aborted, and the attempt fails with a RetryableError then', () => {
    new TestScheduler((actual, expected) => expect(actual).toEqual(expected)).run(({ expectObservable, flush }) => {
      const signals: AbortSignal[] = [];
      const silent: FetchLike = (_, init) => {
        signals.push(init.signal!);
        return new Promise(() => undefined);
      };
      expectObservable(sendOnce({ ...request(silent), idleTimeoutMs: 8 })).toBe('--------#', undefined, new RetryableError('no data for 8 ms'));
      flush();
      expect(signals.map((signal) => signal.aborted)).toEqual([true]);
    });
  });
});
