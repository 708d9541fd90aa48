import { NEVER, concat, finalize, firstValueFrom, interval, last, lastValueFrom, map, of, take, throwError, toArray } from 'rxjs';
import { LoopEvent, ProviderInput, ToolRegistry, runEventedToolLoop, scriptedProvider, toViewModel } from 'rx-tool-loop';
import { SseError, fromSse, replayable, writeSse } from 'rx-tool-loop/ui';
import { until } from '../support/until';
import { TestServer, serve } from './support/http';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** s04's scripted conversation: a call to current_time (it takes 20 ms), then an answer from its result. */
function s04Loop(prompt: string) {
  const registry = new ToolRegistry().register({
    name: 'current_time',
    description: 'the time',
    input: {},
    handler: () => new Promise<string>((resolve) => setTimeout(() => resolve('2025-01-01T00:00:00Z'), 20)),
  });
  const provider = scriptedProvider([
    [{ type: 'message_start' }, { type: 'tool_call', call: { id: 'call_1', name: 'current_time', input: {} } }, { type: 'message_end', stopReason: 'toolUse' }],
    (input: ProviderInput) => [
      { type: 'message_start' },
      { type: 'text_delta', text: 'It is ' },
      { type: 'text_delta', text: String(input.messages.at(-1)!.content) },
      { type: 'message_end', stopReason: 'stop' },
    ],
  ]);
  return runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: prompt }] });
}

/** Destroys the response's socket right after the write that carries its `count`-th event, as a proxy that cuts a stream; when it did. */
function dropAfter(response: import('node:http').ServerResponse, count: number): { at: number } {
  const dropped = { at: 0 };
  let sent = 0;
  const write = response.write.bind(response) as (chunk: string) => boolean;
  response.write = ((chunk: string) => {
    const ok = write(chunk);
    // a write may carry several frames (a burst leaves as one)
    const before = sent;
    sent += (chunk.match(/^id: /gm) ?? []).length;
    if (before < count && sent >= count) {
      dropped.at = Date.now();
      setImmediate(() => response.socket?.destroy());
    }
    return ok;
  }) as typeof response.write;
  return dropped;
}

