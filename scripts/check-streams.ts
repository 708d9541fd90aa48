/**
 * A development check against recorded streams (not part of `npm test`: the recordings are third-party
 * data and stay outside the repository). Each `*.sse` file of `FOLDER/openai/` (Chat Completions),
 * `FOLDER/anthropic/`, `FOLDER/openai-responses/` (the Responses API) and `FOLDER/gemini/` — its leading `#`
 * header lines stripped, the rest the SSE body exactly as a server sent it — is served on loopback, whole and
 * then in small pieces, to `openAIChatProvider` / `anthropicProvider` / `openAIResponsesProvider` /
 * `geminiProvider` (a recording with `vertex` in its name through a Vertex `baseURL`); their events go through
 * `checkProviderEvents()`, and one line per stream says what the provider made of it and whether every piece
 * size gave the same result. P21: each Gemini stream is also read by the official `@google/genai`
 * (scripts/gemini-differential.ts), and the line says whether the two agree on the text, calls, signatures,
 * usage and finish reason — or that the SDK threw, which is listed, not compared.
 *
 *   npm run check-streams -- FOLDER
 *   STREAMS_DIR=FOLDER npm run check-streams
 *
 * Exits with 1 when the piece sizes disagree on a stream, a provider broke the event protocol or disagrees
 * with its SDK, with 2
 * on a usage error. A stream whose reply ends with stop reason `error` is listed, not a failure: some
 * recordings are of failures.
 *
 * The loopback server is the specs' (spec/providers/loopback-server.ts): one server for both, and this
 * script is a test run outside jest.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { tap } from 'rxjs';
import { ProviderProtocolError, anthropicProvider, geminiProvider, openAIChatProvider, openAIResponsesProvider } from '../src/index.js';
import type { Provider, ProviderEvent, ProviderInput, StopReason, ToolCall, Usage } from '../src/index.js';
import { LoopbackServer, collect, nextTurn } from '../spec/providers/loopback-server.js';
import { providerSummary, sdkDifferences, sdkSummary } from './gemini-differential.js';

/** The APIs, each a sub-folder of recordings: OpenAI Chat Completions, Anthropic Messages, the OpenAI Responses API (P14), Gemini (P17). */
export const APIS = ['openai', 'anthropic', 'openai-responses', 'gemini'] as const;
export type Api = (typeof APIS)[number];

/** The piece sizes, in bytes, each stream is served in after it was served whole. */
export const PIECE_SIZES: readonly number[] = [1, 7, 64];

/** What a provider made of one stream, served one way: the events summed up, chunk boundaries aside. */
export interface Outcome {
  /** `undefined` when no `message_end` came (a protocol error). */
  stopReason: StopReason | undefined;
  errorMessage?: string;
  /** The `text_delta`s joined. */
  text: string;
  /** The `reasoning_delta`s joined. */
  reasoningText: string;
  /** `message_end.reasoning`: the blocks to send back (P10). */
  reasoning?: unknown[];
  /** The `tool_call`s, in order; an id the provider made up (a server that sent none) masked as `call_<made up>_N`. */
  calls: ToolCall[];
  /** P9: each call's `tool_call_delta`s by `index`: the id and name they gave, and the argument pieces joined. */
  deltas: { index: number; id?: string; name?: string; arguments: string }[];
  usage?: Usage;
  /** A `ProviderProtocolError` from `checkProviderEvents()`, or any other error of the provider's Observable. */
  protocolError?: string;
}

/** One stream: what the provider made of it served whole, and the piece sizes whose outcome differs from that. */
export interface StreamResult {
  /** `openai/NAME.sse` */
  file: string;
  api: Api;
  /** Served whole. */
  outcome: Outcome;
  /** Per piece size that did not agree with the whole stream: how. */
  disagreements: { pieceSize: number; differences: string[] }[];
  /** Protocol errors, whichever way the stream was served (`whole`, `1 B`, …). */
  protocolErrors: string[];
  /** P21 (Gemini): where the provider and the official SDK differ, or what the SDK threw. */
  sdk?: { differences: string[] } | { thrown: string };
}

export interface CheckReport {
  results: StreamResult[];
  /** 1 when a stream's piece sizes disagreed or a provider broke the protocol, else 0. */
  exitCode: 0 | 1;
}

export interface CheckOptions {
  /** Default {@link PIECE_SIZES}. */
  pieceSizes?: readonly number[];
  /** Where each line goes, as it is made (default: nowhere). */
  write?: (line: string) => void;
}

