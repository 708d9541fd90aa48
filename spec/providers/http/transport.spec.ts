import { Observable, lastValueFrom, toArray } from 'rxjs';
import type { ProviderEvent } from '../../../src/index.js';
import type { FetchLike, StreamRequest } from '../../../src/providers/http/settings.js';
import { WireError, WireTranslator, streamRequest } from '../../../src/providers/http/transport.js';

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
const failed = (errorMessage: string): ProviderEvent => ({ type: 'message_end', stopReason: 'error', errorMessage });

describe('streamRequest: the request\'s lifetime', () => {
  it('sends, and streams the reply: message_start, the translated events, message_end', async () => {
    const fetch = replies(sse('data: Hi\n\ndata: there\n\ndata: [END]\n\n'));
    expect(await collect(call(fetch))).toEqual([start, text('Hi'), text('there'), { type: 'message_end', stopReason: 'stop' }]);
    expect(fetch.calls).toBe(1);
  });

  it('P4: retries a 5xx and a 429 before the reply, then streams it', async () => {
    const fetch = replies(status(503, { 'retry-after-ms': '0' }), status(429, { 'retry-after': '0' }), sse('data: ok\n\ndata: [END]\n\n'));
    expect(await collect(call(fetch))).toEqual([start, text('ok'), { type: 'message_end', stopReason: 'stop' }]);
    expect(fetch.calls).toBe(3);
  });

  it('P4: a failure before the reply is message_start and message_end, its text redacted', async () => {
    const fetch = replies(status(503, { 'retry-after': '0' }), status(401));
    expect(await collect(call(fetch))).toEqual([start, failed('HTTP 401: status 401, key [redacted]')]);
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
    expect(await collect(call(fetch))).toEqual([start, text('Hal'), failed('the stream broke off: connection reset ([redacted])')]);
    expect(fetch.calls).toBe(1);
  });

  it('P4: a translator\'s WireError ends the call, its text redacted, without a retry', async () => {
    const fetch = replies(sse(`data: a\n\ndata: !bad key ${KEY}\n\n`));
    expect(await collect(call(fetch))).toEqual([start, text('a'), failed('error in the stream: bad key [redacted]')]);
    expect(fetch.calls).toBe(1);
  });

  it('a prepare() that throws is a failed call, not an Observable error', async () => {
    const events = streamRequest(
      () => {
        throw new Error('no body for this input');
      },
      () => new TextTranslator(),
    );
    expect(await collect(events)).toEqual([start, failed('no body for this input')]);
  });
});