describe('fromSse', () => {
  it('U5: fromSse(url).pipe(toViewModel()) drives a view model from a loop on the server', async () => {
    server = await serve((_request, response) => writeSse(response, s04Loop('what time is it?')));
    const views = await lastValueFrom(fromSse<LoopEvent>(server.url).pipe(toViewModel(), toArray()));
    const end = views.at(-1)!;
    expect(end.status).toBe('done');
    expect(end.text).toBe('It is 2025-01-01T00:00:00Z');
    expect(views.some((view) => view.tools.some((tool) => tool.name === 'current_time' && tool.state === 'running'))).toBe(true);
    // the same as the view model of the loop run here
    const local = await lastValueFrom(s04Loop('what time is it?').pipe(toViewModel()));
    expect(end).toEqual(local);
  });

  it('U5: every data parsed as JSON, the AI SDK\'s [DONE] skipped; init goes to fetch (a POST with a body)', async () => {
    let body = '';
    server = await serve((request, response) => {
      request.on('data', (chunk: Buffer) => (body += chunk));
      request.on('end', () => writeSse(response, of({ type: 'start' }, { type: 'finish' }), { protocol: 'ui-message-stream' }));
    });
    const chunks = await lastValueFrom(fromSse(server.url, { method: 'POST', body: '{"prompt":"hi"}' }).pipe(toArray()));
    expect(chunks).toEqual([{ type: 'start' }, { type: 'finish' }]);
    expect(body).toBe('{"prompt":"hi"}');
  });

  it('U5: unsubscribing aborts the request: the server sees the socket close and the loop unsubscribed', async () => {
    let closed = false;
    let loopUnsubscribed = false;
    server = await serve((_request, response) => {
      response.on('close', () => (closed = true));
      writeSse(response, concat(of({ type: 'turn_start', turn: 1 }), NEVER).pipe(finalize(() => (loopUnsubscribed = true))));
    });
    const first = await firstValueFrom(fromSse(server.url));
    expect(first).toEqual({ type: 'turn_start', turn: 1 });
    await until(() => closed && loopUnsubscribed, 'the server to see the client leave');
  });

  it('U5: the server\'s event: error errors the Observable with an SseError (its reason and message)', async () => {
    server = await serve((_request, response) => writeSse(response, concat(of(1), throwError(() => new Error('model down')))));
    const seen: unknown[] = [];
    const error = await new Promise<SseError>((resolve) => fromSse(server!.url).subscribe({ next: (v) => seen.push(v), error: resolve }));
    expect(seen).toEqual([1]);
    expect(error).toBeInstanceOf(SseError);
    expect([error.message, error.reason]).toEqual(['model down', 'failed']);
  });

  it('U5: a 204 completes at once; a 404 is an SseError (http); a bad argument is named', async () => {
    server = await serve((request, response) => {
      response.writeHead(request.url === '/none' ? 204 : 404).end();
    });
    expect(await lastValueFrom(fromSse(`${server.url}/none`).pipe(toArray()))).toEqual([]);
    await expect(lastValueFrom(fromSse(`${server.url}/missing`))).rejects.toMatchObject({ name: 'SseError', reason: 'http', message: `fromSse: HTTP 404 Not Found from ${server.url}/missing` });
    expect(() => fromSse(42 as never)).toThrow('fromSse: url must be a string or a URL, got 42, a number');
    expect(() => fromSse('http://127.0.0.1/', { reconnect: -1 })).toThrow('fromSse: reconnect must be an integer >= 0, got -1, a number');
  });

  it('U5: a dropped connection is reconnected with Last-Event-ID after the server\'s retry:, and a replayable run goes on with no gap and no duplicate', async () => {
    const run = replayable(interval(2).pipe(take(40), map((n) => ({ n }))), { bufferSize: 100 });
    const connections: { lastEventId: string | undefined; at: number }[] = [];
    let dropped = { at: 0 };
    server = await serve((request, response) => {
      const lastEventId = request.headers['last-event-id'] as string | undefined;
      connections.push({ lastEventId, at: Date.now() });
      // the first connection dies after its 10th event
      if (connections.length === 1) dropped = dropAfter(response, 10);
      writeSse(response, run, { lastEventId, retryMs: 150 });
    });
    const events = await lastValueFrom(fromSse<{ n: number }>(server.url, { reconnect: 2 }).pipe(toArray()));
    expect(events.map((event) => event.n)).toEqual([...Array(40).keys()]);
    expect(connections.map((connection) => connection.lastEventId)).toEqual([undefined, '9']);
    expect(connections[1]!.at - dropped.at).toBeGreaterThanOrEqual(140);
  });

  it("U5: a retry: the server sent just before the connection dropped is the wait before the reconnect", async () => {
    jest.useFakeTimers();
    const asked: (string | null)[] = [];
    // the first stream: an event, the server's retry: alone (as writeSse starts a stream), then the drop
    const first = ['id: 3\ndata: 1\n\n', 'retry: 5000\n\n'];
    const fetchStub = jest.spyOn(globalThis, 'fetch').mockImplementation(async (_url, init) => {
      asked.push(new Headers(init?.headers).get('last-event-id'));
      if (asked.length > 1) return new Response('data: 2\n\n', { headers: { 'content-type': 'text/event-stream' } });
      const pieces = [...first];
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          const piece = pieces.shift();
          if (piece === undefined) controller.error(new TypeError('terminated'));
          else controller.enqueue(new TextEncoder().encode(piece));
        },
      });
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
    });
    try {
      const seen: unknown[] = [];
      let completed = false;
      fromSse<number>('http://127.0.0.1/run', { reconnect: 1 }).subscribe({ next: (n) => seen.push(n), complete: () => (completed = true) });
      // past the default 1 s: still waiting the server's 5 s
      await jest.advanceTimersByTimeAsync(4_999);
      expect([asked, seen]).toEqual([[null], [1]]);
      await jest.advanceTimersByTimeAsync(1);
      expect([asked, seen, completed]).toEqual([[null, '3'], [1, 2], true]);
    } finally {
      fetchStub.mockRestore();
      jest.useRealTimers();
    }
  });

  it('U5: without reconnects left, a dropped connection errors the Observable (reason dropped)', async () => {
    server = await serve((_request, response) => {
      writeSse(response, concat(of('a'), NEVER));
      setTimeout(() => response.socket?.destroy(), 30);
    });
    const seen: unknown[] = [];
    const error = await new Promise<SseError>((resolve) => fromSse(server!.url).subscribe({ next: (v) => seen.push(v), error: resolve }));
    expect(seen).toEqual(['a']);
    expect([error.reason, error.message]).toEqual(['dropped', `fromSse: the connection to ${server.url} dropped`]);
  });

  it('U5: a view model rebuilt across a dropped connection equals one that never dropped', async () => {
    const run = replayable(s04Loop('now?'), { bufferSize: 100 });
    const resumedAfter: (string | undefined)[] = [];
    server = await serve((request, response) => {
      const lastEventId = request.headers['last-event-id'] as string | undefined;
      // the first connection dies after its 3rd event, while the tool runs
      if (resumedAfter.length === 0) dropAfter(response, 3);
      resumedAfter.push(lastEventId);
      writeSse(response, run, { lastEventId, retryMs: 1 });
    });
    const view = await lastValueFrom(fromSse<LoopEvent>(server.url, { reconnect: 1 }).pipe(toViewModel(), last()));
    // it reconnected once, after the last event that reached it (the burst before the tool: 5 events)
    expect(resumedAfter).toEqual([undefined, '4']);
    expect(view).toEqual(await lastValueFrom(s04Loop('now?').pipe(toViewModel())));
  });
});