/** The body of a recording: its leading `#` lines (source, commit, note) left out, the rest byte for byte. */
export function stripHeader(recording: Buffer): Buffer {
  let at = 0;
  while (at < recording.length && recording[at] === 0x23 /* # */) {
    const lineEnd = recording.indexOf(0x0a, at);
    if (lineEnd < 0) return recording.subarray(recording.length);
    at = lineEnd + 1;
  }
  return recording.subarray(at);
}

/** The recordings under `folder`: `openai/*.sse`, `anthropic/*.sse`, `openai-responses/*.sse`, then `gemini/*.sse`, each in name order. */
export function recordings(folder: string): { file: string; api: Api; path: string }[] {
  return APIS.flatMap((api) => {
    const dir = join(folder, api);
    if (!existsSync(dir) || !statSync(dir).isDirectory()) return [];
    return readdirSync(dir)
      .filter((name) => name.endsWith('.sse'))
      .sort()
      .map((name) => ({ file: `${api}/${name}`, api, path: join(dir, name) }));
  });
}

/** An id the OpenAI providers made up for a call whose server sent none: `call_<Date.now() in base 36>_<position>`. */
const MADE_UP_ID = /^call_[0-9a-z]{6,10}_(\d+)$/;

function maskId(id: string): string {
  const made = MADE_UP_ID.exec(id);
  return made === null ? id : `call_<made up>_${made[1]}`;
}

/** Sums up a provider's events (those that came before a protocol error, if one did). */
export function outcomeOf(events: readonly ProviderEvent[], protocolError?: string): Outcome {
  const outcome: Outcome = { stopReason: undefined, text: '', reasoningText: '', calls: [], deltas: [] };
  for (const event of events) {
    switch (event.type) {
      case 'text_delta':
        outcome.text += event.text;
        break;
      case 'reasoning_delta':
        outcome.reasoningText += event.text;
        break;
      case 'tool_call_delta': {
        let delta = outcome.deltas.find((d) => d.index === event.index);
        if (delta === undefined) outcome.deltas.push((delta = { index: event.index, arguments: '' }));
        if (event.id !== undefined) delta.id = maskId(event.id);
        if (event.name !== undefined) delta.name = event.name;
        delta.arguments += event.argumentsDelta;
        break;
      }
      case 'tool_call':
        outcome.calls.push({ id: maskId(event.call.id), name: event.call.name, input: event.call.input });
        break;
      case 'message_end':
        outcome.stopReason = event.stopReason;
        if (event.errorMessage !== undefined) outcome.errorMessage = event.errorMessage;
        if (event.usage !== undefined) outcome.usage = event.usage;
        if (event.reasoning !== undefined) outcome.reasoning = event.reasoning;
        break;
      default: // message_start
    }
  }
  if (protocolError !== undefined) outcome.protocolError = protocolError;
  return outcome;
}

const COMPARED: readonly (keyof Outcome)[] = ['stopReason', 'errorMessage', 'text', 'reasoningText', 'reasoning', 'calls', 'deltas', 'usage', 'protocolError'];

/** The fields in which two outcomes differ, each with both values (shortened): `[]` when they agree. */
export function differences(expected: Outcome, actual: Outcome): string[] {
  return COMPARED.flatMap((key) => {
    const a = JSON.stringify(expected[key]);
    const b = JSON.stringify(actual[key]);
    return a === b ? [] : [`${key}: ${shorten(a ?? 'none', 80)} vs ${shorten(b ?? 'none', 80)}`];
  });
}

function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

const QUESTION: ProviderInput = { messages: [{ role: 'user', content: 'check-streams' }], tools: [] };

/** Serves `body` once (in pieces of `pieceSize` bytes, a turn of the event loop between them, when given) and reads it with `provider`. */
async function serve(server: LoopbackServer, provider: Provider, body: Buffer, pieceSize: number | undefined): Promise<Outcome> {
  server.reset();
  server.reply(pieceSize === undefined ? { body } : { body, chunkSize: pieceSize, between: nextTurn });
  const events: ProviderEvent[] = [];
  try {
    // collect() runs the events through checkProviderEvents(); the tap keeps those that came before a violation
    await collect(provider(QUESTION).pipe(tap((event) => events.push(event))));
    return outcomeOf(events);
  } catch (error) {
    const text = error instanceof ProviderProtocolError ? error.message : `${(error as Error)?.name ?? 'Error'} (not a protocol check): ${String((error as Error)?.message ?? error)}`;
    return outcomeOf(events, text);
  }
}

