import type { ProviderEvent, ProviderFailure, Usage } from '../types.js';
import { isPlainObject } from '../util/values.js';
import { parseEventData } from './json.js';
import type { SseEvent } from './http/sse.js';
import { WireError, WireTranslator } from './http/transport.js';
import { generatedCallId } from './call-id.js';

type MessageEndEvent = Extract<ProviderEvent, { type: 'message_end' }>;

/** One part of a Gemini `Content`, as far as it is read here; a part keeps every other field it came with. */
export interface GeminiPart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: { id?: string; name?: string; args?: Record<string, unknown>; partialArgs?: PartialArg[]; willContinue?: boolean };
  [field: string]: unknown;
}

/** Vertex's streamed arguments (P17): one value at a JSON path; a string may come in pieces (`willContinue`). */
interface PartialArg {
  jsonPath?: unknown;
  stringValue?: unknown;
  numberValue?: unknown;
  boolValue?: unknown;
  nullValue?: unknown;
  willContinue?: unknown;
}

interface Chunk {
  candidates?: { content?: { parts?: unknown }; finishReason?: unknown; finishMessage?: unknown }[];
  promptFeedback?: { blockReason?: unknown; blockReasonMessage?: unknown };
  usageMetadata?: Record<string, unknown>;
  error?: { code?: unknown; status?: unknown; message?: unknown };
}

