import { Observable } from 'rxjs';
import { subscribeAnswer } from '../../util/answer.js';
import { shown } from '../../util/values.js';
import { WireError, errorTextWithCauses, responseWords } from './error-text.js';
import { ChunkCount, idleTimeout } from './idle-timeout.js';
import { RetryableError, isRetryableStatus, retryAfter, retryInfoMs } from './retry.js';
import { DEFAULT_IDLE_TIMEOUT_MS, StreamRequest } from './settings.js';

/** A response the server accepted: its event stream, and the controller that aborts it — now the subscriber's. */
export interface AcceptedResponse {
  body: ReadableStream<Uint8Array>;
  controller: AbortController;
}

/**
 * One attempt at `request`, as a cold Observable: each subscription POSTs the request once. A 2xx event
 * stream is emitted as soon as its headers arrive, and the Observable completes, handing the response's
 * abort over to the subscriber. Anything else errors, before any emission: a `RetryableError` for what P4
 * retries (a network failure, 408, 409, 429, 5xx, with the server's `retry-after`), else a `WireError` —
 * a 4xx, or a 2xx whose content type is not `text/event-stream` — each worded for `errorMessage` with the
 * method, the URL and the API's own words (`HTTP 401 from POST https://…/v1/messages: invalid x-api-key`).
 * Unsubscribing before the emission aborts the request.
 *
 * P12: a server that sends no headers within `idleTimeoutMs` is aborted, and the attempt errors at that
 * moment with the `RetryableError` `no data for N ms`, retried like a 5xx. An error body that stalls as
 * long is cut short: its status still counts, with the status text for the API's words.
 *
 * ```text
 * server:     ----h            h: the headers of a 200 text/event-stream
 * sendOnce:   ----(a|)         a: { body, controller }
 *
 * server:     ----5            5: a 503 and its body
 * sendOnce:   ----#            RetryableError 'HTTP 503 from POST https://…: Service Unavailable'
 *
 * server:     ------------     no headers (idleTimeoutMs = 8)
 * sendOnce:   --------#        RetryableError 'no data for 8 ms', the request aborted
 * ```
 */
export function sendOnce(request: StreamRequest): Observable<AcceptedResponse> {
  return new Observable<AcceptedResponse>((subscriber) => {
    const controller = new AbortController();
    const { idleTimeoutMs = DEFAULT_IDLE_TIMEOUT_MS } = request;
    const count: ChunkCount = { chunks: 0 }; // 1 once the headers are in
    let settled = false;
    const idle = idleTimeout(count, idleTimeoutMs).subscribe(() => {
      controller.abort();
      if (count.chunks === 0) subscriber.error(new RetryableError(`no data for ${idleTimeoutMs} ms`, undefined, { kind: 'timeout' }));
    });
    subscribeAnswer(send(request, controller.signal, count), {
      next: (body) => {
        settled = true;
        idle.unsubscribe();
        subscriber.next({ body, controller });
      },
      error: (error: unknown) => {
        settled = true;
        idle.unsubscribe();
        if (!controller.signal.aborted || count.chunks > 0) subscriber.error(error);
      },
      complete: () => subscriber.complete(),
    });
    return () => {
      idle.unsubscribe();
      if (!settled) controller.abort();
    };
  });
}

/** How every request goes: the streaming APIs all take a POST. */
const METHOD = 'POST';

async function send(request: StreamRequest, signal: AbortSignal, count: ChunkCount): Promise<ReadableStream<Uint8Array>> {
  const { url } = request;
  let response: Response;
  try {
    response = await request.fetch(url, { method: METHOD, headers: request.headers, body: request.body, signal });
  } catch (error) {
    throw new RetryableError(`request to ${url} failed: ${errorTextWithCauses(error)}`);
  }
  count.chunks++;
  // a custom fetch may answer anything: say so, rather than fail on reading it
  if (!isResponse(response)) throw new WireError(`fetch returned ${shown(response)}, not a Response`);
  // P2: an HTTP error names the request, so that a wrong baseURL or path shows in the message
  const from = `HTTP ${response.status} from ${METHOD} ${url}`;
  const type = response.headers.get('content-type');
  if (response.ok && isEventStream(type)) {
    if (typeof response.body?.getReader !== 'function') throw new WireError(`${from}: the response has no body`);
    return response.body;
  }
  const { message, text } = await responseWords(response, signal);
  // left open (g): a 200 that is no event stream (a login page, a proxy's notice, streaming turned off) is named, not read as one
  if (response.ok) throw new WireError(`${from}: expected an event stream, got ${type}: ${message}`);
  const { status } = response;
  if (!isRetryableStatus(status)) throw new WireError(`${from}: ${message}`, { kind: 'http', status });
  // Google's APIs say how long to wait in the error's RetryInfo, seldom in a header (P17)
  const retryAfterMs = retryAfter(response.headers) ?? retryInfoMs(text);
  throw new RetryableError(`${from}: ${message}`, retryAfterMs, retryAfterMs === undefined ? { kind: 'http', status } : { kind: 'http', status, retryAfterMs });
}

/** A `Response` by shape (one from another realm or a fetch polyfill counts). */
function isResponse(value: unknown): value is Response {
  const response = value as Partial<Response> | null;
  return typeof response === 'object' && response !== null && typeof response.status === 'number' && typeof response.headers?.get === 'function';
}

/** `text/event-stream` (with any parameters), or no content type at all: a server that names none is taken at its word. */
function isEventStream(type: string | null): boolean {
  return type === null || type.split(';')[0].trim().toLowerCase() === 'text/event-stream';
}
