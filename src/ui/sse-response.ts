import { Observable, isObservable } from 'rxjs';
import { shown } from '../util/values.js';
import { ReplayableRun } from './replayable.js';
import { SseBatch } from './sse-batch.js';
import { SseFeed } from './sse-feed.js';
import { SseOptions, checkSseOptions, sseHeaders } from './sse-options.js';

/** Bytes the stream holds before it stops pulling: as much as a node:http response does. */
const HIGH_WATER_BYTES = 16 * 1024;

/**
 * `events$` as a fetch-API `Response` of server-sent events (U3), for edge runtimes, Deno, Bun and any framework
 * that returns a `Response`: the same wire as `writeSse` (ids, heartbeats, an error as `event: error`, a
 * `replayable` run resumed after `lastEventId`). Its body is a `ReadableStream` that pulls (its first pull, at
 * once, subscribes `events$`): past 16 KiB unread, events wait, up to `bufferSize`; one more ends the stream with
 * `event: error` (`stalled`). The body's `cancel`
 * (the client's disconnect) unsubscribes `events$`.
 *
 * ```
 * events$:  --a--b--|
 * body:     --a--b--|     (id: 0, id: 1; with protocol 'ui-message-stream', data: [DONE] before the end)
 * ```
 *
 * ```ts
 * export async function POST(request: Request): Promise<Response> {
 *   const { messages } = await request.json();
 *   return sseResponse(runEventedToolLoop({ provider, registry, messages }).pipe(toUiMessageStream()), { protocol: 'ui-message-stream' });
 * }
 * ```
 */
export function sseResponse<T>(events$: Observable<T>, options?: SseOptions<T>): Response {
  if (!isObservable(events$)) throw new TypeError(`sseResponse: events$ must be an Observable, got ${shown(events$)}`);
  const settings = checkSseOptions(options, 'sseResponse', events$ instanceof ReplayableRun);
  const encoder = new TextEncoder();
  let feed: SseFeed<T> | undefined;
  let open = true;
  let started = false;
  let stream: ReadableStreamDefaultController<Uint8Array> | undefined;
  const batch = new SseBatch((text) => {
    if (open) stream!.enqueue(encoder.encode(text));
  });
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        stream = controller;
        feed = new SseFeed(events$, settings, {
          write(text) {
            if (!open) return false;
            // UTF-16 units for bytes: close enough for a bound (a frame is mostly ASCII)
            return (controller.desiredSize ?? 0) - batch.add(text) > 0;
          },
          end() {
            if (!open) return;
            batch.flush();
            open = false;
            controller.close();
          },
        });
      },
      pull() {
        // the first pull starts the stream; each later one means the reader took some: write what waited
        if (!started) {
          started = true;
          feed!.start();
        } else feed!.resume();
        batch.flush();
      },
      cancel() {
        open = false;
        batch.clear();
        feed!.close();
      },
    },
    { highWaterMark: HIGH_WATER_BYTES, size: (chunk) => chunk.byteLength },
  );
  return new Response(body, { status: 200, headers: sseHeaders(settings, false) });
}
