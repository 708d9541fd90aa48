import { Observable } from 'rxjs';
import type { ProviderEvent } from '../../types.js';
import { onAbort } from '../../util/abort-signal.js';
import { errorText, isPlainObject, shown } from '../../util/values.js';
import { SseEvent, readServerSentEvents } from './sse.js';

/** What the providers call to send a request: the global `fetch`, or any function shaped like it. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

/** The options both HTTP providers share. */
export interface HttpProviderOptions {
  /** The model name, as the API knows it. */
  model: string;
  /** The API's base URL; a trailing slash is ignored. */
  baseURL?: string;
  /** Defaults to the API's environment variable; never shown in an event or error message. */
  apiKey?: string;
  /** A system prompt, sent before the conversation. */
  system?: string;
  /** Extra request headers (they win over the provider's own). */
  headers?: Record<string, string>;
  /** How often a 408, 409, 429, 5xx or network failure is retried before anything was emitted (default 2). */
  maxRetries?: number;
  /** A custom transport (default: the global `fetch`). */
  fetch?: FetchLike;
  /** P11: the sampling temperature. */
  temperature?: number;
  /** P11: at most this many output tokens (OpenAI `max_completion_tokens`, Anthropic `max_tokens`). */
  maxTokens?: number;
  /** P11: `'auto'`, `'none'`, `'required'`, or the name of the tool the model must call — in each API's shape. */
  toolChoice?: ToolChoice;
  /** P11: where the model stops: a string or several. */
  stop?: string | readonly string[];
  /** P11: merged last into the request body, shallowly (top-level keys replace): what the options do not cover. */
  extraBody?: Record<string, unknown>;
  /** P12: a request whose next byte does not arrive within this many ms fails (default 300,000). */
  idleTimeoutMs?: number;
}

/** P11: whether the model may, must or must not call a tool, or which one. */
export type ToolChoice = 'auto' | 'none' | 'required' | (string & {});

/** One request, ready to send. */
export interface StreamRequest {
  url: string;
  headers: Headers;
  body: string;
  maxRetries: number;
  fetch: FetchLike;
  /** Texts that must never appear in an event: the API key and other credentials. */
  secrets: readonly string[];
}

/** Turns one API's stream into provider events; one per call, so it may keep state. */
export interface WireTranslator {
  /** The provider events for one SSE event; a `message_end` among them ends the call. Throw a `WireError` to fail it. */
  next(event: SseEvent): ProviderEvent[];
  /** The stream ended: the closing `message_end`, or a `WireError` when the reply is incomplete. */
  end(): ProviderEvent[];
}

/** A failure whose message is already worded for `message_end.errorMessage`: `throw new WireError('HTTP 401: invalid x-api-key')`. */
export class WireError extends Error {
  override name = 'WireError';
}

const MAX_RETRY_AFTER_MS = 60_000;

/**
 * One model call as a cold Observable (P1): on subscribe, sends `prepare()`'s request (retrying per
 * P4 until the response is accepted), emits `message_start` once it is, then what `translate()` makes
 * of each server-sent event, then `message_end`, then completes. Never errors: every failure becomes
 * `message_end {stopReason: 'error'}`, with the request's secrets redacted (P4). Unsubscribing before
 * the end aborts the request and closes the connection; after a complete reply, the few bytes that
 * close the body are still read, so that the connection can serve the next turn.
 *
 * ```ts
 * const provider: Provider = (input) =>
 *   streamRequest(() => ({ url, headers, body: JSON.stringify(toBody(input)), maxRetries: 2, fetch, secrets: [key] }),
 *                 () => new MyApiTranslator());
 * ```
 */