function providerFor(api: Api, url: string, file: string): Provider {
  // no key (a key of the environment is not sent to loopback), no retry (a recording is served once), an
  // idle timeout that keeps a stuck stream from holding up the check
  const common = { model: 'check-streams', apiKey: '', maxRetries: 0, idleTimeoutMs: 10_000 };
  if (api === 'openai') return openAIChatProvider({ ...common, baseURL: `${url}/v1` });
  if (api === 'openai-responses') return openAIResponsesProvider({ ...common, baseURL: `${url}/v1` });
  if (api === 'gemini') return geminiProvider({ ...common, baseURL: isVertex(file) ? `${url}/v1beta1/projects/check/locations/global/publishers/google` : `${url}/v1beta` });
  return anthropicProvider({ ...common, baseURL: url });
}

/** A Gemini recording of Vertex AI: `vertex` in its name (the streams' README). */
function isVertex(file: string): boolean {
  return /vertex/i.test(file);
}

/**
 * One compact line for a stream: file, stop reason, text length, calls (names), reasoning (characters of
 * `reasoning_delta`, and the blocks `message_end` carries), usage (in/out tokens), whether the piece sizes
 * agree, the error message and any protocol error.
 *
 * ```text
 * anthropic/thinking.sse  stop     text   13  calls -  reasoning 75 (1 block)  usage 69/53  pieces agree
 * ```
 */
export function describeResult(result: StreamResult, width = 0): string {
  const { outcome } = result;
  const calls = outcome.calls.length === 0 ? '-' : outcome.calls.map((call) => call.name).join(',');
  const blocks = outcome.reasoning === undefined ? '' : ` (${outcome.reasoning.length} block${outcome.reasoning.length === 1 ? '' : 's'})`;
  const reasoning = outcome.reasoningText === '' && blocks === '' ? '-' : `${outcome.reasoningText.length}${blocks}`;
  const usage = outcome.usage === undefined ? '-' : `${outcome.usage.inputTokens}/${outcome.usage.outputTokens}`;
  const parts = [
    result.file.padEnd(width),
    (outcome.stopReason ?? 'none').padEnd(7),
    `text ${String(outcome.text.length).padStart(4)}`,
    `calls ${calls}`,
    `reasoning ${reasoning}`,
    `usage ${usage}`,
    result.disagreements.length === 0
      ? 'pieces agree'
      : `PIECES DISAGREE (${result.disagreements.map((d) => `${d.pieceSize} B: ${d.differences.join('; ')}`).join(' | ')})`,
  ];
  if (result.sdk !== undefined) {
    const { sdk } = result;
    parts.push('thrown' in sdk ? `the SDK threw: ${sdk.thrown}` : sdk.differences.length === 0 ? 'the SDK agrees' : `SDK DISAGREES (${sdk.differences.join('; ')})`);
  }
  if (outcome.errorMessage !== undefined) parts.push(`error: ${shorten(JSON.stringify(outcome.errorMessage), 160)}`);
  if (result.protocolErrors.length > 0) parts.push(`PROTOCOL ERROR: ${result.protocolErrors.join(' | ')}`);
  return parts.join('  ');
}

const STOP_ORDER: readonly string[] = ['stop', 'toolUse', 'length', 'error', 'aborted', 'none'];

/** The lines after the streams': counts by stop reason, the errors, disagreements and protocol errors. */
export function summarize(results: readonly StreamResult[]): string[] {
  const counts = new Map<string, number>();
  for (const { outcome } of results) counts.set(outcome.stopReason ?? 'none', (counts.get(outcome.stopReason ?? 'none') ?? 0) + 1);
  const byReason = STOP_ORDER.filter((reason) => counts.has(reason))
    .map((reason) => `${reason} ${counts.get(reason)}`)
    .join(', ');
  const errors = results.filter((r) => r.outcome.stopReason === 'error').map((r) => r.file);
  const disagreeing = results.filter((r) => r.disagreements.length > 0).map((r) => r.file);
  const broken = results.filter((r) => r.protocolErrors.length > 0).map((r) => r.file);
  const compared = results.filter((r) => r.sdk !== undefined && !('thrown' in r.sdk));
  const unlike = compared.filter(sdkDisagrees).map((r) => r.file);
  const thrown = results.filter((r) => r.sdk !== undefined && 'thrown' in r.sdk).map((r) => r.file);
  const list = (files: string[]) => (files.length === 0 ? 'none' : `${files.length}: ${files.join(', ')}`);
  return [
    `${results.length} stream${results.length === 1 ? '' : 's'}: ${byReason || 'none'}`,
    `stop reason error (listed, not a failure): ${list(errors)}`,
    `piece sizes disagree: ${list(disagreeing)}`,
    `protocol errors: ${list(broken)}`,
    ...(compared.length + thrown.length > 0
      ? [`the official SDK (P21): ${compared.length - unlike.length} of ${compared.length} agree; disagree: ${list(unlike)}; the SDK threw (listed, not compared): ${list(thrown)}`]
      : []),
  ];
}

