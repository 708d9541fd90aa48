import type { ServerResponse } from 'node:http';
import { Observable, Subscription, isObservable } from 'rxjs';
import { setLongTimeout } from '../util/long-timeout.js';
import { shown } from '../util/values.js';
import { ReplayableRun } from './replayable.js';
import { SseBatch } from './sse-batch.js';
import { SseFeed } from './sse-feed.js';
import { SseOptions, checkSseOptions, sseHeaders } from './sse-options.js';

/**
 * Streams `events$` to a node:http response as server-sent events (U3): `text/event-stream` with no caching, an
 * `id:` per event, a `: keep-alive` comment after `heartbeatMs` of silence, and the end of `events$` as the end of
 * the response (an error as `event: error`, then the end). The client's disconnect unsubscribes `events$` — a loop
 * cancels its provider call and its tools. A client that stops reading: `write` returning `false` pauses the
 * writing, up to `bufferSize` events wait, and one more ends the stream with `event: error` (`stalled`) and
 * unsubscribes `events$`, rather than holding ever more (a socket that still reads nothing is destroyed `heartbeatMs`
 * later). A `replayable` run resumes after `lastEventId` (U4).
 * Unsubscribing the returned Subscription ends the response.
 *
 * ```
 * events$:   --a--b--#
 * response:  --a--b--(E|)      a, b with ids 0, 1; E: event: error, data {"type":"error","reason":"failed",…}
 * client:    --a--!            (disconnects: events$ is unsubscribed)
 * ```
 *
 * ```ts
 * createServer((request, response) => {
 *   const events$ = runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'hi' }] });
 *   writeSse(response, events$);
 * }).listen(3000, '127.0.0.1');
 * ```
 */
/** How much a batch holds before the feed waits for it to leave: as much as a response buffers before `write` says false. */
const BATCH_UNITS = 16 * 1024;

export function writeSse<T>(response: ServerResponse, events$: Observable<T>, options?: SseOptions<T>): Subscription {
  if (typeof response !== 'object' || response === null || typeof response.write !== 'function') {
    throw new TypeError(`writeSse: response must be a node:http ServerResponse, got ${shown(response)}`);
  }
  if (!isObservable(events$)) throw new TypeError(`writeSse: events$ must be an Observable, got ${shown(events$)}`);
  const settings = checkSseOptions(options, 'writeSse', events$ instanceof ReplayableRun);
  const subscription = new Subscription();
  let ended = false;
  // `write` said false: hold what follows until 'drain'
  let blocked = false;
  const batch = new SseBatch((text) => {
    if (response.destroyed) return;
    if (!response.write(text)) blocked = true;
    else feed.resume(); // a feed that paused for a full batch goes on
  });
  const feed = new SseFeed(events$, settings, {
    write: (text) => batch.add(text) < BATCH_UNITS && !blocked,
    end: (stalled) => {
      ended = true;
      batch.flush();
      response.end();
      subscription.unsubscribe();
      // a client that reads nothing would hold the socket and its buffered bytes for good
      if (stalled && !response.writableFinished) cutOff(response, settings.heartbeatMs);
    },
  });
  const resume = (): void => {
    blocked = false;
    feed.resume();
  };
  // 'close' comes when the response has been sent, or when the client went first
  const close = (): void => {
    if (!ended) subscription.unsubscribe();
  };
  response.on('drain', resume);
  response.on('close', close);
  subscription.add(() => {
    response.off('drain', resume);
    response.off('close', close);
    feed.close();
    batch.clear();
    if (!ended) {
      ended = true;
      if (!response.destroyed) response.end();
    }
  });
  if (!response.headersSent) {
    response.writeHead(response.statusCode || 200, sseHeaders(settings, (response.req?.httpVersionMajor ?? 1) < 2));
    response.flushHeaders(); // the client sees the stream open before the first event
  }
  if (response.destroyed || response.writableEnded) subscription.unsubscribe();
  else feed.start();
  return subscription;
}

/** Destroys a stalled response's socket if the client has not read its end within `heartbeatMs` (60 s without heartbeats). */
function cutOff(response: ServerResponse, heartbeatMs: number): void {
  const cancel = setLongTimeout(() => response.destroy(), heartbeatMs === Infinity ? 60_000 : heartbeatMs);
  response.once('close', cancel);
}
