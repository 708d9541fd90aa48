/**
 * Hostile input for the real providers (issue 19, item 10): generated settings, good and bad, for
 * `openAIChatProvider` and `anthropicProvider` (left open (c)); and generated streams — the project's own
 * fixtures cut, garbled, reordered, with fields replaced by any JSON, delivered in any pieces, ended by a
 * reset or a silence, behind odd statuses, content types and fetch functions (P4, P6, P12, left open (g)).
 * The oracles are the rules, written out here: which settings are good, and what any call must look like.
 * No socket is opened: `fetch` is a function of the test's, answering with a `Response` over a stream.
 *
 * `PROPERTY_RUNS=N` (default 300), `PROPERTY_SEED=S PROPERTY_PATH=P` replays a failure.
 */
import fc from 'fast-check';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Observable } from 'rxjs';
import { anthropicProvider, checkProviderEvents, openAIChatProvider } from '../../src/index.js';
import type { FetchLike, Provider, ProviderEvent, ProviderInput } from '../../src/index.js';
import { installRxjsHooks, rxjsNotes } from './support/harness.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 300);
const SEED = process.env.PROPERTY_SEED === undefined ? undefined : Number(process.env.PROPERTY_SEED);
const PATH = process.env.PROPERTY_PATH;
const params = <T>(runs = RUNS): fc.Parameters<T> => ({
  numRuns: runs,
  ...(SEED === undefined ? {} : { seed: SEED }),
  ...(PATH === undefined ? {} : { path: PATH, endOnFailure: true }),
});

const KEY = 'sk-hostile-test-0123456789';
const question: ProviderInput = { messages: [{ role: 'user', content: 'q' }], tools: [] };

type Api = 'openai' | 'anthropic';
const FACTORY: Record<Api, { who: string; make: (options: unknown) => Provider }> = {
  openai: { who: 'openAIChatProvider', make: (options) => openAIChatProvider(options as never) },
  anthropic: { who: 'anthropicProvider', make: (options) => anthropicProvider(options as never) },
};

/** A short, complete, valid reply in each API's wire format. */
const REPLY: Record<Api, string> = {
  openai: 'data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
  anthropic:
    'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":1,"output_tokens":1}}}\n\n' +
    'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"}}\n\n' +
    'event: message_stop\ndata: {"type":"message_stop"}\n\n',
};

let restoreHooks: () => void;
const rejections: unknown[] = [];
const onRejection = (reason: unknown) => rejections.push(reason);
beforeAll(() => {
  restoreHooks = installRxjsHooks();
  process.on('unhandledRejection', onRejection);
});
afterAll(() => {
  restoreHooks();
  process.off('unhandledRejection', onRejection);
});
beforeEach(() => {
  rxjsNotes.length = 0;
  rejections.length = 0;
});

jest.setTimeout(120_000);

// ---------------------------------------------------------------------------------------------
// What a call must look like, whatever went wrong

interface Played {
  events: ProviderEvent[];
  /** An error of the Observable (never allowed), or one thrown by subscribe. */
  error?: unknown;
  completed: boolean;
}

/** Subscribes, and waits for the end (at most `limitMs`: a call that never ends is a failure too). */
function play(events$: Observable<ProviderEvent>, limitMs = 5000): Promise<Played> {
  return new Promise((resolve) => {
    const played: Played = { events: [], completed: false };
    const timer = setTimeout(() => {
      subscription?.unsubscribe();
      resolve(played);
    }, limitMs);
    let subscription: { unsubscribe(): void } | undefined;
    try {
      subscription = events$.pipe(checkProviderEvents()).subscribe({
        next: (event) => played.events.push(event),
        error: (error: unknown) => {
          played.error = error;
          clearTimeout(timer);
          resolve(played);
        },
        complete: () => {
          played.completed = true;
          clearTimeout(timer);
          resolve(played);
        },
      });
    } catch (error) {
      played.error = error;
      clearTimeout(timer);
      resolve(played);
    }
  });
}

