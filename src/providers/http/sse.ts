/**
 * One server-sent event: its `event:` name, `id:` and `retry:` (when the server sent them) and its `data:` lines
 * joined by `\n`. A block that sets only the reconnection time (`retry: 1000` and a blank line, as `writeSse`
 * starts a stream) comes too, as `{ data: '', retry }` ({@link isRetryOnly}): a client that reconnects must hear it
 * even when the connection drops before the next event.
 */
export interface SseEvent {
  event?: string;
  data: string;
  id?: string;
  /** How long, in ms, the server asks a client to wait before it reconnects. */
  retry?: number;
}

/** A block that only set the reconnection time: no data to read. */
export function isRetryOnly(event: SseEvent): boolean {
  return event.retry !== undefined && event.data === '';
}

/**
 * The events of a `text/event-stream` body, as its bytes arrive. Handles `\n`, `\r\n` and `\r` line
 * ends, comment lines (`: keep-alive`), multi-line `data:`, UTF-8 characters split across chunks, and
 * a last event without its closing blank line (flushed at the end of the stream). Stopping early (a
 * `break`, or an error in the loop's body) cancels the stream. Each chunk of bytes bumps
 * `count.chunks`, events or not: what an idle timeout watches (P12).
 *
 * ```ts
 * const response = await fetch(url, { method: 'POST', body });
 * for await (const { event, data } of readServerSentEvents(response.body!)) {
 *   if (data === '[DONE]') break;
 *   console.log(event, JSON.parse(data));
 * }
 * ```
 */
export async function* readServerSentEvents(body: ReadableStream<Uint8Array>, count: { chunks: number } = { chunks: 0 }): AsyncGenerator<SseEvent, void, undefined> {
  const parser = new SseParser();
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let finished = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      count.chunks++;
      if (done) {
        finished = true;
        yield* parser.push(decoder.decode(), true);
        return;
      }
      yield* parser.push(decoder.decode(value, { stream: true }), false);
    }
  } finally {
    // stopped early: let the transport close the connection
    if (!finished) reader.cancel().catch(() => undefined);
  }
}

/**
 * The line-level SSE parser: feed it decoded text in pieces of any size; it returns the events each
 * piece completes. `push(text, true)` ends the stream and flushes an unterminated last event.
 *
 * ```ts
 * const parser = new SseParser();
 * parser.push('event: ping\ndata: {}\n', false); // []
 * parser.push('\n', false);                       // [{ event: 'ping', data: '{}' }]
 * ```
 */
export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private event: string | undefined;
  private id: string | undefined;
  private retry: number | undefined;

  push(text: string, end: boolean): SseEvent[] {
    // the kept text holds no line end but perhaps a last '\r': scan from there, not from the start again
    const lineEnd = /\r\n|\r|\n/g;
    lineEnd.lastIndex = Math.max(0, this.buffer.length - 1);
    this.buffer += text;
    const events: SseEvent[] = [];
    let start = 0;
    for (let match = lineEnd.exec(this.buffer); match !== null; match = lineEnd.exec(this.buffer)) {
      // a '\r' that ends the text so far may be the first half of '\r\n': wait for the next piece
      if (!end && match[0] === '\r' && match.index === this.buffer.length - 1) break;
      this.line(this.buffer.slice(start, match.index), events);
      start = lineEnd.lastIndex;
    }
    this.buffer = this.buffer.slice(start);
    if (end) {
      if (this.buffer !== '') this.line(this.buffer, events);
      this.buffer = '';
      this.line('', events); // the stream ended without the blank line that closes the last event
    }
    return events;
  }

  private line(line: string, events: SseEvent[]): void {
    if (line === '') {
      if (this.data.length > 0) {
        const event: SseEvent = { data: this.data.join('\n') };
        if (this.event !== undefined) event.event = this.event;
        if (this.id !== undefined) event.id = this.id;
        if (this.retry !== undefined) event.retry = this.retry;
        events.push(event);
      } else if (this.retry !== undefined) {
        events.push({ data: '', retry: this.retry });
      }
      this.data = [];
      this.event = undefined;
      this.id = undefined;
      this.retry = undefined;
      return;
    }
    if (line.startsWith(':')) return; // a comment
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    // what a client that reconnects needs (fromSse, U5); a model reply is never resumed and ignores them
    else if (field === 'id' && !value.includes('\0')) this.id = value;
    else if (field === 'retry' && /^\d+$/.test(value)) this.retry = Number(value);
  }
}
