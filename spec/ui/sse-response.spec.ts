import { Readable } from 'node:stream';
import { NEVER, concat, finalize, interval, mergeMap, of, range, take, tap, throwError } from 'rxjs';
import { replayable, sseResponse } from 'rx-tool-loop/ui';
import { until } from '../support/until';
import { serve } from './support/http';

describe('sseResponse', () => {
  it('U3: a fetch-API Response with the same wire as writeSse: headers, ids, data, the end', async () => {
    const response = sseResponse(of({ type: 'a' }, { type: 'b' }), { heartbeatMs: Infinity });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.headers.get('cache-control')).toBe('no-cache, no-transform');
    expect(response.headers.get('connection')).toBeNull();
    expect(await response.text()).toBe('id: 0\ndata: {"type":"a"}\n\nid: 1\ndata: {"type":"b"}\n\n');
  });

  it("U3: an error becomes `event: error`, then the end; protocol 'ui-message-stream' ends with data: [DONE]", async () => {
    const failed = sseResponse(concat(of(1), throwError(() => new Error('boom'))), { heartbeatMs: Infinity });
    expect(await failed.text()).toBe('id: 0\ndata: 1\n\nevent: error\ndata: {"type":"error","reason":"failed","message":"boom"}\n\n');
    const ui = sseResponse(of({ type: 'start' }), { heartbeatMs: Infinity, protocol: 'ui-message-stream' });
    expect(ui.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    expect(await ui.text()).toBe('id: 0\ndata: {"type":"start"}\n\ndata: [DONE]\n\n');
  });

  it("U3: errorData writes the error event's data: the failure's reason and message, as the server wants them", async () => {
    const failures: unknown[] = [];
    const errorData = (failure: { reason: string; message: string }) => (failures.push(failure), `${failure.reason}: ${failure.message}`);
    const failed = sseResponse(concat(of(1), throwError(() => new Error('boom'))), { heartbeatMs: Infinity, errorData });
    expect(await failed.text()).toBe('id: 0\ndata: 1\n\nevent: error\ndata: failed: boom\n\n');
    // the AI SDK's wire too: its default chunk replaced, [DONE] still after it
    const ui = sseResponse(throwError(() => new Error('no')), { heartbeatMs: Infinity, protocol: 'ui-message-stream', errorData });
    expect(await ui.text()).toBe('event: error\ndata: failed: no\n\ndata: [DONE]\n\n');
    expect(failures).toEqual([
      { reason: 'failed', message: 'boom' },
      { reason: 'failed', message: 'no' },
    ]);
  });

  it("U3: the body's cancel (the client's disconnect) unsubscribes events$", async () => {
    let unsubscribed = false;
    const response = sseResponse(concat(of('one'), NEVER).pipe(finalize(() => (unsubscribed = true))), { heartbeatMs: Infinity });
    const reader = response.body!.getReader();
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toBe('id: 0\ndata: "one"\n\n');
    expect(unsubscribed).toBe(false);
    await reader.cancel();
    expect(unsubscribed).toBe(true);
  });

  it('U3: pull-based backpressure: a reader that never reads holds at most 16 KiB and bufferSize events, then `event: error` (stalled) and events$ is unsubscribed', async () => {
    let emitted = 0;
    let unsubscribed = false;
    const response = sseResponse(
      range(0, 1_000_000).pipe(
        tap(() => emitted++),
        finalize(() => (unsubscribed = true)),
      ),
      { bufferSize: 20, heartbeatMs: Infinity, data: () => 'z'.repeat(1000) },
    );
    // the stream pulls once on its own, to fill its 16 KiB; nobody reads
    await until(() => unsubscribed, 'events$ to be unsubscribed');
    // 16 KiB of 1 KiB frames fill it, then 20 wait, and the next one ends it
    expect(emitted).toBe(17 + 20 + 1);
    const text = await response.text();
    const frames = text.split('\n\n').filter((frame) => frame !== '');
    expect(frames).toHaveLength(17 + 20 + 1);
    expect(frames.at(-1)).toBe('event: error\ndata: {"type":"error","reason":"stalled","message":"the client read nothing while 20 events waited (bufferSize)"}');
  });

  it('U3: served by node:http (Readable.fromWeb), a reader that keeps up gets every event of bursts bigger than the stream holds', async () => {
    const server = await serve((_request, response) => {
      // bursts of 250 events of 200 bytes: 50 KB each, past the 16 KiB the stream holds, within bufferSize
      const events$ = interval(0).pipe(take(20), mergeMap((tick) => range(tick * 250, 250)));
      // bufferSize holds every event: a reader slowed by a busy machine must not make this a stall
      const sse = sseResponse(events$, { heartbeatMs: Infinity, bufferSize: 5_000, data: (n) => `${n}${'.'.repeat(200)}` });
      response.writeHead(sse.status, Object.fromEntries(sse.headers));
      Readable.fromWeb(sse.body! as never).pipe(response);
    });
    try {
      const text = await (await fetch(server.url)).text();
      const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
      expect(ids).toEqual([...Array(5_000).keys()]);
    } finally {
      await server.close();
    }
  });

  it('U4: a replayable run resumes after lastEventId', async () => {
    const run = replayable(of('a', 'b', 'c'), { bufferSize: 5 });
    expect(await sseResponse(run, { heartbeatMs: Infinity }).text()).toBe('id: 0\ndata: "a"\n\nid: 1\ndata: "b"\n\nid: 2\ndata: "c"\n\n');
    expect(await sseResponse(run, { heartbeatMs: Infinity, lastEventId: '0' }).text()).toBe('id: 1\ndata: "b"\n\nid: 2\ndata: "c"\n\n');
  });
});