/** Words a library bug leaves in a message, as opposed to a failure it put into words. */
const CRASH = /Cannot read propert|is not a function|is not iterable|Cannot convert|undefined is not|null is not|Maximum call stack/;
/** The key as a whole token (P2), written out independently of `redact`. */
const KEY_TOKEN = new RegExp(`(?<![\\p{L}\\p{N}\\p{M}_])${KEY}(?![\\p{L}\\p{N}\\p{M}_])`, 'u');

/** P1, P4, R10: one message_start first, exactly one message_end last, then completion; an error worded, without the key. */
function checkCall(played: Played, label: string): void {
  const { events } = played;
  expect([label, played.error === undefined ? undefined : String(played.error)]).toEqual([label, undefined]);
  expect([label, played.completed]).toEqual([label, true]);
  expect([label, events[0]?.type, events.filter((event) => event.type === 'message_end').length, events.at(-1)?.type]).toEqual([
    label,
    'message_start',
    1,
    'message_end',
  ]);
  const end = events.at(-1) as Extract<ProviderEvent, { type: 'message_end' }>;
  if (end.stopReason === 'error') {
    const message = end.errorMessage;
    expect([label, typeof message === 'string' && message !== '']).toEqual([label, true]);
    expect([label, KEY_TOKEN.test(message!)]).toEqual([label, false]);
    // a hostile fetch's own words may say anything; the library's own never show a crash
    if (!message!.startsWith('request to ')) expect([label, CRASH.test(message!) ? message : undefined]).toEqual([label, undefined]);
  }
  expect([label, rxjsNotes.slice(), rejections.map(String)]).toEqual([label, [], []]);
}

// ---------------------------------------------------------------------------------------------
// Settings: left open (c), with the rules written out as the oracle

const throwing = new Proxy(
  {},
  {
    get() {
      throw new Error('a hostile value');
    },
  },
);
const cyclic: Record<string, unknown> = { a: 1 };
cyclic.self = cyclic;

/** Values no setting takes as they are, and a few that some do. */
const HOSTILE: unknown[] = [
  null,
  '',
  'abc',
  ' ',
  0,
  -1,
  1.5,
  NaN,
  Infinity,
  -Infinity,
  2 ** 31,
  2 ** 53,
  1n,
  Symbol('s'),
  true,
  [],
  ['a'],
  [1],
  [, 'a'], // eslint-disable-line no-sparse-arrays
  {},
  { a: '1' },
  { a: 1 },
  Object.assign(Object.create(null) as object, { x: '1' }),
  () => undefined,
  new Map([['x', '1']]),
  new Date(0),
  new String('x'),
  'http://127.0.0.1:9/v1',
  'ftp://example.com',
  'localhost:11434/v1',
  'sk-line\nbreak',
  '€ not latin-1',
  { 'bad name': 'v' },
  { 'x-a': 'v\r\nx-b: w' },
  { 'x-a': '\u20ac' },
  { authorization: 5 },
  { __proto__: null, 'x-a': 'v' },
  cyclic,
  { n: 1n },
];

/** The generated description is used as the options object (else one of the non-objects is). */
const OBJECT = Symbol('the options object');

const ok = (api: Api) => new Response(REPLY[api], { headers: { 'content-type': 'text/event-stream' } });

/** A setting's good values (beside `undefined`, absent, which every optional one takes). */
function goodValues(api: Api): Record<string, fc.Arbitrary<unknown>> {
  return {
    model: fc.constantFrom('m', 'gpt-4o-mini', 'claude-sonnet-4-5'),
    baseURL: fc.constantFrom('http://127.0.0.1:9', 'https://api.example.com/v1/', 'http://[::1]:8080/x'),
    apiKey: fc.constantFrom('', KEY, ' sk-spaced-0123456789 '),
    system: fc.constantFrom('', 'Be brief.'),
    headers: fc.constantFrom({}, { 'x-trace': 't1' }, { 'X-Trace': 'a b;c', 'x-empty': '' }, { authorization: `Bearer ${KEY}` }, JSON.parse('{"__proto__":"p"}') as object),
    maxRetries: fc.constantFrom(0, 1, 7),
    fetch: fc.constant('STUB'), // replaced by the capturing fetch when the options are built
    temperature: fc.constantFrom(0, 0.7, 2),
    maxTokens: fc.constantFrom(1, 100, 5000, 100_000),
    toolChoice: fc.constantFrom('auto', 'none', 'required', 'get_weather'),
    stop: fc.constantFrom('END', [], ['a', 'b']),
    extraBody: fc.constantFrom({}, { top_k: 5 }, { nested: { a: [1, 2] } }),
    idleTimeoutMs: fc.constantFrom(1, 50, 2 ** 31, 2 ** 40, Infinity),
    ...(api === 'openai' ? { reasoningEffort: fc.constantFrom('low', 'medium', 'high') } : { thinking: fc.constantFrom(1024, 2000, 4095, 8000) }),
  };
}

