import { readFileSync } from 'node:fs';
import { IncomingHttpHeaders, Server, ServerResponse, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { Observable, lastValueFrom, toArray } from 'rxjs';
import { checkProviderEvents } from '../../src/index.js';
import type { ProviderEvent } from '../../src/index.js';

/** A recorded stream or body under spec/fixtures, byte for byte. */
export function fixture(name: string): Buffer {
  return readFileSync(join(__dirname, '..', 'fixtures', name));
}

/** How the server answers one request. */
export interface Reply {
  /** Awaited before the status line and the headers: a server slow to answer, or (`() => new Promise(() => {})`) one that never does. */
  hold?: () => Promise<void>;
  status?: number;
  headers?: Record<string, string>;
  /** The body: all at once, or as these pieces. */
  body?: string | Buffer | (string | Buffer)[];
  /** Write the body in pieces of this many bytes. */
  chunkSize?: number;
  /** Awaited before each piece after the first: a delay, or a gate the test opens. */
  between?: (piece: number) => Promise<void>;
  /** After the body: `end` the response (default), `destroy` the socket, or `hang` (leave it open). */
  then?: 'end' | 'destroy' | 'hang';
  /** Wait this long between the last piece and `then`, as servers do that flush the body's end on its own. */
  lingerMs?: number;
}

/** What the server received, and when the connection went away. */
export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: Record<string, unknown>;
  /** Resolves when the TCP connection that carried this request closes. */
  closed: Promise<void>;
  /** Bytes of the reply written so far, and whether all were. */
  progress: { written: number; done: boolean };
}

/**
 * An HTTP server on 127.0.0.1 (port 0) that answers requests with queued replies, in order, and
 * remembers each request. Unqueued requests get a 500.
 */
export class LoopbackServer {
  readonly requests: Received[] = [];
  /** TCP connections accepted so far. */
  connections = 0;
  private readonly queue: (Reply | ((request: Received) => Reply))[] = [];
  private readonly responses = new Set<ServerResponse>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<LoopbackServer> {
    const server = createServer();
    const loopback = new LoopbackServer(server);
    // one close listener per connection, however many requests it carries
    const socketClosed = new WeakMap<Socket, Promise<void>>();
    server.on('connection', (socket: Socket) => {
      loopback.connections++;
      socketClosed.set(socket, new Promise((resolve) => socket.once('close', () => resolve())));
    });
    server.on('request', (request, response) => {
      const pieces: Buffer[] = [];
      request.on('data', (piece: Buffer) => pieces.push(piece));
      request.on('end', () => {
        const body = Buffer.concat(pieces).toString('utf8');
        const received: Received = {
          method: request.method ?? '',
          path: request.url ?? '',
          headers: request.headers,
          body,
          json: body === '' ? {} : (JSON.parse(body) as Record<string, unknown>),
          closed: socketClosed.get(request.socket) ?? Promise.reject(new Error('unknown connection')),
          progress: { written: 0, done: false },
        };
        loopback.requests.push(received);
        const next = loopback.queue.shift();
        void loopback.answer(response, typeof next === 'function' ? next(received) : next, received.progress);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return loopback;
  }

  /** `http://127.0.0.1:PORT` */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Queues replies for the next requests (a function makes its reply from the request). */
  reply(...replies: (Reply | ((request: Received) => Reply))[]): this {
    this.queue.push(...replies);
    return this;
  }

  /** Forgets requests and queued replies (between tests). */
  reset(): void {
    this.requests.length = 0;
    this.queue.length = 0;
    this.connections = 0;
  }

  async stop(): Promise<void> {
    for (const response of this.responses) response.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve, reject) => this.server.close((error) => (error ? reject(error) : resolve())));
  }

  private async answer(response: ServerResponse, reply: Reply | undefined, progress: Received['progress']): Promise<void> {
    this.responses.add(response);
    response.on('close', () => this.responses.delete(response));
    const { hold, status = 200, body = '', chunkSize, between, then = 'end', lingerMs } = reply ?? {
      status: 500,
      body: '{"error":{"message":"loopback server: no reply queued"}}',
    };
    if (hold) await hold();
    if (response.destroyed) return;
    const json = status !== 200 || reply === undefined;
    response.writeHead(status, { 'content-type': json ? 'application/json' : 'text/event-stream', 'cache-control': 'no-cache', ...reply?.headers });
    response.flushHeaders(); // the headers leave now, as an event stream's do, even when no piece of the body follows
    for (const [index, part] of pieces(body, chunkSize).entries()) {
      if (index > 0 && between) await between(index);
      if (response.destroyed) return;
      await new Promise<void>((resolve) => response.write(part, () => resolve()));
      progress.written += part.length;
    }
    progress.done = true;
    if (lingerMs !== undefined) await new Promise((resolve) => setTimeout(resolve, lingerMs));
    if (then === 'end') response.end();
    else if (then === 'destroy') response.socket?.destroy();
  }
}

function pieces(body: string | Buffer | (string | Buffer)[], chunkSize: number | undefined): Buffer[] {
  if (Array.isArray(body)) return body.map((piece) => Buffer.from(piece));
  const bytes = Buffer.from(body);
  if (chunkSize === undefined) return [bytes];
  const result: Buffer[] = [];
  for (let offset = 0; offset < bytes.length; offset += chunkSize) result.push(bytes.subarray(offset, offset + chunkSize));
  return result;
}

/** Splits a recorded stream after the `count`-th event (the blank line that ends it). */
export function splitAfterEvents(stream: Buffer, count: number): [Buffer, Buffer] {
  let at = 0;
  for (let n = 0; n < count; n++) at = stream.indexOf('\n\n', at) + 2;
  return [stream.subarray(0, at), stream.subarray(at)];
}

/** A port on 127.0.0.1 that nothing listens on (it was free a moment ago). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Every event of one provider call, checked against the event protocol (it errors on a violation). */
export function collect(events: Observable<ProviderEvent>): Promise<ProviderEvent[]> {
  return lastValueFrom(events.pipe(checkProviderEvents(), toArray()));
}

/** A promise that never settles: `hold: never` is a server that never answers. */
export const never = () => new Promise<void>(() => undefined);

/** A promise and the function that resolves it. */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** Lets the event loop turn, so that pieces written between awaits leave as separate TCP segments. */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