export function streamRequest(prepare: () => StreamRequest, translate: () => WireTranslator): Observable<ProviderEvent> {
  return new Observable<ProviderEvent>((subscriber) => {
    const controller = new AbortController();
    let started = false;
    let ended = false;
    let secrets: readonly string[] = [];

    const emit = (event: ProviderEvent): void => {
      if (subscriber.closed) return;
      if (event.type === 'message_start') started = true;
      if (event.type !== 'message_end') return subscriber.next(event);
      ended = true; // before `next`: a consumer that unsubscribes on message_end must not abort the draining
      subscriber.next(event.errorMessage === undefined ? event : { ...event, errorMessage: redact(event.errorMessage, secrets) });
      subscriber.complete();
    };

    const run = async (): Promise<void> => {
      const request = prepare();
      secrets = request.secrets;
      const response = await send(request, controller.signal);
      if (response.body === null) throw new WireError(`HTTP ${response.status}: the response has no body`);
      const translator = translate();
      emit({ type: 'message_start' });
      const events = readServerSentEvents(response.body);
      for (;;) {
        let next: IteratorResult<SseEvent, void>;
        try {
          next = await events.next();
        } catch (error) {
          throw controller.signal.aborted ? error : new WireError(`the stream broke off: ${describe(error)}`);
        }
        if (next.done) break;
        for (const event of translator.next(next.value)) emit(event);
        if (ended) return drain(events, controller);
        if (subscriber.closed) return void events.return().catch(() => undefined); // unsubscribed: the abort closed the connection
      }
      for (const event of translator.end()) emit(event);
      if (!ended) throw new WireError('the stream ended before the reply was complete');
    };

    run().catch((error: unknown) => {
      if (subscriber.closed) return; // unsubscribed: the abort is the expected way out
      if (!started) emit({ type: 'message_start' });
      emit({ type: 'message_end', stopReason: 'error', errorMessage: error instanceof WireError ? error.message : describe(error) });
      controller.abort(); // what is left of a failed stream is of no use
    });

    return () => {
      if (!ended) controller.abort();
    };
  });
}

const DRAIN_MS = 1000;

/** Reads what follows the reply (normally only the body's end), so that fetch can reuse the connection; aborts a server that lingers. */
async function drain(events: AsyncGenerator<SseEvent, void>, controller: AbortController): Promise<void> {
  const timer = setTimeout(() => controller.abort(), DRAIN_MS);
  try {
    while (!(await events.next()).done);
  } catch {
    // aborted or broken after the reply was complete: nothing is lost
  } finally {
    clearTimeout(timer);
  }
}

/** Sends `request`; retries what P4 says, and returns the first accepted response. */
async function send(request: StreamRequest, signal: AbortSignal): Promise<Response> {
  const init: RequestInit = { method: 'POST', headers: request.headers, body: request.body, signal };
  for (let attempt = 0; ; attempt++) {
    const retriesLeft = attempt < request.maxRetries;
    let response: Response;
    try {
      response = await request.fetch(request.url, init);
    } catch (error) {
      if (signal.aborted) throw error;
      if (retriesLeft) {
        await sleep(backoff(attempt), signal);
        continue;
      }
      throw new WireError(`request to ${request.url} failed: ${describe(error)}`);
    }
    if (response.ok && !isJson(response)) return response;

    const message = await apiMessage(response);
    if (response.ok) throw new WireError(`HTTP ${response.status}: expected an event stream, got JSON: ${message}`);
    const wait = retriesLeft && isRetryable(response.status) ? retryDelay(response.headers, attempt) : undefined;
    if (wait === undefined) throw new WireError(`HTTP ${response.status}: ${message}`);
    await sleep(wait, signal);
  }
}