/** An options object as a description: each setting absent, good, from the hostile pool, or anything at all. */
function optionsArb(api: Api): fc.Arbitrary<Record<string, unknown>> {
  const good = goodValues(api);
  const entries = Object.entries(good).map(([key, value]) => {
    const any = fc.oneof(
      { weight: 3, arbitrary: value },
      { weight: 2, arbitrary: fc.constantFrom(...HOSTILE) },
      { weight: 1, arbitrary: fc.anything({ withBigInt: true, withDate: true, withMap: true, withNullPrototype: true, withBoxedValues: true, withSparseArray: true }) },
    );
    // mostly absent or good, so that one bad setting at a time is common
    return [key, fc.option(any, { freq: key === 'model' ? 8 : 2, nil: undefined })] as const;
  });
  return fc.record(Object.fromEntries(entries) as Record<string, fc.Arbitrary<unknown>>).map((options) => {
    for (const key of Object.keys(options)) if (options[key] === undefined) delete options[key];
    return options;
  });
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** What Fetch sends as a header value: its ends' blanks dropped; then no NUL, CR or LF, and one byte a character. */
function sendable(value: string): boolean {
  const trimmed = value.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '');
  return !/[\0\r\n]/.test(trimmed) && [...trimmed].every((c) => c.codePointAt(0)! <= 0xff);
}
function plain(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === null || proto === Object.prototype;
}
const integer = (value: unknown, least: number) => typeof value === 'number' && Number.isInteger(value) && value >= least;

/**
 * The oracle: the settings a provider must refuse, each with the error it throws. `maxTokens` and
 * `thinking` that do not fit each other are one problem that either may name.
 */
function refused(api: Api, options: Record<string, unknown>): Map<string, ErrorConstructor> {
  const bad = new Map<string, ErrorConstructor>();
  const has = (key: string) => Object.prototype.hasOwnProperty.call(options, key);
  const { model, baseURL, apiKey, system, headers, maxRetries, fetch, temperature, maxTokens, toolChoice, stop, extraBody, idleTimeoutMs } = options;
  if (!(typeof model === 'string' && model !== '')) bad.set('model', TypeError);
  if (has('baseURL')) {
    let url: URL | undefined;
    try {
      url = typeof baseURL === 'string' ? new URL(baseURL) : undefined;
    } catch {
      url = undefined;
    }
    if (url === undefined || !['http:', 'https:'].includes(url.protocol)) bad.set('baseURL', TypeError);
  }
  if (has('apiKey') && !(typeof apiKey === 'string' && sendable(apiKey))) bad.set('apiKey', TypeError);
  if (has('system') && typeof system !== 'string') bad.set('system', TypeError);
  if (has('headers')) {
    const fine = plain(headers) && Object.entries(headers).every(([name, value]) => TOKEN.test(name) && typeof value === 'string' && sendable(value));
    if (!fine) bad.set('headers', TypeError);
  }
  if (has('maxRetries') && !integer(maxRetries, 0)) bad.set('maxRetries', RangeError);
  if (has('fetch') && typeof fetch !== 'function') bad.set('fetch', TypeError);
  if (has('temperature') && !(typeof temperature === 'number' && Number.isFinite(temperature) && temperature >= 0)) bad.set('temperature', RangeError);
  if (has('maxTokens') && !integer(maxTokens, 1)) bad.set('maxTokens', RangeError);
  if (has('toolChoice') && !(typeof toolChoice === 'string' && toolChoice !== '')) bad.set('toolChoice', TypeError);
  if (has('stop') && !(typeof stop === 'string' || (Array.isArray(stop) && Array.from(stop).every((text) => typeof text === 'string')))) bad.set('stop', TypeError);
  if (has('extraBody')) {
    let fine = plain(extraBody);
    try {
      JSON.stringify(extraBody);
    } catch {
      fine = false;
    }
    if (!fine) bad.set('extraBody', TypeError);
  }
  if (has('idleTimeoutMs') && !(idleTimeoutMs === Infinity || integer(idleTimeoutMs, 1))) bad.set('idleTimeoutMs', RangeError);
  if (api === 'openai' && has('reasoningEffort') && !['low', 'medium', 'high'].includes(options.reasoningEffort as string)) {
    bad.set('reasoningEffort', RangeError);
  }
  if (api === 'anthropic' && has('thinking')) {
    const { thinking } = options;
    if (!integer(thinking, 1024)) bad.set('thinking', RangeError);
    else if (!bad.has('maxTokens') && (integer(maxTokens, 1) ? (maxTokens as number) : 4096) <= (thinking as number)) {
      bad.set('thinking', RangeError);
      bad.set('maxTokens', RangeError);
    }
  }
  return bad;
}

