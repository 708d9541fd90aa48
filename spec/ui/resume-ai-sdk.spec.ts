/**
 * U4 against the AI SDK's own client: `useChat({ resume: true })` reconnects through its transport's
 * `reconnectToStream` — a GET to `{api}/{chatId}/stream` that wants a 204 when nothing runs, else the run's UI
 * message stream from its start. A `replayable` run served by `writeSse` answers both, and `readUIMessageStream`
 * rebuilds the message the first connection was reading.
 */
import { Subject, concat, ignoreElements, of, take } from 'rxjs';
import { DefaultChatTransport, readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { ReplayableRun, replayable, writeSse } from 'rx-tool-loop/ui';
import { TestServer, serve } from './support/http';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("a replayable run resumed by the AI SDK's transport", () => {
  it("U4: reconnectToStream gets 204 (null) when nothing runs, else the whole run from its start, and rebuilds the message", async () => {
    const runs = new Map<string, ReplayableRun<UIMessageChunk>>();
    // a run that is still going when the client comes back: its second half waits for that
    const comeBack = new Subject<void>();
    const run = replayable(
      concat(
        of<UIMessageChunk[]>({ type: 'start', messageId: 'm1' }, { type: 'start-step' }, { type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'It is ' }),
        comeBack.pipe(take(1), ignoreElements()),
        of<UIMessageChunk[]>({ type: 'text-delta', id: 't', delta: 'noon.' }, { type: 'text-end', id: 't' }, { type: 'finish-step' }, { type: 'finish' }),
      ),
      { bufferSize: 100 },
    );
    run.subscribe(); // the POST that started it, whose client went away
    runs.set('c1', run);
    server = await serve((request, response) => {
      const match = /^\/api\/chat\/([^/]+)\/stream$/.exec(request.url ?? '');
      const found = match ? runs.get(decodeURIComponent(match[1]!)) : undefined;
      if (request.method !== 'GET' || found === undefined || found.done) {
        response.writeHead(204).end();
        return;
      }
      writeSse(response, found, { protocol: 'ui-message-stream', lastEventId: request.headers['last-event-id'] as string | undefined });
      setTimeout(() => comeBack.next(), 20);
    });
    const transport = new DefaultChatTransport<UIMessage>({ api: `${server.url}/api/chat` });
    expect(await transport.reconnectToStream({ chatId: 'nothing-here' })).toBeNull();
    const stream = await transport.reconnectToStream({ chatId: 'c1' });
    expect(stream).not.toBeNull();
    let message: UIMessage | undefined;
    for await (const m of readUIMessageStream({ stream: stream! })) message = m;
    expect(message?.id).toBe('m1');
    expect(message?.parts.filter((part) => part.type === 'text')).toEqual([{ type: 'text', text: 'It is noon.', state: 'done' }]);
    // the run has ended: a later resume finds nothing live
    expect(run.done).toBe(true);
    expect(await transport.reconnectToStream({ chatId: 'c1' })).toBeNull();
  });
});
