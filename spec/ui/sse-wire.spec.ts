/**
 * U3 against the AI SDK's own client side: what `writeSse` writes with protocol 'ui-message-stream' (ids,
 * heartbeats, the error chunk, [DONE]) is read by `ai`'s `parseJsonEventStream` with `uiMessageChunkSchema`, and
 * `readUIMessageStream` rebuilds the message — as `useChat`'s transport reads a response.
 */
import { concat, delay, of, throwError } from 'rxjs';
import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema, type UIMessage, type UIMessageChunk } from 'ai';
import { writeSse } from 'rx-tool-loop/ui';
import { TestServer, serve } from './support/http';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const chunks: UIMessageChunk[] = [
  { type: 'start', messageId: 'm1' },
  { type: 'start-step' },
  { type: 'text-start', id: 't1' },
  { type: 'text-delta', id: 't1', delta: 'It is ' },
  { type: 'text-delta', id: 't1', delta: 'noon.' },
  { type: 'text-end', id: 't1' },
  { type: 'finish-step' },
  { type: 'finish' },
];

async function readWithAi(url: string): Promise<{ parts: UIMessageChunk[]; message: UIMessage | undefined }> {
  const response = await fetch(url);
  const parts: UIMessageChunk[] = [];
  const reader = parseJsonEventStream({ stream: response.body!, schema: uiMessageChunkSchema }).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!value.success) throw value.error;
    parts.push(value.value as UIMessageChunk);
  }
  let message: UIMessage | undefined;
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
  for await (const m of readUIMessageStream({ stream })) message = m;
  return { parts, message };
}

describe("writeSse on the AI SDK's wire", () => {
  it("U3: ai's own parser reads every chunk (ids and heartbeats in between), and readUIMessageStream rebuilds the message", async () => {
    // a pause mid-stream, so that a heartbeat falls between two chunks
    server = await serve((_request, response) => writeSse(response, concat(of(...chunks.slice(0, 4)), of(...chunks.slice(4)).pipe(delay(60))), { protocol: 'ui-message-stream', heartbeatMs: 20 }));
    const raw = await (await fetch(server.url)).text();
    expect(raw).toContain(': keep-alive\n\n');
    const { parts, message } = await readWithAi(server.url);
    expect(parts).toEqual(chunks);
    expect(message?.id).toBe('m1');
    expect(message?.parts.filter((part) => part.type === 'text')).toEqual([{ type: 'text', text: 'It is noon.', state: 'done' }]);
  });

  it("U3: an error reaches ai's parser as its own error chunk", async () => {
    server = await serve((_request, response) => writeSse(response, concat(of(chunks[0]!), throwError(() => new Error('model down'))), { protocol: 'ui-message-stream' }));
    const { parts } = await readWithAi(server.url);
    expect(parts).toEqual([chunks[0], { type: 'error', errorText: 'model down' }]);
  });
});