/** A copy of what the caller may change later: plain objects and arrays, all the way down (cycles kept). */
function copied(value: unknown, seen = new Map<object, unknown>()): unknown {
  if (typeof value !== 'object' || value === null || !(Array.isArray(value) || plain(value))) return value;
  if (seen.has(value)) return seen.get(value);
  const copy: Record<string | number, unknown> = Array.isArray(value) ? new Array<unknown>(value.length) : Object.getPrototypeOf(value) === null ? Object.create(null) : {};
  seen.set(value, copy);
  for (const [key, inner] of Object.entries(value)) Object.defineProperty(copy, key, { value: copied(inner, seen), enumerable: true, writable: true, configurable: true });
  return copy;
}

/** Changes everything the caller could change: every setting, and the insides of headers, stop and extraBody. */
function changeAll(options: Record<string, unknown>): void {
  for (const inner of [options.headers, options.extraBody]) {
    if (plain(inner)) {
      for (const key of Object.keys(inner)) inner[key] = 'changed';
      inner['x-changed'] = 'yes';
    }
  }
  if (Array.isArray(options.stop)) options.stop.push('CHANGED');
  for (const key of Object.keys(options)) options[key] = key === 'fetch' ? () => Promise.reject(new Error('the changed fetch was called')) : 'changed';
}

interface Sent {
  url: string;
  method: string | undefined;
  headers: [string, string][];
  body: string;
}