/** 1 when a stream's piece sizes disagreed, a provider broke the protocol or disagreed with its SDK; an `error` stop reason alone is no failure. */
export function exitCodeOf(results: readonly StreamResult[]): 0 | 1 {
  return results.some((r) => r.disagreements.length > 0 || r.protocolErrors.length > 0 || sdkDisagrees(r)) ? 1 : 0;
}

function sdkDisagrees(result: StreamResult): boolean {
  return result.sdk !== undefined && 'differences' in result.sdk && result.sdk.differences.length > 0;
}

/**
 * Serves every recording under `folder` on a loopback server of its own (127.0.0.1, an ephemeral port,
 * stopped at the end), whole and then in each of `pieceSizes`, and reports what the providers made of it.
 *
 * ```ts
 * const { results, exitCode } = await checkStreams(folder, { write: console.log });
 * ```
 */
export async function checkStreams(folder: string, options: CheckOptions = {}): Promise<CheckReport> {
  const { pieceSizes = PIECE_SIZES, write = () => undefined } = options;
  const files = recordings(folder);
  const width = Math.max(0, ...files.map(({ file }) => file.length));
  const server = await LoopbackServer.start();
  const results: StreamResult[] = [];
  try {
    for (const { file, api, path } of files) {
      const body = stripHeader(readFileSync(path));
      const provider = providerFor(api, server.url, file);
      const outcome = await serve(server, provider, body, undefined);
      const protocolErrors = outcome.protocolError !== undefined ? [`whole: ${outcome.protocolError}`] : [];
      const disagreements: StreamResult['disagreements'] = [];
      for (const pieceSize of pieceSizes) {
        const inPieces = await serve(server, provider, body, pieceSize);
        if (inPieces.protocolError !== undefined) protocolErrors.push(`${pieceSize} B: ${inPieces.protocolError}`);
        const differ = differences(outcome, inPieces);
        if (differ.length > 0) disagreements.push({ pieceSize, differences: differ });
      }
      const result: StreamResult = { file, api, outcome, disagreements, protocolErrors };
      if (api === 'gemini') {
        const sdk = await sdkSummary(server, body, isVertex(file));
        result.sdk = 'thrown' in sdk ? sdk : { differences: sdkDifferences(providerSummary(outcome), sdk) };
      }
      results.push(result);
      write(describeResult(result, width));
    }
  } finally {
    await server.stop();
  }
  write('');
  for (const line of summarize(results)) write(line);
  return { results, exitCode: exitCodeOf(results) };
}

export const USAGE = 'usage: npm run check-streams -- FOLDER   (or STREAMS_DIR=FOLDER npm run check-streams); FOLDER holds openai/*.sse, anthropic/*.sse, openai-responses/*.sse and/or gemini/*.sse';

/** Where the command line writes: standard output and standard error by default. */
export interface Console {
  log(line: string): void;
  error(line: string): void;
}

/**
 * The command line: the folder as the first argument, else `STREAMS_DIR`; resolves to the exit code
 * (0 all well, 1 a disagreement or a protocol error, 2 a usage error).
 */
export async function main(argv: readonly string[], env: Record<string, string | undefined> = process.env, out: Console = console): Promise<number> {
  const folder = argv[0] ?? env.STREAMS_DIR;
  if (folder === undefined || folder === '' || argv[0] === '--help' || argv[0] === '-h') {
    out.error(USAGE);
    return 2;
  }
  if (!existsSync(folder) || !statSync(folder).isDirectory()) {
    out.error(`check-streams: ${folder} is not a folder\n${USAGE}`);
    return 2;
  }
  if (recordings(folder).length === 0) {
    out.error(`check-streams: no .sse file in ${APIS.map((api) => join(folder, api)).join(', ')}\n${USAGE}`);
    return 2;
  }
  const { exitCode } = await checkStreams(folder, { write: (line) => out.log(line) });
  return exitCode;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
