import { errorText, isCountOrInfinity, isPlainObject, kindOf, shown } from '../../util/values.js';

/** What the providers call to send a request: the global `fetch`, or any function shaped like it. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

/** P11: what a request asks of the model, in the library's names (each provider sends them in its API's). */
export interface RequestOptions {
  /** A system prompt, sent before the conversation. */
  system?: string;
  /** P11: the sampling temperature. */
  temperature?: number;
  /** P11: at most this many output tokens (OpenAI `max_completion_tokens`, Anthropic `max_tokens`). */
  maxTokens?: number;
  /** P11: `'auto'`, `'none'`, `'required'`, or the name of the tool the model must call — in each API's shape. */
  toolChoice?: ToolChoice;
  /** P11: where the model stops: a string or several. */
  stop?: string | readonly string[];
}

/** The options both HTTP providers share. */
export interface HttpProviderOptions extends RequestOptions {
  /** The model name, as the API knows it. */
  model: string;
  /** The API's base URL; a trailing slash is ignored. */
  baseURL?: string;
  /** Defaults to the API's environment variable; never shown in an event or error message. */
  apiKey?: string;
  /** Extra request headers (they win over the provider's own). */
  headers?: Record<string, string>;
  /** How often a 408, 409, 429, 5xx or network failure is retried before anything was emitted (default 2). */
  maxRetries?: number;
  /** A custom transport (default: the global `fetch`). */
  fetch?: FetchLike;
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
 * Checks the options both providers share and fills in the defaults; throws a `TypeError` (or, for a
 * number, a `RangeError`) naming `who`, the option and the value, as R20 does for the loop (left open
 * (c)): `openAIChatProvider: headers must be a record of strings (got "abc", a string)`. An API key is
 * never shown, only its kind. What the settings hold is copied here, at call time — the headers, `stop`,
 * `extraBody` (through JSON, which it must survive) — so that changing the options object afterwards
 * changes nothing.
 *
 * ```ts
 * const settings = httpSettings(options, 'openAIChatProvider', 'https://api.openai.com/v1', 'OPENAI_API_KEY');
 * settings.request('/chat/completions', { authorization: `Bearer ${settings.apiKey}` }, body);
 * ```
 */
export function httpSettings(options: HttpProviderOptions, who: string, defaultBaseURL: string, keyVariable: string): HttpSettings {
  const wrong = (what: string, value: unknown) => problem(who, what, value);
  if (typeof options !== 'object' || options === null) throw new TypeError(wrong('options must be an object', options));
  const { model, maxRetries = 2, toolChoice, idleTimeoutMs = DEFAULT_IDLE_TIMEOUT_MS } = options;
  if (typeof model !== 'string' || model === '') throw new TypeError(wrong('model must be a non-empty string', model));
  if (!(Number.isInteger(maxRetries) && maxRetries >= 0)) throw new RangeError(wrong('maxRetries must be an integer >= 0', maxRetries));
  if (options.fetch !== undefined && typeof options.fetch !== 'function') throw new TypeError(wrong('fetch must be a function', options.fetch));
  const fetch: FetchLike | undefined = options.fetch ?? globalThis.fetch?.bind(globalThis);
  if (typeof fetch !== 'function') throw new TypeError(`${who}: no fetch available; pass options.fetch`);
  const { system, temperature, maxTokens, stop } = checkedRequestOptions(options, who);
  if (toolChoice !== undefined && (typeof toolChoice !== 'string' || toolChoice === '')) {
    throw new TypeError(wrong("toolChoice must be 'auto', 'none', 'required' or a tool's name", toolChoice));
  }
  // P12: a timer of any length waits for all of it (see idleTimeout), so every integer is taken as it says
  if (!isCountOrInfinity(idleTimeoutMs)) {
    throw new RangeError(wrong('idleTimeoutMs must be an integer >= 1 or Infinity', idleTimeoutMs));
  }
  const extraBody = checkedExtraBody(options.extraBody, who);
  const callerHeaders = checkedHeaders(options.headers, who);
  // only an absent setting takes its default: `null` is refused like any other wrong value
  const apiKey = checkedKey(options.apiKey === undefined ? (fromEnvironment(keyVariable) ?? '') : options.apiKey, who);
  const baseURL = checkedBaseURL(options.baseURL === undefined ? defaultBaseURL : options.baseURL, who).replace(/\/+$/, '');
  // credentials passed as headers are as secret as the key
  const secrets = [apiKey.trim()];
  for (const [name, value] of callerHeaders) {
    if (isCredential(name)) secrets.push(value.trim().replace(/^(Bearer|Basic)\s+/i, ''));
  }
  return {
    model,
    apiKey,
    system,
    baseURL,
    temperature,
    maxTokens,
    toolChoice,
    stop,
    idleTimeoutMs,
    request(path, ownHeaders, body) {
      const headers = new Headers({ 'content-type': 'application/json', accept: 'text/event-stream' });
      for (const [name, value] of Object.entries(ownHeaders)) headers.set(name, value);
      for (const [name, value] of callerHeaders) headers.set(name, value);
      const url = `${baseURL}${path}`;
      return { url, headers, body: JSON.stringify({ ...body, ...extraBody }), maxRetries, fetch, secrets, idleTimeoutMs };
    },
  };
}

/**
 * P11's `system`, `temperature`, `maxTokens` and `stop` checked (R20's way: a `TypeError`, a `RangeError` for a
 * number, naming `who`, the option and the value) and copied, `stop` as a list: for every provider that takes them
 * (the HTTP providers, `languageModelProvider`).
 */
export function checkedRequestOptions(options: RequestOptions, who: string): { system?: string; temperature?: number; maxTokens?: number; stop?: string[] } {
  const { system, temperature, maxTokens, stop } = options;
  if (system !== undefined && typeof system !== 'string') throw new TypeError(problem(who, 'system must be a string', system));
  if (temperature !== undefined && !(typeof temperature === 'number' && Number.isFinite(temperature) && temperature >= 0)) {
    throw new RangeError(problem(who, 'temperature must be a number >= 0', temperature));
  }
  if (maxTokens !== undefined && !(Number.isInteger(maxTokens) && maxTokens >= 1)) {
    throw new RangeError(problem(who, 'maxTokens must be an integer >= 1', maxTokens));
  }
  // Array.from: a hole in a sparse array is no string either
  const stops = typeof stop === 'string' ? [stop] : Array.isArray(stop) ? Array.from(stop as readonly unknown[]) : stop;
  if (stops !== undefined && !(Array.isArray(stops) && stops.every((text) => typeof text === 'string'))) {
    throw new TypeError(problem(who, 'stop must be a string or an array of strings', stop));
  }
  return { system, temperature, maxTokens, stop: stops as string[] | undefined };
}

/** `who: what (got VALUE, its kind)`: the one shape of a settings error. */
function problem(who: string, what: string, value: unknown): string {
  return `${who}: ${what} (got ${shown(value)})`;
}

/** Headers whose value is a credential: redacted like the key, and never shown in a settings error. */
function isCredential(name: string): boolean {
  return /^(authorization|proxy-authorization|x-api-key|api-key)$/i.test(name);
}

/**
 * `headers`: a plain record of strings that `fetch` can send, copied as a list of entries (where a header
 * named `__proto__` stays a header). A wrong entry is named (`headers["x-trace"] must be a string (got 3, a
 * number)`); a credential's value is never shown, only its kind.
 */
function checkedHeaders(headers: unknown, who: string): [string, string][] {
  if (headers === undefined) return [];
  if (!isPlainObject(headers)) throw new TypeError(problem(who, 'headers must be a record of strings', headers));
  const copy: [string, string][] = [];
  for (const [name, value] of Object.entries(headers)) {
    const setting = `headers[${JSON.stringify(name)}]`;
    const got = isCredential(name) ? kindOf(value) : shown(value);
    if (typeof value !== 'string') throw new TypeError(`${who}: ${setting} must be a string (got ${got})`);
    try {
      new Headers([[name, value]]);
    } catch {
      throw new TypeError(`${who}: ${setting} cannot be sent as an HTTP header: a name must be a token, a value on one line (got ${got})`);
    }
    copy.push([name, value]);
  }
  return copy;
}

/** The key, from the options or the environment: a string that can be sent in a header; never shown, only its kind. */
function checkedKey(apiKey: unknown, who: string): string {
  if (typeof apiKey !== 'string') throw new TypeError(`${who}: apiKey must be a string (got ${kindOf(apiKey)})`);
  try {
    new Headers([['x-api-key', apiKey]]);
  } catch {
    throw new TypeError(`${who}: apiKey cannot be sent as an HTTP header: it holds a line break or a character that is not Latin-1`);
  }
  return apiKey;
}

/** `baseURL`: an http or https URL (in a browser, one relative to the page). */
function checkedBaseURL(baseURL: unknown, who: string): string {
  const wrong = () => new TypeError(problem(who, 'baseURL must be an http or https URL', baseURL));
  if (typeof baseURL !== 'string') throw wrong();
  let url: URL;
  try {
    url = new URL(baseURL, (globalThis as { location?: { href?: string } }).location?.href);
  } catch {
    throw wrong();
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw wrong();
  return baseURL;
}

/** `extraBody`: a plain object that survives JSON, copied through it, so that a later change to it changes no request. */
function checkedExtraBody(extraBody: unknown, who: string): Record<string, unknown> {
  if (extraBody === undefined) return {};
  if (!isPlainObject(extraBody)) throw new TypeError(problem(who, 'extraBody must be a plain object', extraBody));
  let json: string;
  try {
    json = JSON.stringify(extraBody);
  } catch (error) {
    throw new TypeError(`${who}: extraBody must survive JSON.stringify (${errorText(error)})`);
  }
  return JSON.parse(json) as Record<string, unknown>;
}

/** Reads an API key from the environment where there is one (Node, Deno, Bun); `undefined` in a browser. */
function fromEnvironment(name: string): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return env?.[name];
}
