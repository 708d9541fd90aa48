import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { SseEvent, SseParser, readServerSentEvents } from '../../../src/providers/http/sse.js';
import { fixture } from '../loopback-server';

/** A body that delivers exactly these byte pieces. */
function bodyOf(pieces: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const piece of pieces) controller.enqueue(piece);
      controller.close();
    },
  });
}

async function read(pieces: Uint8Array[]): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of readServerSentEvents(bodyOf(pieces))) events.push(event);
  return events;
}

const bytes = (text: string) => new TextEncoder().encode(text);

function parseAll(text: string): SseEvent[] {
  const parser = new SseParser();
  return [...parser.push(text, false), ...parser.push('', true)];
}

describe('SseParser', () => {
  it('reads data and event fields, one event per blank line', () => {
    expect(parseAll('event: a\ndata: 1\n\ndata: 2\n\n')).toEqual([{ event: 'a', data: '1' }, { data: '2' }]);
  });

  it('joins multi-line data with \\n and strips only one space after the colon', () => {
    expect(parseAll('data: line 1\ndata:line 2\ndata:  indented\ndata\n\n')).toEqual([{ data: 'line 1\nline 2\n indented\n' }]);
  });

  it('skips comment lines and blank lines without data; keeps an event\'s id and retry for a client that reconnects (U5)', () => {
    expect(parseAll(': keep-alive\n\n:\nid: 7\nretry: 100\ndata: x\n\n\n\nevent: lonely\n\ndata: y\n\n')).toEqual([{ data: 'x', id: '7', retry: 100 }, { data: 'y' }]);
    // a block that only sets the reconnection time is told too; one that is not a number is not
    expect(parseAll('retry: 250\n\nretry: soon\n\n')).toEqual([{ data: '', retry: 250 }]);
  });

  it('accepts \\n, \\r\\n and \\r line ends', () => {
    expect(parseAll('data: a\r\n\r\ndata: b\r\rdata: c\n\n')).toEqual([{ data: 'a' }, { data: 'b' }, { data: 'c' }]);
  });

  it('flushes the last event when the stream ends without a blank line (with or without its line end)', () => {
    expect(parseAll('data: a\n\ndata: b')).toEqual([{ data: 'a' }, { data: 'b' }]);
    expect(parseAll('data: a\n\ndata: b\r\n')).toEqual([{ data: 'a' }, { data: 'b' }]);
  });

  it('holds a \\r at the end of a piece until it knows whether \\n follows', () => {
    const parser = new SseParser();
    expect(parser.push('data: a\r', false)).toEqual([]);
    expect(parser.push('\n', false)).toEqual([]);
    expect(parser.push('\r', false)).toEqual([]);
    expect(parser.push('\ndata: b\r\n\r\n', false)).toEqual([{ data: 'a' }, { data: 'b' }]);
    expect(parser.push('', true)).toEqual([]);
  });

  it('gives the same events for every fixture however the text is split in two', () => {
    for (const api of ['openai', 'anthropic']) {
      for (const name of readdirSync(join(__dirname, '..', '..', 'fixtures', api)).filter((file) => file.endsWith('.sse'))) {
        const text = fixture(`${api}/${name}`).toString('utf8');
        const whole = parseAll(text);
        expect(whole.length).toBeGreaterThan(0);
        for (let at = 0; at <= text.length; at += 3) {
          const parser = new SseParser();
          const split = [...parser.push(text.slice(0, at), false), ...parser.push(text.slice(at), false), ...parser.push('', true)];
          if (JSON.stringify(split) !== JSON.stringify(whole)) throw new Error(`${api}/${name} split at ${at} differs`);
        }
      }
    }
  });
});

describe('readServerSentEvents', () => {
  it('decodes UTF-8 characters split across chunks', async () => {
    const all = bytes('data: 现在几点？🕛\n\n');
    // cut inside 现 (3 bytes) and inside 🕛 (4 bytes)
    const pieces = [all.subarray(0, 7), all.subarray(7, all.length - 4), all.subarray(all.length - 4, all.length - 3), all.subarray(all.length - 3)];
    expect(await read(pieces)).toEqual([{ data: '现在几点？🕛' }]);
  });

  it('reads a fixture delivered one byte at a time like the whole of it', async () => {
    const all = fixture('openai/crlf.sse');
    const oneByOne = Array.from(all, (byte) => Uint8Array.of(byte));
    const events = await read(oneByOne);
    expect(events).toEqual(await read([all]));
    expect(events.map((event) => event.data).at(-1)).toBe('[DONE]');
  });

  it('P12: counts every chunk of bytes as it arrives, a comment or half an event too', async () => {
    const count = { chunks: 0 };
    const counted: number[] = [];
    for await (const event of readServerSentEvents(bodyOf([bytes(': keep-alive\n\n'), bytes('data: o'), bytes('ne\n\n'), bytes('data: two\n\n')]), count)) {
      counted.push(count.chunks, Number(event.data === 'two'));
    }
    expect(counted).toEqual([3, 0, 4, 1]); // 'one' completed by the third chunk, 'two' by the fourth
    expect(count.chunks).toBe(5); // and the end of the stream
  });

  it('cancels the stream when the reader stops early', async () => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes('data: 1\n\ndata: 2\n\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const event of readServerSentEvents(body)) {
      expect(event.data).toBe('1');
      break;
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect(cancelled).toBe(true);
  });

  it('passes on an error of the stream', async () => {
    let pulls = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulls++ === 0) controller.enqueue(bytes('data: 1\n\n'));
        else controller.error(new Error('socket hang up'));
      },
    });
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const event of readServerSentEvents(body)) seen.push(event.data);
      })(),
    ).rejects.toThrow('socket hang up');
    expect(seen).toEqual(['1']);
  });
});