function isRetryable(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

function isJson(response: Response): boolean {
  return (response.headers.get('content-type') ?? '').includes('application/json');
}

/** The server's `retry-after-ms` / `retry-after` (seconds or an HTTP date), else exponential backoff; `undefined`: too long to wait. */
function retryDelay(headers: Headers, attempt: number): number | undefined {
  let ms: number | undefined;
  const retryAfterMs = headers.get('retry-after-ms');
  const retryAfter = headers.get('retry-after');
  if (retryAfterMs !== null && /^\d+(\.\d+)?$/.test(retryAfterMs.trim())) ms = Number(retryAfterMs);
  else if (retryAfter !== null && /^\d+(\.\d+)?$/.test(retryAfter.trim())) ms = Number(retryAfter) * 1000;
  else if (retryAfter !== null && !Number.isNaN(Date.parse(retryAfter))) ms = Math.max(0, Date.parse(retryAfter) - Date.now());
  if (ms === undefined) return backoff(attempt);
  return ms <= MAX_RETRY_AFTER_MS ? ms : undefined;
}

/** 0.5 s, 1 s, 2 s, … up to 8 s, less up to a quarter at random so that clients spread out. */
function backoff(attempt: number): number {
  return Math.min(8000, 500 * 2 ** attempt) * (1 - Math.random() * 0.25);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stop = onAbort(signal, () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
    if (signal.aborted) return;
    timer = setTimeout(() => {
      stop();
      resolve();
    }, ms);
  });
}

/** The API's own words from an error response: `error.message` in JSON (OpenAI, Anthropic and most others), else the text. */
async function apiMessage(response: Response): Promise<string> {
  let text = '';
  try {
    text = (await response.text()).trim();
  } catch {
    // the body broke off: the status has to do
  }
  return messageOf(text) ?? (text !== '' ? text.slice(0, 1000) : response.statusText || 'no message');
}

/**
 * `error.message`, `error` (a string) or `message` of a JSON text, if it has one.
 *
 * ```ts
 * messageOf('{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}'); // 'invalid x-api-key'
 * messageOf('<html>Bad Gateway</html>'); // undefined
 * ```
 */
export function messageOf(text: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { error, message } = value as { error?: unknown; message?: unknown };
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null) {
    const inner = (error as { message?: unknown }).message;
    if (typeof inner === 'string') return inner;
  }
  return typeof message === 'string' ? message : undefined;
}

/** An error's message and its causes: `fetch failed (connect ECONNREFUSED 127.0.0.1:9)`. */
function describe(error: unknown): string {
  // read by shape, not `instanceof Error`: fetch's errors may come from another realm (a test VM, an iframe)
  let text = errorText(error);
  let cause = causeOf(error);
  for (let depth = 0; cause !== undefined && depth < 3; depth++) {
    const errors: unknown = (cause as { errors?: unknown }).errors;
    text += ` (${Array.isArray(errors) && errors.length > 0 ? errors.map(errorText).join('; ') : errorText(cause)})`;
    cause = causeOf(cause);
  }
  return text;
}

function causeOf(error: unknown): unknown {
  return typeof error === 'object' && error !== null ? (error as { cause?: unknown }).cause : undefined;
}

function redact(text: string, secrets: readonly string[]): string {
  return secrets.reduce((result, secret) => (secret === '' ? result : result.split(secret).join('[redacted]')), text);
}

/** Reads an API key from the environment where there is one (Node, Deno, Bun); `undefined` in a browser. */
function fromEnvironment(name: string): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return env?.[name];
}

/** The shared options, checked, with their defaults. */
export interface HttpSettings {
  model: string;
  /** `''` when there is none. */
  apiKey: string;
  system: string | undefined;
  /** Without a trailing slash. */
  baseURL: string;
  temperature: number | undefined;
  maxTokens: number | undefined;
  toolChoice: ToolChoice | undefined;
  /** Always a list, when given. */
  stop: readonly string[] | undefined;
  idleTimeoutMs: number;
  /**
   * The request of one call: `body` as JSON to `${baseURL}${path}`, with the provider's headers, then the
   * caller's; `extraBody` merged last.
   */
  request(path: string, ownHeaders: Record<string, string>, body: object): StreamRequest;
}