/** P17: the finish reasons that are the model (or its filters) declining: `failure.kind` `refusal`. */
const REFUSALS: ReadonlySet<string> = new Set(['SAFETY', 'RECITATION', 'PROHIBITED_CONTENT', 'BLOCKLIST', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT']);

/** A call whose arguments Vertex streams (P17): its first part named it; an empty `functionCall` part ends it. */
class StreamedCall {
  readonly args: Record<string, unknown> = {};
  /** The path of a string whose last piece said `willContinue`: the next piece at that path is appended. */
  continuing: string | undefined;

  constructor(
    readonly index: number,
    readonly id: string,
    readonly name: string,
    /** The call's part as it will be sent back: its name, id and signature; `args` filled in at the end. */
    readonly part: GeminiPart,
  ) {}
}

/** What `next` returns when an event makes no provider event: shared, never written to. */
const NONE = Object.freeze([]) as unknown as ProviderEvent[];

/**
 * Gemini `streamGenerateContent?alt=sse` chunks → provider events (P17). A text part is a `text_delta` (a
 * `thought: true` part a `reasoning_delta`); a `functionCall` part is whole in its chunk: one `tool_call_delta`
 * (P9) and its `tool_call` **at once** (R3), with the API's `id`, else one of the library's. Vertex's streamed
 * arguments (`partialArgs`, `willContinue`) are `tool_call_delta`s, and the call's `tool_call` comes with its
 * closing part. Every part is kept as it came (text parts joined while none carries a signature) and, unless the
 * reply was plain text, travels as `message_end.reasoning` (P10's opaque blocks) so that the next request sends
 * the model turn back part by part, each `thoughtSignature` on its part. The stream has no terminal event: the
 * reply ends with the body, as its last `finishReason` says — `STOP` `stop` (`toolUse` with calls), `MAX_TOKENS`
 * `length` (P6), any other reason `error` naming it (a refusal's `failure.kind` `refusal`); a prompt blocked
 * (`promptFeedback.blockReason`, no candidates) is an `error` naming the reason. `usageMetadata` of the last
 * chunk that has counts is the usage (R27).
 *
 * ```ts
 * const stream = new GeminiTranslator();
 * stream.next({ data: '{"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]}}]}' }); // [text_delta 'Hi']
 * stream.next({ data: '{"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP"}]}' }); // []
 * stream.end(); // [message_end 'stop']
 * ```
 */
export class GeminiTranslator implements WireTranslator {
  /** The model turn's parts, as they came (text joined). */
  private readonly parts: GeminiPart[] = [];
  /** Whether a part is more than plain text: the turn then goes back as its parts (P10). */
  private rich = false;
  private calls = 0;
  private streamed: StreamedCall | undefined;
  private finishReason: string | undefined;
  private finishMessage: string | undefined;
  private blockReason: string | undefined;
  private usage: Usage | undefined;
  /** The events of the chunk being read. */
  private out: ProviderEvent[] = NONE;

  next({ data }: SseEvent): ProviderEvent[] {
    this.out = NONE;
    const raw = parseEventData(data);
    if (!isPlainObject(raw)) throw new WireError(`unexpected data in the stream: ${data.slice(0, 200)}`);
    const chunk = raw as Chunk;
    if (isPlainObject(chunk.error)) return [this.streamError(chunk.error)];
    if (isPlainObject(chunk.usageMetadata)) this.readUsage(chunk.usageMetadata);
    const blockReason = chunk.promptFeedback?.blockReason;
    if (typeof blockReason === 'string') this.blockReason = blockReason;
    const candidate = Array.isArray(chunk.candidates) ? chunk.candidates[0] : undefined;
    if (isPlainObject(candidate)) {
      const parts = isPlainObject(candidate.content) ? candidate.content.parts : undefined;
      if (Array.isArray(parts)) for (const part of parts) if (isPlainObject(part)) this.part(part as GeminiPart);
      if (typeof candidate.finishReason === 'string') this.finishReason = candidate.finishReason;
      if (typeof candidate.finishMessage === 'string') this.finishMessage = candidate.finishMessage;
    }
    return this.out;
  }

  end(): ProviderEvent[] {
    const end = this.messageEnd();
    if (this.usage !== undefined) end.usage = this.usage;
    if (this.rich && this.parts.length > 0) end.reasoning = this.parts;
    return [end];
  }

  private part(part: GeminiPart): void {
    const call = part.functionCall;
    if (isPlainObject(call)) return this.functionCall(part, call);
    if (this.streamed !== undefined) throw new WireError(`tool call ${this.streamed.name} (${this.streamed.id}) was not complete when another part came`);
    const { text } = part;
    if (typeof text === 'string') {
      if (text !== '') this.push(part.thought === true ? { type: 'reasoning_delta', text } : { type: 'text_delta', text });
      const last = this.parts[this.parts.length - 1];
      // a run of text parts goes back as one part; a signature closes the run (it stays on the part it came with)
      if (last !== undefined && isTextOnly(part) && isTextOnly(last) && last.thoughtSignature === undefined && last.thought === part.thought) {
        last.text += text;
        if (part.thoughtSignature !== undefined) last.thoughtSignature = part.thoughtSignature;
        this.rich ||= part.thoughtSignature !== undefined;
        return;
      }
      this.parts.push(part);
      this.rich ||= !isTextOnly(part) || part.thought === true || part.thoughtSignature !== undefined;
      return;
    }
    // code execution, grounding, inline data…: nothing for the loop, but the turn goes back with it
    this.parts.push(part);
    this.rich = true;
  }

  private functionCall(part: GeminiPart, call: NonNullable<GeminiPart['functionCall']>): void {
    this.rich = true;
    const open = this.streamed;
    if (open !== undefined) return this.streamedPiece(open, part, call);
    if (call.willContinue === true || call.partialArgs !== undefined) return this.openStreamed(part, call);
    const name = call.name;
    if (typeof name !== 'string' || name === '') throw new WireError(`a functionCall part has no name: ${JSON.stringify(part).slice(0, 200)}`);
    const args = call.args === undefined ? {} : call.args;
    if (!isPlainObject(args)) throw new WireError(`the arguments of tool call ${name} are not a JSON object: ${JSON.stringify(args).slice(0, 200)}`);
    const index = this.calls++;
    const id = typeof call.id === 'string' && call.id !== '' ? call.id : generatedCallId(index);
    this.parts.push(part);
    this.push({ type: 'tool_call_delta', index, id, name, argumentsDelta: JSON.stringify(args) });
    this.push({ type: 'tool_call', call: { id, name, input: args } });
  }

  /** Vertex: the first part of a streamed call names it (and may carry its signature and first arguments). */
  private openStreamed(part: GeminiPart, call: NonNullable<GeminiPart['functionCall']>): void {
    const name = call.name;
    if (typeof name !== 'string' || name === '') throw new WireError(`a streamed functionCall part has no name: ${JSON.stringify(part).slice(0, 200)}`);
    const index = this.calls++;
    const id = typeof call.id === 'string' && call.id !== '' ? call.id : generatedCallId(index);
    const kept: GeminiPart = { ...part, functionCall: typeof call.id === 'string' && call.id !== '' ? { id: call.id, name } : { name } };
    const open = new StreamedCall(index, id, name, kept);
    this.streamed = open;
    this.push({ type: 'tool_call_delta', index, id, name, argumentsDelta: '' });
    this.streamedPiece(open, part, { ...call, name: undefined, willContinue: true });
  }

  /** A piece of a streamed call: its `partialArgs` as `tool_call_delta`s; a part that does not continue ends it. */
  private streamedPiece(open: StreamedCall, part: GeminiPart, call: NonNullable<GeminiPart['functionCall']>): void {
    if (typeof part.thoughtSignature === 'string' && open.part.thoughtSignature === undefined) open.part.thoughtSignature = part.thoughtSignature;
    for (const piece of Array.isArray(call.partialArgs) ? call.partialArgs : []) {
      if (isPlainObject(piece)) this.partialArg(open, piece);
    }
    if (call.willContinue === true) return;
    this.streamed = undefined;
    open.part.functionCall!.args = open.args;
    this.parts.push(open.part);
    this.push({ type: 'tool_call', call: { id: open.id, name: open.name, input: open.args } });
  }

  private partialArg(open: StreamedCall, piece: PartialArg): void {
    const path = typeof piece.jsonPath === 'string' ? piece.jsonPath : '';
    const keys = pathKeys(path, open);
    let value: unknown;
    let delta: string;
    if (typeof piece.stringValue === 'string') {
      const before = open.continuing === path ? readPath(open.args, keys) : undefined;
      value = (typeof before === 'string' ? before : '') + piece.stringValue;
      delta = piece.stringValue;
      open.continuing = piece.willContinue === true ? path : undefined;
    } else {
      value = typeof piece.numberValue === 'number' ? piece.numberValue : typeof piece.boolValue === 'boolean' ? piece.boolValue : null;
      delta = JSON.stringify(value);
      open.continuing = undefined;
    }
    writePath(open.args, keys, value);
    if (delta !== '') this.push({ type: 'tool_call_delta', index: open.index, argumentsDelta: delta });
  }

  private messageEnd(): MessageEndEvent {
    if (this.streamed !== undefined && this.finishReason !== 'MAX_TOKENS') {
      return broken(`the stream ended inside tool call ${this.streamed.name} (${this.streamed.id})`);
    }
    const reason = this.finishReason;
    if (reason === undefined) {
      if (this.blockReason !== undefined) return refused(`prompt blocked: ${this.blockReason}`);
      return broken('the stream ended before the reply was complete (no finishReason)');
    }
    if (reason === 'STOP') return { type: 'message_end', stopReason: this.calls > 0 ? 'toolUse' : 'stop' };
    if (reason === 'MAX_TOKENS') return { type: 'message_end', stopReason: 'length' }; // P6: a call still streaming is dropped
    const message = `finish reason ${reason}${this.finishMessage === undefined ? '' : `: ${this.finishMessage}`}`;
    if (REFUSALS.has(reason)) return refused(message);
    return broken(message);
  }

  /** An error object in the stream (a server that fails mid-reply): its `code` is an HTTP status. */
  private streamError(error: NonNullable<Chunk['error']>): MessageEndEvent {
    const status = typeof error.code === 'number' ? error.code : undefined;
    const what = [status, typeof error.status === 'string' ? error.status : undefined].filter((x) => x !== undefined).join(' ');
    const message = `error in the stream${what === '' ? '' : ` (${what})`}: ${typeof error.message === 'string' ? error.message : 'no message'}`;
    const failure: ProviderFailure = status === undefined ? { kind: 'protocol', message } : { kind: 'http', status, message };
    return { type: 'message_end', stopReason: 'error', errorMessage: message, failure };
  }

  /** R27, P17: input = prompt (+ tool-use prompt), output = candidates + thoughts, cached content read from cache. */
  private readUsage(raw: Record<string, unknown>): void {
    const prompt = tokenCountOrNone(raw.promptTokenCount);
    const candidates = tokenCountOrNone(raw.candidatesTokenCount);
    if (prompt === undefined && candidates === undefined) return; // Vertex's `{ trafficType }` alone counts nothing
    const usage: Usage = {
      inputTokens: (prompt ?? 0) + (tokenCountOrNone(raw.toolUsePromptTokenCount) ?? 0),
      outputTokens: (candidates ?? 0) + (tokenCountOrNone(raw.thoughtsTokenCount) ?? 0),
    };
    const cached = tokenCountOrNone(raw.cachedContentTokenCount);
    if (cached !== undefined) usage.cacheReadTokens = cached;
    this.usage = usage;
  }

  private push(event: ProviderEvent): void {
    if (this.out === NONE) this.out = [event];
    else this.out.push(event);
  }
}


/** A part that is text and nothing else (perhaps a thought, perhaps signed). */
function isTextOnly(part: GeminiPart): boolean {
  for (const key in part) if (key !== 'text' && key !== 'thought' && key !== 'thoughtSignature') return false;
  return true;
}

/** An error end that is the stream's fault (or the model's, as with a malformed call): `failure.kind` `protocol`. */
function broken(message: string): MessageEndEvent {
  return { type: 'message_end', stopReason: 'error', errorMessage: message, failure: { kind: 'protocol', message } };
}

function refused(message: string): MessageEndEvent {
  return { type: 'message_end', stopReason: 'error', errorMessage: message, failure: { kind: 'refusal', message } };
}

function tokenCountOrNone(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** `$.a.b` or `$.list[2]` → `['a', 'b']` / `['list', 2]`; a path of another form is a protocol error. */
function pathKeys(path: string, open: StreamedCall): (string | number)[] {
  const keys: (string | number)[] = [];
  const step = /\.([^.[\]]+)|\[(\d+)\]|\['([^']*)'\]/y;
  if (!path.startsWith('$')) throw new WireError(`tool call ${open.name} (${open.id}): a streamed argument has no JSON path $…: ${path.slice(0, 100)}`);
  step.lastIndex = 1;
  while (step.lastIndex < path.length) {
    const match = step.exec(path);
    if (match === null) throw new WireError(`tool call ${open.name} (${open.id}): cannot read the JSON path ${path.slice(0, 100)}`);
    keys.push(match[2] !== undefined ? Number(match[2]) : (match[1] ?? match[3]!));
  }
  if (keys.length === 0) throw new WireError(`tool call ${open.name} (${open.id}): a streamed argument's JSON path names no field: ${path}`);
  return keys;
}

function readPath(root: Record<string, unknown>, keys: readonly (string | number)[]): unknown {
  let at: unknown = root;
  for (const key of keys) at = isPlainObject(at) || Array.isArray(at) ? (at as Record<string | number, unknown>)[key] : undefined;
  return at;
}

function writePath(root: Record<string, unknown>, keys: readonly (string | number)[], value: unknown): void {
  let at: Record<string | number, unknown> = root;
  for (let n = 0; n < keys.length - 1; n++) {
    const key = keys[n]!;
    let next = at[key];
    if (!(isPlainObject(next) || Array.isArray(next))) {
      next = typeof keys[n + 1] === 'number' ? [] : {};
      defineValue(at, key, next);
    }
    at = next as Record<string | number, unknown>;
  }
  defineValue(at, keys[keys.length - 1]!, value);
}

/** An own property even for `__proto__`, as JSON.parse makes them. */
function defineValue(target: Record<string | number, unknown>, key: string | number, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}
