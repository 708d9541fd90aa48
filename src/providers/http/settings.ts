import { isPlainObject, shown } from '../../util/values.js';

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

/** P12's default `idleTimeoutMs`: five minutes. */
export const DEFAULT_IDLE_TIMEOUT_MS = 300_000;

/** One request, ready to send. */
export interface StreamRequest {
  url: string;
  headers: Headers;
  body: string;
  maxRetries: number;
  fetch: FetchLike;
  /** Texts that must never appear in an event: the API key and other credentials. */
  secrets: readonly string[];
  /** P12: how long to wait for the next byte, the response's headers included (default 300,000; `Infinity`: for ever). */
  idleTimeoutMs?: number;
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
  const { temperature, maxTokens, toolChoice, stop, extraBody = {}, idleTimeoutMs = DEFAULT_IDLE_TIMEOUT_MS } = options;
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
      const url = `${baseURL}${path}`;
      return { url, headers, body: JSON.stringify({ ...body, ...extraBody }), maxRetries, fetch, secrets, idleTimeoutMs };
    },
  };
}

/** Reads an API key from the environment where there is one (Node, Deno, Bun); `undefined` in a browser. */
function fromEnvironment(name: string): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return env?.[name];
}