/**
 * Checks the options both providers share and fills in the defaults; throws a `TypeError` or
 * `RangeError` naming `who` for a bad one.
 *
 * ```ts
 * const settings = httpSettings(options, 'openAIChatProvider', 'https://api.openai.com/v1', 'OPENAI_API_KEY');
 * settings.request('/chat/completions', { authorization: `Bearer ${settings.apiKey}` }, body);
 * ```
 */
export function httpSettings(options: HttpProviderOptions, who: string, defaultBaseURL: string, keyVariable: string): HttpSettings {
  if (typeof options !== 'object' || options === null) throw new TypeError(`${who}: options must be an object`);
  const { model, maxRetries = 2, headers: callerHeaders = {} } = options;
  if (typeof model !== 'string' || model === '') throw new TypeError(`${who}: model must be a non-empty string`);
  if (!Number.isInteger(maxRetries) || maxRetries < 0) {
    throw new RangeError(`${who}: maxRetries must be an integer >= 0 (got ${String(maxRetries)})`);
  }
  const fetch: FetchLike | undefined = options.fetch ?? globalThis.fetch?.bind(globalThis);
  if (typeof fetch !== 'function') throw new TypeError(`${who}: no fetch available; pass options.fetch`);
  const { temperature, maxTokens, toolChoice, stop, extraBody = {}, idleTimeoutMs = 300_000 } = options;
  if (temperature !== undefined && !(typeof temperature === 'number' && Number.isFinite(temperature) && temperature >= 0)) {
    throw new RangeError(`${who}: temperature must be a number >= 0 (got ${shown(temperature)})`);
  }
  if (maxTokens !== undefined && !(Number.isInteger(maxTokens) && maxTokens >= 1)) {
    throw new RangeError(`${who}: maxTokens must be an integer >= 1 (got ${shown(maxTokens)})`);
  }
  if (toolChoice !== undefined && (typeof toolChoice !== 'string' || toolChoice === '')) {
    throw new TypeError(`${who}: toolChoice must be 'auto', 'none', 'required' or a tool's name (got ${shown(toolChoice)})`);
  }
  const stops = typeof stop === 'string' ? [stop] : stop;
  if (stops !== undefined && !(Array.isArray(stops) && stops.every((text) => typeof text === 'string'))) {
    throw new TypeError(`${who}: stop must be a string or an array of strings (got ${shown(stop)})`);
  }
  if (!isPlainObject(extraBody)) throw new TypeError(`${who}: extraBody must be a plain object (got ${shown(extraBody)})`);
  if (!(idleTimeoutMs === Infinity || (Number.isInteger(idleTimeoutMs) && idleTimeoutMs >= 1))) {
    throw new RangeError(`${who}: idleTimeoutMs must be an integer >= 1 or Infinity (got ${shown(idleTimeoutMs)})`);
  }
  const apiKey = options.apiKey ?? fromEnvironment(keyVariable) ?? '';
  const baseURL = (options.baseURL ?? defaultBaseURL).replace(/\/+$/, '');
  // credentials passed as headers are as secret as the key
  const secrets = [apiKey];
  for (const [name, value] of Object.entries(callerHeaders)) {
    if (/^(authorization|proxy-authorization|x-api-key|api-key)$/i.test(name)) secrets.push(value.replace(/^(Bearer|Basic)\s+/i, ''));
  }
  return {
    model,
    apiKey,
    system: options.system,
    baseURL,
    temperature,
    maxTokens,
    toolChoice,
    stop: stops,
    idleTimeoutMs,
    request(path, ownHeaders, body) {
      const headers = new Headers({ 'content-type': 'application/json', accept: 'text/event-stream' });
      for (const [name, value] of Object.entries(ownHeaders)) headers.set(name, value);
      for (const [name, value] of Object.entries(callerHeaders)) headers.set(name, value);
      return { url: `${baseURL}${path}`, headers, body: JSON.stringify({ ...body, ...extraBody }), maxRetries, fetch, secrets };
    },
  };
}