describe('hostile settings (left open (c)), generated', () => {
  it.each<Api>(['openai', 'anthropic'])(
    'left open (c) (%s): a factory throws at call time exactly when a setting is bad — a TypeError or RangeError naming it, never the key — and a made provider sends only what it was given, as it was when made',
    async (api) => {
      const { who, make } = FACTORY[api];
      await fc.assert(
        fc.asyncProperty(optionsArb(api), fc.oneof({ weight: 9, arbitrary: fc.constant(OBJECT) }, { weight: 1, arbitrary: fc.constantFrom<unknown>('gpt-4o', null, undefined, 42, () => undefined) }), async (description, shape) => {
          const sent: Sent[] = [];
          const stub: FetchLike = async (url, init) => {
            sent.push({ url, method: init.method, headers: [...(init.headers as Headers)].sort(), body: String(init.body) });
            return ok(api);
          };
          const build = (): unknown => {
            if (shape !== OBJECT) return shape;
            const options = copied(description) as Record<string, unknown>;
            if (options.fetch === 'STUB') options.fetch = stub;
            return options;
          };
          const options = build();
          const bad = typeof options === 'object' && options !== null ? refused(api, options as Record<string, unknown>) : new Map([['options', TypeError]]);
          let provider: Provider | undefined;
          let thrown: unknown;
          try {
            provider = make(options);
          } catch (error) {
            thrown = error;
          }
          const label = `${api} ${[...bad.keys()].join(',')}`;
          if (bad.size === 0) {
            expect([label, thrown === undefined ? undefined : String(thrown)]).toEqual([label, undefined]);
          } else {
            expect([label, provider]).toEqual([label, undefined]);
            const message = (thrown as Error).message;
            const named = [...bad.keys()].find((key) => message.startsWith(`${who}: ${key}`));
            expect([label, message, named !== undefined]).toEqual([label, message, true]);
            expect([label, message, thrown instanceof bad.get(named!)!]).toEqual([label, message, true]);
            expect([label, KEY_TOKEN.test(message)]).toEqual([label, false]);
            return;
          }
          if (typeof (options as { fetch?: unknown }).fetch !== 'function' || (options as { fetch?: unknown }).fetch !== stub) return; // the global fetch: nothing is sent here
          // R20 for providers: what was given is copied when the provider is made
          const twin = make(build());
          changeAll(options as Record<string, unknown>);
          checkCall(await play(provider!(question)), label);
          const first = sent.length; // a tiny idleTimeoutMs may have retried
          checkCall(await play(twin(question)), label);
          expect([label, sent[0]]).toEqual([label, sent[first]]);
          // the headers sent: the provider's own and the ones given, nothing else (not 0, 1, 2 for 'abc')
          const given = new Set(Object.keys((description.headers as object | undefined) ?? {}).map((name) => name.toLowerCase()));
          const own = new Set(['content-type', 'accept', 'authorization', 'x-api-key', 'anthropic-version']);
          const strangers = sent[0]!.headers.map(([name]) => name).filter((name) => !own.has(name) && !given.has(name));
          expect([label, strangers]).toEqual([label, []]);
        }),
        params(),
      );
    },
  );
});

// ---------------------------------------------------------------------------------------------
// Streams: cut, garbled and hostile, through each provider (P4, P6, P12, left open (g))

const FIXTURES = join(__dirname, '..', 'fixtures');
const recorded = (api: Api): string[] =>
  readdirSync(join(FIXTURES, api))
    .filter((name) => name.endsWith('.sse'))
    .sort()
    .map((name) => readFileSync(join(FIXTURES, api, name), 'utf8'));
const STREAMS: Record<Api, string[]> = { openai: recorded('openai'), anthropic: recorded('anthropic') };

/** An error event that echoes the key, as a server might. */
const ECHO: Record<Api, string> = {
  openai: `data: {"error":{"message":"Incorrect API key provided: ${KEY}","code":401}}`,
  anthropic: `event: error\ndata: {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key ${KEY}"}}`,
};

type EventEdit =
  | { kind: 'drop' | 'duplicate'; at: number }
  | { kind: 'swap'; at: number; with: number }
  | { kind: 'field'; at: number; path: number; value: unknown }
  | { kind: 'echo key'; at: number };
type ByteEdit = { kind: 'truncate'; at: number } | { kind: 'delete'; at: number; length: number } | { kind: 'insert'; at: number; bytes: Uint8Array };

// a place as a fraction of the length, uniform: fast-check's doubles crowd near 0, its biased integers at the ends
const fraction = fc.noBias(fc.integer({ min: 0, max: 999_999 })).map((n) => n / 1_000_000);
/** What a field becomes: mostly a value of the wrong kind (`undefined`: the field is left out), else any JSON. */
const fieldValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom<unknown>(undefined, null, {}, [], '', 0, -1, 1.5, true, 'x', [null], { type: 'x' }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);
const eventEdit: fc.Arbitrary<EventEdit> = fc.oneof(
  fc.record({ kind: fc.constantFrom('drop' as const, 'duplicate' as const), at: fraction }),
  fc.record({ kind: fc.constant('swap' as const), at: fraction, with: fraction }),
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('field' as const), at: fraction, path: fraction, value: fieldValue }) },
  fc.record({ kind: fc.constant('echo key' as const), at: fraction }),
);
const byteEdit: fc.Arbitrary<ByteEdit> = fc.oneof(
  fc.record({ kind: fc.constant('truncate' as const), at: fraction }),
  fc.record({ kind: fc.constant('delete' as const), at: fraction, length: fc.integer({ min: 1, max: 40 }) }),
  fc.record({ kind: fc.constant('insert' as const), at: fraction, bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }) }),
);

