import { request as httpRequest } from 'node:http';
import { NEVER, Observable, concat, finalize, interval, map, mergeMap, of, range, tap, throwError, timer } from 'rxjs';
import { UI_MESSAGE_STREAM_HEADERS } from 'ai';
import { LoopEvent, ProviderEvent, ToolRegistry, runEventedToolLoop } from 'rx-tool-loop';
import { replayable, writeSse } from 'rx-tool-loop/ui';
import { until } from '../support/until';
import { TestServer, serve } from './support/http';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function body(url: string, init?: RequestInit): Promise<{ headers: Headers; text: string }> {
  const response = await fetch(url, init);
  return { headers: response.headers, text: await response.text() };
}

describe('writeSse', () => {
  it('U3: text/event-stream, no caching, an id per event, JSON data, and the end of events$ ends the response', async () => {
    server = await serve((_request, response) => writeSse(response, of({ type: 'a', n: 1 }, { type: 'b', text: 'x\ny' }), { heartbeatMs: Infinity }));
    const { headers, text } = await body(server.url);
    expect(headers.get('content-type')).toBe('text/event-stream');
    expect(headers.get('cache-control')).toBe('no-cache, no-transform');
    expect(headers.get('x-vercel-ai-ui-message-stream')).toBeNull();
    expect(text).toBe('id: 0\ndata: {"type":"a","n":1}\n\nid: 1\ndata: {"type":"b","text":"x\\ny"}\n\n');
  });

  it('U3: an error in events$ becomes `event: error` (reason failed) after the events sent, then the end', async () => {
    server = await serve((_request, response) => writeSse(response, concat(of(1), throwError(() => new Error('model down'))), { heartbeatMs: Infinity }));
    const { text } = await body(server.url);
    expect(text).toBe('id: 0\ndata: 1\n\nevent: error\ndata: {"type":"error","reason":"failed","message":"model down"}\n\n');
  });

  it("U3: protocol 'ui-message-stream' is the AI SDK's wire: its header, its error chunk, data: [DONE] at the end", async () => {
    server = await serve((request, response) =>
      writeSse(response, request.url === '/fail' ? throwError(() => new Error('no')) : of({ type: 'start' }, { type: 'finish' }), { protocol: 'ui-message-stream', heartbeatMs: Infinity }),
    );
    const ok = await body(server.url);
    for (const [name, value] of Object.entries(UI_MESSAGE_STREAM_HEADERS)) {
      expect([name, ok.headers.get(name)?.split(',')[0]]).toEqual([name, value]);
    }
    expect(ok.text).toBe('id: 0\ndata: {"type":"start"}\n\nid: 1\ndata: {"type":"finish"}\n\ndata: [DONE]\n\n');
    const failed = await body(`${server.url}/fail`);
    expect(failed.text).toBe('event: error\ndata: {"type":"error","errorText":"no"}\n\ndata: [DONE]\n\n');
  });

  it('U3: a heartbeat comment after heartbeatMs of silence; retryMs is sent first; ids and data as the options say', async () => {
    server = await serve((_request, response) =>
      writeSse(response, concat(of('a'), timer(120).pipe(map(() => 'b'))), { heartbeatMs: 20, retryMs: 1500, id: (event, index) => `e${index}-${event}`, data: (event) => event.toUpperCase() }),
    );
    const { text } = await body(server.url);
    expect(text.startsWith('retry: 1500\n\nid: e0-a\ndata: A\n\n: keep-alive\n\n')).toBe(true);
    expect(text.endsWith(': keep-alive\n\nid: e1-b\ndata: B\n\n')).toBe(true);
  });

  it('U3: bad options are named at call time', async () => {
    const calls: string[] = [];
    server = await serve((_request, response) => {
      for (const options of [{ heartbeatMs: 0 }, { bufferSize: -1 }, { protocol: 'sse' }, { id: 'n' }, { lastEventId: 3 }]) {
        try {
          writeSse(response, of(1), options as never);
        } catch (error) {
          calls.push((error as Error).message);
        }
      }
      try {
        writeSse(response, replayable(of(1), { bufferSize: 1 }), { id: () => 'x' });
      } catch (error) {
        calls.push((error as Error).message);
      }
      response.end();
    });
    await body(server.url);
    expect(calls).toEqual([
      'writeSse: heartbeatMs must be an integer >= 1 or Infinity, got 0, a number',
      'writeSse: bufferSize must be an integer >= 0, got -1, a number',
      'writeSse: protocol must be \'json\' or \'ui-message-stream\', got "sse", a string',
      'writeSse: id must be a function, got "n", a string',
      'writeSse: lastEventId must be a string (the Last-Event-ID header), got 3, a number',
      'writeSse: id must be left out for a replayable run: it numbers its own events, and Last-Event-ID resumes from those numbers',
    ]);
  });

  it("U3: the client's disconnect unsubscribes the loop: its provider call and its tool are torn down (a real socket)", async () => {
    const seen: string[] = [];
    let toolSignal: AbortSignal | undefined;
    const provider = (): Observable<ProviderEvent> =>
      of<ProviderEvent[]>({ type: 'message_start' }, { type: 'tool_call', call: { id: 'c1', name: 'slow', input: {} } }, { type: 'message_end', stopReason: 'toolUse' });
    const registry = new ToolRegistry().register({
      name: 'slow',
      description: 'takes long',
      input: {},
      handler: (_input, context) =>
        new Observable<string>(() => {
          toolSignal = context.signal;
          context.signal.addEventListener('abort', () => seen.push('tool signal aborted'));
          return () => seen.push('tool unsubscribed');
        }),
    });
    server = await serve((_request, response) =>
      writeSse(response, runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'go' }] }).pipe(finalize(() => seen.push('loop unsubscribed'))), { heartbeatMs: Infinity }),
    );

    // the tool: the client leaves while it runs
    const received = await readUntil(server.url, '"tool_start"');
    expect(received).toContain('"type":"tool_call"');
    await until(() => seen.includes('loop unsubscribed'), 'the loop to be unsubscribed');
    expect(toolSignal?.aborted).toBe(true);
    expect(seen).toEqual(expect.arrayContaining(['tool signal aborted', 'tool unsubscribed', 'loop unsubscribed']));
  });

  it("U3: the client's disconnect during a model call tears the provider call down (a real socket)", async () => {
    const seen: string[] = [];
    const provider = (): Observable<ProviderEvent> =>
      concat(of<ProviderEvent[]>({ type: 'message_start' }, { type: 'text_delta', text: 'thinking' }), NEVER).pipe(finalize(() => seen.push('provider call torn down')));
    server = await serve((_request, response) => writeSse(response, runEventedToolLoop({ provider, registry: new ToolRegistry(), messages: [{ role: 'user', content: 'go' }] }), { heartbeatMs: Infinity }));
    expect(await readUntil(server.url, 'thinking')).toContain('"text_delta"');
    await until(() => seen.includes('provider call torn down'), 'the provider call to be torn down');
  });

  it('U3: a client that never reads: writing pauses, at most bufferSize events wait, then `event: error` (stalled) and events$ is unsubscribed', async () => {
    const bufferSize = 50;
    let emitted = 0;
    let emittedWhenFull: number | undefined;
    let maxQueued = 0;
    let unsubscribed = false;
    let responseClosed = false;
    const big = 'x'.repeat(1024);
    const events$ = interval(0).pipe(
      mergeMap((tick) => range(tick * 200, 200)),
      finalize(() => (unsubscribed = true)),
    );
    server = await serve((_request, response) => {
      const write = response.write.bind(response) as (chunk: string) => boolean;
      // the socket's side: count what the writer holds back once the socket said "full"
      response.write = ((chunk: string) => {
        const ok = write(chunk);
        if (!ok && emittedWhenFull === undefined) emittedWhenFull = emitted;
        return ok;
      }) as typeof response.write;
      response.on('close', () => (responseClosed = true));
      writeSse(
        response,
        events$.pipe(
          tap(() => {
            emitted++;
            if (emittedWhenFull !== undefined) maxQueued = Math.max(maxQueued, emitted - emittedWhenFull);
          }),
          map((n) => `${n}${big}`),
        ),
        { bufferSize, heartbeatMs: 100 },
      );
    });
    // a client that opens the stream and never reads a byte
    const { port } = new URL(server.url);
    const request = httpRequest({ host: '127.0.0.1', port, path: '/' });
    request.on('response', (response) => response.pause());
    request.on('error', () => undefined);
    request.end();
    await until(() => unsubscribed, 'events$ to be unsubscribed', 20_000);
    expect(emittedWhenFull).toBeDefined();
    // the event that found the queue full is the one that ended the stream
    expect(maxQueued).toBeLessThanOrEqual(bufferSize + 1);
    const at = emitted;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(emitted).toBe(at);
    // the stalled socket is cut off after heartbeatMs
    await until(() => responseClosed, 'the stalled response to be destroyed');
    request.destroy();
  }, 30_000);

  it('U3: a client that stalls, then reads, gets the events that waited, then `event: error` (stalled), in order', async () => {
    let unsubscribed = false;
    server = await serve((_request, response) => {
      const events$ = interval(0).pipe(
        mergeMap((tick) => range(tick * 100, 100)),
        map((n) => `${n}:${'y'.repeat(4096)}`),
        finalize(() => (unsubscribed = true)),
      );
      writeSse(response, events$, { bufferSize: 10, heartbeatMs: 10_000, data: (event) => event });
    });
    const { port } = new URL(server.url);
    const text = await new Promise<string>((resolve) => {
      const request = httpRequest({ host: '127.0.0.1', port, path: '/' });
      request.on('response', (response) => {
        response.pause();
        // read nothing until the kernel's and node's buffers, then the writer's queue, have filled and the writer gave up
        void until(() => unsubscribed, 'the writer to give up on the client', 20_000).then(() => {
          let all = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (all += chunk));
          response.on('end', () => resolve(all));
          response.resume();
        });
      });
      request.end();
    });
    const events = text.split('\n\n').filter((frame) => frame !== '');
    const last = events.pop()!;
    expect(last).toBe('event: error\ndata: {"type":"error","reason":"stalled","message":"the client read nothing while 10 events waited (bufferSize)"}');
    // every event before it, numbered 0, 1, 2, … with no gap
    events.forEach((frame, index) => expect(frame.startsWith(`id: ${index}\ndata: ${index}:`)).toBe(true));
  }, 30_000);

  it('U3: unsubscribing the returned Subscription ends the response and unsubscribes events$', async () => {
    let unsubscribed = false;
    server = await serve((_request, response) => {
      const subscription = writeSse(response, concat(of('first'), NEVER).pipe(finalize(() => (unsubscribed = true))), { heartbeatMs: Infinity });
      setTimeout(() => subscription.unsubscribe(), 20);
    });
    const { text } = await body(server.url);
    expect(text).toBe('id: 0\ndata: "first"\n\n');
    expect(unsubscribed).toBe(true);
  });

  it('U4: a replayable run through writeSse resumes after Last-Event-ID with the run\'s own ids', async () => {
    const run = replayable(of<LoopEvent['type'][]>('message_start', 'turn_start', 'turn_end', 'loop_end'), { bufferSize: 10 });
    server = await serve((request, response) => writeSse(response, run, { heartbeatMs: Infinity, lastEventId: request.headers['last-event-id'] as string | undefined }));
    expect((await body(server.url)).text).toBe('id: 0\ndata: "message_start"\n\nid: 1\ndata: "turn_start"\n\nid: 2\ndata: "turn_end"\n\nid: 3\ndata: "loop_end"\n\n');
    expect((await body(server.url, { headers: { 'last-event-id': '1' } })).text).toBe('id: 2\ndata: "turn_end"\n\nid: 3\ndata: "loop_end"\n\n');
  });
});

/** Reads a stream until `marker` arrives, then destroys the socket as a closed tab does; what arrived. */
function readUntil(url: string, marker: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
        if (text.includes(marker)) {
          request.destroy();
          resolve(text);
        }
      });
    });
    request.on('error', (error) => {
      if (!request.destroyed) reject(error);
    });
    request.end();
  });
}
