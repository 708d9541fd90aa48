import { Observable } from 'rxjs';
import { isRetryOnly, readServerSentEvents } from '../providers/http/sse.js';
import { onAbort } from '../util/abort-signal.js';
import { setLongTimeout } from '../util/long-timeout.js';
import { errorText, shown } from '../util/values.js';

/** How long `fromSse` waits before it reconnects when the server sent no `retry:`. */
export const DEFAULT_RETRY_MS = 1_000;

/** What ends a stream that `fromSse` reads: the server's `event: error`, or an HTTP status that is no stream. */
export class SseError extends Error {
  override readonly name = 'SseError';
  constructor(
    message: string,
    /** The error event's `reason` (`stalled`, `failed`, `missed`, as `writeSse` writes them), or `http`. */
    readonly reason: string,
    /** The error event's data, parsed; the status for `http`. */
    readonly data: unknown,
  ) {
    super(message);
  }
}

/**
 * The events of a server-sent event stream as an Observable (U5), in the browser and in Node: a `fetch` of `url`
 * (`init` as for `fetch`), each `data:` parsed as JSON — the AI SDK's `[DONE]` skipped — until the stream ends.
 * `event: error` (as `writeSse` writes it) errors the Observable with an {@link SseError}; a 204 completes it at
 * once (nothing is running); another status that is not 2xx is an `SseError` with reason `http`. A dropped
 * connection (a network error, or a 5xx) is reconnected up to `reconnect` times (default 0) with the
 * `Last-Event-ID` of the last event read, after the server's `retry:` (default 1 s): a `replayable` run sends
 * what was missed, so the events go on with no gap and no duplicate. Unsubscribing aborts the request.
 *
 * ```
 * server:      --a--b--X              (the connection drops after id 1)
 * reconnect:             ---(c)--d--|  (Last-Event-ID: 1)
 * fromSse:     --a--b-------c--d--|
 * ```
 *
 * ```ts
 * fromSse<LoopEvent>('/api/chat', { method: 'POST', body: JSON.stringify({ prompt }), reconnect: 3 })
 *   .pipe(toViewModel())
 *   .subscribe((view) => render(view));
 * ```
 */
export function fromSse<T>(url: string | URL, init?: RequestInit & { reconnect?: number }): Observable<T> {
  if (typeof url !== 'string' && !(url instanceof URL)) throw new TypeError(`fromSse: url must be a string or a URL, got ${shown(url)}`);
  const { reconnect = 0, ...request } = init ?? {};
  if (!Number.isInteger(reconnect) || reconnect < 0) throw new TypeError(`fromSse: reconnect must be an integer >= 0, got ${shown(reconnect)}`);
  return new Observable<T>((subscriber) => {
    const controller = new AbortController();
    const outer = request.signal;
    const stopOuter = outer ? onAbort(outer, () => controller.abort(outer.reason)) : undefined;
    let lastEventId: string | undefined;
    let retryMs = DEFAULT_RETRY_MS;
    let left = reconnect;

    /** One connection: `true` when it dropped and may be tried again. */
    const connect = async (): Promise<boolean> => {
      const headers = new Headers(request.headers);
      headers.set('accept', 'text/event-stream');
      if (lastEventId !== undefined) headers.set('last-event-id', lastEventId);
      let response: Response;
      try {
        response = await fetch(url, { ...request, headers, signal: controller.signal });
      } catch {
        return true;
      }
      if (response.status === 204) {
        subscriber.complete();
        return false;
      }
      if (!response.ok || response.body === null) {
        response.body?.cancel().catch(() => undefined);
        if (response.status >= 500) return true;
        subscriber.error(new SseError(`fromSse: HTTP ${response.status} ${response.statusText} from ${String(url)}`, 'http', response.status));
        return false;
      }
      try {
        for await (const event of readServerSentEvents(response.body)) {
          if (event.retry !== undefined) retryMs = event.retry;
          if (isRetryOnly(event)) continue;
          if (event.id !== undefined) lastEventId = event.id;
          if (event.event === 'error') {
            subscriber.error(serverError(event.data));
            return false;
          }
          if (event.data === '[DONE]') continue;
          let value: T;
          try {
            value = JSON.parse(event.data) as T;
          } catch (error) {
            subscriber.error(new SseError(`fromSse: an event's data is not JSON (${errorText(error)}): ${event.data.slice(0, 200)}`, 'data', event.data));
            return false;
          }
          subscriber.next(value);
          if (subscriber.closed) return false;
        }
      } catch {
        return true;
      }
      subscriber.complete();
      return false;
    };

    const run = async (): Promise<void> => {
      while (!controller.signal.aborted && (await connect())) {
        if (controller.signal.aborted) return;
        if (left-- <= 0) {
          subscriber.error(new SseError(`fromSse: the connection to ${String(url)} dropped${reconnect > 0 ? ` (${reconnect} reconnects tried)` : ''}`, 'dropped', undefined));
          return;
        }
        await waitToReconnect(retryMs, controller.signal);
      }
    };
    void run();
    return () => {
      stopOuter?.();
      controller.abort();
    };
  });
}

/** The Observable's error for the server's `event: error`: its message and reason, whatever the protocol wrote. */
function serverError(data: string): SseError {
  let parsed: unknown = data;
  try {
    parsed = JSON.parse(data);
  } catch {
    // plain text: its own message
  }
  const fields = typeof parsed === 'object' && parsed !== null ? (parsed as { reason?: unknown; message?: unknown; errorText?: unknown }) : {};
  const message = typeof fields.message === 'string' ? fields.message : typeof fields.errorText === 'string' ? fields.errorText : data;
  return new SseError(message, typeof fields.reason === 'string' ? fields.reason : 'error', parsed);
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function waitToReconnect(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const cancel = setLongTimeout(() => {
      stop();
      resolve();
    }, ms);
    const stop = onAbort(signal, () => {
      cancel();
      resolve();
    });
  });
}