/** Every place in a JSON value, as a list of keys from the top (the top itself is `[]`). */
function places(value: unknown, path: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(path);
  if (Array.isArray(value)) value.forEach((inner, index) => places(inner, [...path, index], out));
  else if (typeof value === 'object' && value !== null) for (const [key, inner] of Object.entries(value)) places(inner, [...path, key], out);
  return out;
}

function editEvents(api: Api, events: string[], edit: EventEdit): string[] {
  const at = Math.floor(edit.at * events.length);
  const next = [...events];
  switch (edit.kind) {
    case 'drop':
      next.splice(at, 1);
      return next;
    case 'duplicate':
      next.splice(at, 0, events[at]!);
      return next;
    case 'swap': {
      const other = Math.floor(edit.with * events.length);
      [next[at], next[other]] = [next[other]!, next[at]!];
      return next;
    }
    case 'echo key':
      next.splice(at, 0, ECHO[api]);
      return next;
    case 'field': {
      const event = events[at];
      const line = event?.split('\n').findIndex((text) => text.startsWith('data: ')) ?? -1;
      if (event === undefined || line < 0) return next;
      const lines = event.split('\n');
      let data: unknown;
      try {
        data = JSON.parse(lines[line]!.slice(6));
      } catch {
        return next; // [DONE]
      }
      const all = places(data);
      const path = all[Math.floor(edit.path * all.length)]!;
      if (path.length === 0) data = edit.value ?? null;
      else {
        let parent = data as Record<string | number, unknown>;
        for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
        if (edit.value === undefined && !Array.isArray(parent)) delete parent[path.at(-1)!];
        else parent[path.at(-1)!] = edit.value;
      }
      lines[line] = `data: ${JSON.stringify(data)}`;
      next[at] = lines.join('\n');
      return next;
    }
  }
}

function editBytes(bytes: Uint8Array, edit: ByteEdit): Uint8Array {
  const at = Math.floor(edit.at * (bytes.length + 1));
  switch (edit.kind) {
    case 'truncate':
      return bytes.subarray(0, at);
    case 'delete':
      return Uint8Array.from([...bytes.subarray(0, at), ...bytes.subarray(at + edit.length)]);
    case 'insert':
      return Uint8Array.from([...bytes.subarray(0, at), ...edit.bytes, ...bytes.subarray(at)]);
  }
}

/** How the body ends after its last piece: closed, reset, or never (the idle timeout ends the call). */
type Ending = 'end' | 'reset' | 'silence';

interface Wire {
  stream: number;
  eventEdits: EventEdit[];
  byteEdits: ByteEdit[];
  pieces: number[];
  ending: Ending;
  status: number;
  contentType: string | undefined;
  maxRetries: number;
  /** What fetch does: answers, throws at once, rejects, or resolves with something that is no Response. */
  fetch: 'answer' | 'throw' | 'reject' | 'resolve';
  odd: number;
}

