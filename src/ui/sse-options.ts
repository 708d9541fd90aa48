import { isCountOrInfinity, shown } from '../util/values.js';

/**
 * Why a stream ended with its `event: error` (U3, U4): `stalled` — the client read nothing while more than
 * `bufferSize` events waited; `failed` — the events errored; `missed` — the `Last-Event-ID` it resumes from is
 * no longer kept (or was never sent) by the replayable run.
 */
export type SseFailureReason = 'stalled' | 'failed' | 'missed';

/** What ended a stream early, as its `event: error` tells the client. */
export interface SseFailure {
  reason: SseFailureReason;
  message: string;
}

/** How `writeSse` and `sseResponse` put a stream of events on the wire (U3, U4). */
export interface SseOptions<T = unknown> {
  /** A comment line (`: keep-alive`) when nothing else was written for this long, in ms; default 15 000; `Infinity` for none. */
  heartbeatMs?: number;
  /**
   * Events held for a client that does not read (the socket's buffer is full); one more ends the stream with `event:
   * error` (`stalled`) and unsubscribes the events. Default 1 000. It must hold the largest burst `events$` emits at
   * once (a scripted provider's whole run is one): a burst reaches no reader before it ends.
   */
  bufferSize?: number;
  /** Each event's `id:`; default its number in the stream (0, 1, 2, …). A `replayable` run numbers its own events, so it takes none. */
  id?: (event: T, index: number) => string;
  /** How an event becomes its `data:`; default `JSON.stringify`. Line ends in it become more `data:` lines. */
  data?: (event: T) => string;
  /**
   * `'ui-message-stream'`: the AI SDK's UI message stream v1 on the wire — the `x-vercel-ai-ui-message-stream: v1`
   * header, `data: [DONE]` after the last event, and the error event's data an `{ type: 'error', errorText }` chunk
   * its client reads. Default `'json'`.
   */
  protocol?: 'json' | 'ui-message-stream';
  /** Sent first as `retry:`: how long, in ms, a client waits before it reconnects. */
  retryMs?: number;
  /** The request's `Last-Event-ID` header: with a `replayable` run, the stream starts right after that event. */
  lastEventId?: string | null;
  /** More response headers (they win over the defaults). */
  headers?: Record<string, string>;
  /** The `data:` of the error event that ends a stream early; default `{"type":"error","reason":…,"message":…}` (or the AI SDK's error chunk). */
  errorData?: (failure: SseFailure) => string;
}

/** The options with their defaults, checked. */
export interface SseSettings<T> {
  heartbeatMs: number;
  bufferSize: number;
  id: ((event: T, index: number) => string) | undefined;
  data: (event: T) => string;
  uiMessageStream: boolean;
  retryMs: number | undefined;
  lastEventId: string | undefined;
  headers: Record<string, string>;
  errorData: (failure: SseFailure) => string;
}

export const DEFAULT_HEARTBEAT_MS = 15_000;
export const DEFAULT_SSE_BUFFER_SIZE = 1_000;

/** `options` checked at call time (a bad one is named), with the defaults filled in; `replayableRun`: the events are a `replayable` run. */
export function checkSseOptions<T>(options: SseOptions<T> | undefined, caller: string, replayableRun = false): SseSettings<T> {
  const o = options ?? {};
  if (typeof o !== 'object') throw new TypeError(`${caller}: options must be an object, got ${shown(o)}`);
  const heartbeatMs = o.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  if (!isCountOrInfinity(heartbeatMs)) throw new TypeError(`${caller}: heartbeatMs must be an integer >= 1 or Infinity, got ${shown(heartbeatMs)}`);
  const bufferSize = o.bufferSize ?? DEFAULT_SSE_BUFFER_SIZE;
  if (!Number.isInteger(bufferSize) || bufferSize < 0) throw new TypeError(`${caller}: bufferSize must be an integer >= 0, got ${shown(bufferSize)}`);
  for (const name of ['id', 'data', 'errorData'] as const) {
    if (o[name] !== undefined && typeof o[name] !== 'function') throw new TypeError(`${caller}: ${name} must be a function, got ${shown(o[name])}`);
  }
  const protocol = o.protocol ?? 'json';
  if (protocol !== 'json' && protocol !== 'ui-message-stream') throw new TypeError(`${caller}: protocol must be 'json' or 'ui-message-stream', got ${shown(protocol)}`);
  if (o.retryMs !== undefined && (!Number.isInteger(o.retryMs) || o.retryMs < 0)) throw new TypeError(`${caller}: retryMs must be an integer >= 0, got ${shown(o.retryMs)}`);
  if (o.lastEventId !== undefined && o.lastEventId !== null && typeof o.lastEventId !== 'string') throw new TypeError(`${caller}: lastEventId must be a string (the Last-Event-ID header), got ${shown(o.lastEventId)}`);
  if (o.headers !== undefined && (typeof o.headers !== 'object' || o.headers === null)) throw new TypeError(`${caller}: headers must be an object, got ${shown(o.headers)}`);
  if (replayableRun && o.id !== undefined) throw new TypeError(`${caller}: id must be left out for a replayable run: it numbers its own events, and Last-Event-ID resumes from those numbers`);
  const uiMessageStream = protocol === 'ui-message-stream';
  return {
    heartbeatMs,
    bufferSize,
    id: o.id,
    data: o.data ?? ((event) => JSON.stringify(event)),
    uiMessageStream,
    retryMs: o.retryMs,
    lastEventId: o.lastEventId ?? undefined,
    headers: o.headers ?? {},
    errorData: o.errorData ?? (uiMessageStream ? (failure) => JSON.stringify({ type: 'error', errorText: failure.message }) : (failure) => JSON.stringify({ type: 'error', ...failure })),
  };
}

/** The response headers of an event stream: no caching, no proxy buffering; the AI SDK's marker when asked. */
export function sseHeaders<T>(settings: SseSettings<T>, connection: boolean): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache, no-transform',
    'x-accel-buffering': 'no', // nginx and its kin would hold the events back
  };
  if (connection) headers.connection = 'keep-alive'; // HTTP/1.1 only: fetch-API runtimes manage the connection themselves
  if (settings.uiMessageStream) headers['x-vercel-ai-ui-message-stream'] = 'v1';
  for (const [name, value] of Object.entries(settings.headers)) headers[name.toLowerCase()] = value;
  return headers;
}