const wireArb: fc.Arbitrary<Wire> = fc.record({
  stream: fc.nat(),
  eventEdits: fc.array(eventEdit, { maxLength: 3 }),
  byteEdits: fc.array(byteEdit, { maxLength: 2 }),
  pieces: fc.array(fc.integer({ min: 1, max: 97 }), { minLength: 1, maxLength: 4 }),
  ending: fc.oneof({ weight: 8, arbitrary: fc.constant<Ending>('end') }, { weight: 2, arbitrary: fc.constant<Ending>('reset') }, { weight: 1, arbitrary: fc.constant<Ending>('silence') }),
  status: fc.oneof({ weight: 12, arbitrary: fc.constant(200) }, { weight: 3, arbitrary: fc.constantFrom(201, 204, 400, 401, 404, 408, 429, 500, 503, 529) }),
  contentType: fc.oneof(
    { weight: 12, arbitrary: fc.constant<string | undefined>('text/event-stream') },
    { weight: 3, arbitrary: fc.constantFrom<string | undefined>(undefined, 'text/html', 'application/json', 'text/plain', 'TEXT/EVENT-STREAM; charset=utf-8', '') },
  ),
  maxRetries: fc.constantFrom(0, 0, 1),
  fetch: fc.oneof({ weight: 12, arbitrary: fc.constant<Wire['fetch']>('answer') }, { weight: 3, arbitrary: fc.constantFrom<Wire['fetch']>('throw', 'reject', 'resolve') }),
  odd: fc.nat(),
});

/** Odd things a fetch throws, rejects with, or resolves to. */
const ODD: unknown[] = [undefined, null, 'boom', 42, {}, { message: 5 }, new Error(`boom ${KEY}`), throwing, Object.create(null), Symbol('odd'), { status: 200 }, { status: 200, ok: true, headers: new Headers() }];

function body(api: Api, wire: Wire): Uint8Array {
  const streams = STREAMS[api];
  let events = streams[wire.stream % streams.length]!.split('\n\n').filter((event) => event !== '');
  for (const edit of wire.eventEdits) events = editEvents(api, events, edit);
  let bytes: Uint8Array = new TextEncoder().encode(events.map((event) => `${event}\n\n`).join(''));
  for (const edit of wire.byteEdits) bytes = editBytes(bytes, edit);
  return bytes;
}

/** The fetch of one generated wire: each attempt answers the same way, with a new stream. */
function wireFetch(api: Api, wire: Wire): FetchLike {
  const bytes = body(api, wire);
  const odd = ODD[wire.odd % ODD.length];
  return (() => {
    if (wire.fetch === 'throw') throw odd;
    if (wire.fetch === 'reject') return Promise.reject(odd);
    if (wire.fetch === 'resolve') return Promise.resolve(odd);
    let offset = 0;
    let piece = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (offset < bytes.length) {
          const size = wire.pieces[piece++ % wire.pieces.length]!;
          controller.enqueue(bytes.slice(offset, offset + size));
          offset += size;
          return;
        }
        if (wire.ending === 'end') controller.close();
        else if (wire.ending === 'reset') controller.error(new TypeError('terminated', { cause: new Error(`read ECONNRESET ${KEY}`) }));
        else return new Promise<void>(() => undefined); // silence
      },
    });
    const headers: Record<string, string> = { 'retry-after-ms': '0' };
    if (wire.contentType !== undefined) headers['content-type'] = wire.contentType;
    const status = wire.status;
    return Promise.resolve(new Response(status === 204 ? null : stream, { status, headers }));
  }) as FetchLike;
}

describe('hostile streams (P4, P6, P12, left open (g)), generated', () => {
  it.each<Api>(['openai', 'anthropic'])(
    'P4 (%s): whatever the server or fetch sends — cut, garbled, reordered, any JSON in any field, any pieces, a reset, a silence, an odd status or content type — nothing is thrown outside the Observable, and the call ends with exactly one message_end, an error worded without the key',
    async (api) => {
      const make = FACTORY[api].make;
      await fc.assert(
        fc.asyncProperty(wireArb, async (wire) => {
          // a failed fetch is retried after a backoff of half a second: not here, where it would only take time
          const maxRetries = wire.fetch === 'answer' ? wire.maxRetries : 0;
          const provider = make({ model: 'm', apiKey: KEY, baseURL: 'http://127.0.0.1:9/v1', fetch: wireFetch(api, wire), maxRetries, idleTimeoutMs: 25 });
          checkCall(await play(provider(question)), `${api} ${JSON.stringify(wire, (_, value: unknown) => (value instanceof Uint8Array ? [...value] : value))}`);
        }),
        params(),
      );
    },
  );
});
