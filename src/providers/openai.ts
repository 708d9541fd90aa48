import type { AgentMessage, Attachment, Provider, ProviderEvent, ProviderInput, ToolResultMessage, Usage } from '../types.js';
import { IMAGE_TYPES_ONLY, WEB_IMAGE_TYPES, attachmentLine, attachmentUrl, inlineData } from '../util/attachments.js';
import { shown } from '../util/values.js';
import { inputSchema, parseArguments, parseEventData } from './json.js';
import { openAIUsage } from './openai-usage.js';
import type { SseEvent } from './http/sse.js';
import { HttpProviderOptions, ToolChoice, WireError, WireTranslator, failedEnd, httpSettings, messageOf, streamFailure, streamRequest } from './http/transport.js';
import { type ProviderIdentity, named } from './named-provider.js';
import { generatedCallId } from './call-id.js';

/** P10: how much a reasoning model thinks before it answers (OpenAI `reasoning_effort`). */
export type ReasoningEffort = 'low' | 'medium' | 'high';

/** Options of {@link openAIChatProvider}. `baseURL` includes the version: default `https://api.openai.com/v1`. */
export interface OpenAIChatProviderOptions extends HttpProviderOptions {
  /** P10: sent as `reasoning_effort`; other values a server knows (`minimal`, …) go through `extraBody`. */
  reasoningEffort?: ReasoningEffort;
}

/** P10: the `reasoningEffort` values the OpenAI providers accept. */
export const EFFORTS: ReadonlySet<unknown> = new Set<ReasoningEffort>(['low', 'medium', 'high']);

/**
 * A {@link Provider} for the OpenAI Chat Completions streaming API, which OpenAI and the
 * OpenAI-compatible servers speak (Ollama's `/v1`, llama.cpp's server, vLLM, LM Studio, OpenRouter).
 * Each subscription POSTs one request to `${baseURL}/chat/completions` (plus retries: P4) and
 * streams the reply as events; unsubscribing aborts it. `apiKey` defaults to `OPENAI_API_KEY` and
 * is sent as `Authorization: Bearer`; without a key no such header is sent (local servers need none).
 * `maxTokens` is sent as `max_completion_tokens`; a server that knows only `max_tokens` gets it through
 * `extraBody: { max_tokens: N }`.
 *
 * ```ts
 * const provider = openAIChatProvider({ model: 'gpt-4o-mini' });
 * const local = openAIChatProvider({ model: 'qwen2.5:7b', baseURL: 'http://localhost:11434/v1' });
 * const thinking = openAIChatProvider({ model: 'o4-mini', reasoningEffort: 'low', maxTokens: 2000 });
 * runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'What time is it?' }] }).subscribe(console.log);
 * ```
 */
export function openAIChatProvider(options: OpenAIChatProviderOptions): Provider & ProviderIdentity<'openai'> {
  const settings = httpSettings(options, 'openAIChatProvider', 'https://api.openai.com/v1', 'OPENAI_API_KEY');
  const { reasoningEffort } = options;
  if (reasoningEffort !== undefined && !EFFORTS.has(reasoningEffort)) {
    throw new RangeError(`openAIChatProvider: reasoningEffort must be 'low', 'medium' or 'high' (got ${shown(reasoningEffort)})`);
  }
  const { model, system, temperature, maxTokens, toolChoice, stop, apiKey } = settings;
  const request: OpenAIChatRequestOptions = { model, system, temperature, maxTokens, toolChoice, stop, reasoningEffort };
  const auth: Record<string, string> = apiKey === '' ? {} : { authorization: `Bearer ${apiKey}` };
  const provider = (input: ProviderInput) =>
    streamRequest(
      () => settings.request('/chat/completions', auth, openAIChatRequest(request, input)),
      () => new OpenAIChatTranslator(),
    );
  return named(provider, 'openai', model); // what a trace reads of it (O2)
}

/** What {@link openAIChatRequest} puts into a request besides the conversation: the provider's checked options. */
export interface OpenAIChatRequestOptions {
  model: string;
  system?: string | undefined;
  temperature?: number | undefined;
  maxTokens?: number | undefined;
  toolChoice?: ToolChoice | undefined;
  stop?: readonly string[] | undefined;
  reasoningEffort?: ReasoningEffort | undefined;
}

/**
 * The request body for one call: the system prompt, then the history in the API's format (an
 * assistant's calls as `tool_calls`, each result a `tool` message, a `SystemMessage` a `system` message
 * where it stands), the tools as JSON Schema, and the options that are set (P11): `tool_choice` (only
 * with tools: the API refuses it without), `temperature`, `max_completion_tokens`, `stop`,
 * `reasoning_effort`; with `output` (J1), `response_format` of that JSON Schema and no tools. The provider merges
 * `extraBody` into it last.
 *
 * ```ts
 * openAIChatRequest({ model: 'gpt-4o-mini' }, { messages: [{ role: 'user', content: 'hi' }], tools: [] });
 * // { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } }
 * openAIChatRequest({ model: 'm', toolChoice: 'get_weather', maxTokens: 100 }, { messages, tools: [weatherSpec] });
 * // { …, tool_choice: { type: 'function', function: { name: 'get_weather' } }, max_completion_tokens: 100, … }
 * ```
 */
export function openAIChatRequest(options: OpenAIChatRequestOptions, { messages, tools: offered, output }: ProviderInput): object {
  const { model, system, temperature, maxTokens, toolChoice, stop, reasoningEffort } = options;
  const wire: object[] = system ? [{ role: 'system', content: system }] : [];
  let held: object[] | undefined; // F2: the attachments of the results so far, for the user message after them
  for (const message of messages) {
    if (held !== undefined && message.role !== 'toolResult') held = flushHeld(wire, held);
    wire.push(openAIMessage(message));
    if (message.role === 'toolResult' && message.attachments !== undefined) held = heldParts(held, message);
  }
  if (held !== undefined) flushHeld(wire, held);
  const body: Record<string, unknown> = { model, messages: wire };
  // J1: a typed answer in the API's JSON mode, with no tools; `strict: false`: the schema is sent as it is (R24)
  const tools = output === undefined ? offered : [];
  if (output !== undefined) body.response_format = { type: 'json_schema', json_schema: { name: output.name, schema: output.schema, strict: false } };
  if (tools.length > 0) {
    body.tools = tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: inputSchema(tool) },
    }));
    if (toolChoice !== undefined) body.tool_choice = openAIToolChoice(toolChoice);
  }
  if (temperature !== undefined) body.temperature = temperature;
  if (maxTokens !== undefined) body.max_completion_tokens = maxTokens;
  if (stop !== undefined && stop.length > 0) body.stop = [...stop];
  if (reasoningEffort !== undefined) body.reasoning_effort = reasoningEffort;
  body.stream = true;
  body.stream_options = { include_usage: true };
  return body;
}

/** P11: `'auto'`, `'none'` and `'required'` as they are; a tool's name as the API's named choice. */
function openAIToolChoice(choice: ToolChoice): string | object {
  return choice === 'auto' || choice === 'none' || choice === 'required' ? choice : { type: 'function', function: { name: choice } };
}

function openAIMessage(message: AgentMessage): object {
  switch (message.role) {
    case 'system': // in place: the API reads system messages wherever they stand (R21)
      return { role: 'system', content: message.content };
    case 'user':
      if (message.attachments === undefined) return { role: 'user', content: message.content };
      return { role: 'user', content: [...textPart(message.content), ...message.attachments.map(chatPart)] };
    case 'toolResult': // text only: its attachments follow the turn's results (heldParts)
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
    case 'assistant': {
      const calls = message.toolCalls ?? [];
      if (calls.length === 0) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        content: message.content === '' ? null : message.content,
        tool_calls: calls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: JSON.stringify(call.input) },
        })),
      };
    }
  }
}

/** The text of a message as a content part, none for an empty text (the API refuses an empty part). */
function textPart(text: string): object[] {
  return text === '' ? [] : [{ type: 'text', text }];
}

/** F2: the parts of the user message after a turn's results: a line naming each result, then its attachments. */
function heldParts(held: object[] | undefined, result: ToolResultMessage): object[] | undefined {
  if (result.attachments!.length === 0) return held;
  const parts = held ?? [{ type: 'text', text: RESULTS_ATTACHMENTS }];
  parts.push({ type: 'text', text: `${result.toolName} (${result.toolCallId}):` }, ...result.attachments!.map(chatPart));
  return parts;
}

function flushHeld(wire: object[], held: object[]): undefined {
  wire.push({ role: 'user', content: held });
  return undefined;
}

/**
 * F2: the first line of the user message that carries a turn's result attachments on Chat Completions, whose tool
 * messages take text only; each result with attachments follows as `NAME (CALL_ID):` and its parts.
 */
export const RESULTS_ATTACHMENTS = 'Attachments of the results above:';

/**
 * F2: an attachment as a Chat Completions content part: an image as `image_url` (its URL, or its data — jpeg, png,
 * gif, webp — as a `data:` URL), wav or mp3 audio with data as `input_audio`, a file with data as `file` (`file_data` a `data:` URL);
 * what the API cannot take (other audio, audio or a file by web URL) as a text part that says so.
 */
function chatPart(attachment: Attachment): object {
  const data = inlineData(attachment);
  if (attachment.type === 'image') {
    if (data !== undefined && !WEB_IMAGE_TYPES.has(attachment.mimeType.toLowerCase())) return { type: 'text', text: attachmentLine(attachment, IMAGE_TYPES_ONLY) };
    return { type: 'image_url', image_url: { url: attachmentUrl(attachment) } };
  }
  if (attachment.type === 'audio') {
    const format = AUDIO_FORMATS[attachment.mimeType.toLowerCase()];
    if (data === undefined) return { type: 'text', text: attachmentLine(attachment, 'not sent, API takes audio only as data') };
    if (format === undefined) return { type: 'text', text: attachmentLine(attachment, 'not sent, API takes wav or mp3 audio only') };
    return { type: 'input_audio', input_audio: { data, format } };
  }
  if (data === undefined) return { type: 'text', text: attachmentLine(attachment, 'not sent, API takes files only as data') };
  return { type: 'file', file: { file_data: `data:${attachment.mimeType};base64,${data}`, filename: attachment.name ?? 'file' } };
}

/** The audio MIME types Chat Completions' `input_audio` takes, and its name for each. */
const AUDIO_FORMATS: Readonly<Record<string, 'wav' | 'mp3'>> = {
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/wave': 'wav',
  'audio/mpeg': 'mp3',
  'audio/mp3': 'mp3',
};

// where a call's arguments stand, followed character by character (P8): no JSON.parse of a partial text
const ARGS_EMPTY = 0; // only whitespace so far
const ARGS_OPEN = 1; // inside the top-level object
const ARGS_WHOLE = 2; // the top-level object closed (and only whitespace after it)
const ARGS_OTHER = 3; // not an object, or something after it: parsed (and refused) when the reply finishes

/** A streamed call being put together: its arguments come in pieces, and a scan of each piece tells when they form a whole object. */
class PendingCall {
  arguments = '';
  state = ARGS_EMPTY;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Its first `tool_call_delta` went out. */
  announced = false;
  /** Its `tool_call` went out, or it was dropped as cut (P6). */
  done = false;

  constructor(
    /** P9: the call's place in the reply, counted from 0: the `index` of its `tool_call_delta`s. */
    readonly position: number,
    /** The server's `index`, if it sends one. */
    readonly index: number | undefined,
    public id: string,
    /** `false` while `id` is one made up here, for a server that sent none (yet). */
    public idGiven: boolean,
    public name: string,
  ) {}

  /** Appends a piece of the arguments; a few comparisons per character, no allocation. */
  append(piece: string): void {
    this.arguments += piece;
    let { state, depth, inString, escaped } = this;
    for (let i = 0; i < piece.length && state !== ARGS_OTHER; i++) {
      const c = piece.charCodeAt(i);
      if (state === ARGS_OPEN) {
        if (inString) {
          if (escaped) escaped = false;
          else if (c === 0x5c /* \ */) escaped = true;
          else if (c === 0x22 /* " */) inString = false;
        } else if (c === 0x22) inString = true;
        else if (c === 0x7b /* { */ || c === 0x5b /* [ */) depth++;
        else if ((c === 0x7d /* } */ || c === 0x5d) /* ] */ && --depth === 0) state = ARGS_WHOLE;
      } else if (!isSpace(c)) {
        // the first character opens the object; anything after a whole object makes it something else
        if (state === ARGS_EMPTY && c === 0x7b) {
          state = ARGS_OPEN;
          depth = 1;
        } else state = ARGS_OTHER;
      }
    }
    this.state = state;
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
  }
}

/** A call that may go out before the reply finishes: a name, and arguments that form a whole object. */
function isWhole(call: PendingCall): boolean {
  return call.state === ARGS_WHOLE && call.name !== '';
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (!isSpace(text.charCodeAt(i))) return false;
  return true;
}

interface ToolCallDelta {
  index?: unknown;
  id?: unknown;
  function?: { name?: unknown; arguments?: unknown } | null;
}

interface ChatDelta {
  content?: unknown;
  tool_calls?: unknown;
  refusal?: unknown;
  /** DeepSeek, xAI, Moonshot, Z.ai */
  reasoning_content?: unknown;
  /** Groq, OpenRouter, Cerebras */
  reasoning?: unknown;
}

interface ChatChoice {
  index?: unknown;
  delta?: ChatDelta | null;
  finish_reason?: unknown;
}

interface ChatChunk {
  error?: unknown;
  choices?: unknown;
  usage?: unknown;
}

interface ChatUsage {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
  prompt_tokens_details?: { cached_tokens?: unknown } | null;
}

type ToolCallDeltaEvent = Extract<ProviderEvent, { type: 'tool_call_delta' }>;
type MessageEndEvent = Extract<ProviderEvent, { type: 'message_end' }>;

/** What `next` returns when a chunk makes no event: shared, never written to. */
const NONE = Object.freeze([]) as unknown as ProviderEvent[];

/**
 * Chat Completions chunks → provider events. `delta.content` is a `text_delta` at once (given as an
 * array of parts, its text parts are; its thinking parts are reasoning, P7). `delta.reasoning_content` or
 * `delta.reasoning` (servers that stream their model's reasoning) is a `reasoning_delta` (P10). A
 * non-empty `delta.refusal` ends the reply with `error`, the refusal as its message (P7). Tool calls are
 * gathered by `index` (by `id`, or onto the last call, where a server sends no index; a new `id` at a
 * known index is a new call); each piece of a call's arguments is a `tool_call_delta` (P9), and a call
 * is emitted as a `tool_call` as soon as its arguments form a whole JSON object and a later call has
 * started, or else when the reply finishes (P8). A reply cut by the token limit (`finish_reason`
 * `length`) drops the call it cut (P6). `message_end` carries the usage the server sent (R27) and
 * follows at the first of: a chunk with `usage` at or after the `finish_reason` (nothing of the reply
 * comes after it), `[DONE]` (which completes a reply even without a `finish_reason`, P7), the end of a
 * stream that brought a `finish_reason`.
 *
 * ```ts
 * const stream = new OpenAIChatTranslator();
 * stream.next({ data: '{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}' }); // [text_delta 'Hi']
 * stream.next({ data: '{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}' });             // []
 * stream.next({ data: '[DONE]' });                                                                 // [message_end 'stop']
 * ```
 */
export class OpenAIChatTranslator implements WireTranslator {
  private readonly calls: PendingCall[] = [];
  /** The first call that may still be waiting for its `tool_call`. */
  private firstOpen = 0;
  private callsMade = 0;
  /** P6: the token limit cut a call, which was dropped. */
  private cutCall = false;
  private finishReason: string | undefined;
  /** P7: the refusal deltas, joined. */
  private refusal = '';
  /** R27: the last `usage` the server sent, read once, at the end. */
  private usage: unknown;
  /** The events of the chunk being read. */
  private out: ProviderEvent[] = NONE;

  next({ event, data }: SseEvent): ProviderEvent[] {
    this.out = NONE;
    if (data.length <= 16 && data.trim() === '[DONE]') return this.complete(true);
    const chunk = parseEventData(data) as ChatChunk | null;
    if (typeof chunk !== 'object' || chunk === null) throw new WireError(`unexpected data in the stream: ${data.slice(0, 200)}`);
    if ((chunk.error !== undefined && chunk.error !== null) || event === 'error') {
      throw new WireError(`error in the stream: ${messageOf(data) ?? data.slice(0, 500)}`, streamFailure(chunk.error));
    }
    const { choices } = chunk;
    if (Array.isArray(choices)) {
      // the first choice: a server may send other choices' chunks too (n > 1), never asked for here
      for (const choice of choices as (ChatChoice | null)[]) {
        if (typeof choice === 'object' && choice !== null && (choice.index ?? 0) === 0) {
          this.read(choice);
          break;
        }
      }
    }
    const { usage } = chunk;
    if (typeof usage === 'object' && usage !== null) {
      this.usage = usage;
      // R27: with include_usage the usage comes last, in a chunk of its own after the finish_reason (or,
      // on some servers, in the finish_reason's chunk): the reply is whole, no need to wait for [DONE]
      if (this.finishReason !== undefined) return this.complete(true);
    }
    return this.out;
  }

  end(): ProviderEvent[] {
    this.out = NONE;
    return this.complete(false);
  }

  private read(choice: ChatChoice): void {
    const { delta } = choice;
    if (typeof delta === 'object' && delta !== null) {
      const { content, tool_calls: toolCalls, refusal, reasoning_content: reasoningContent, reasoning } = delta;
      // P10: one server's field or the other's, never both as two deltas
      if (typeof reasoningContent === 'string' && reasoningContent !== '') this.push({ type: 'reasoning_delta', text: reasoningContent });
      else if (typeof reasoning === 'string' && reasoning !== '') this.push({ type: 'reasoning_delta', text: reasoning });
      if (typeof content === 'string') {
        if (content !== '') this.push({ type: 'text_delta', text: content });
      } else if (Array.isArray(content)) this.parts(content);
      if (typeof refusal === 'string') this.refusal += refusal;
      if (Array.isArray(toolCalls)) for (const piece of toolCalls as unknown[]) this.gather(piece);
    }
    const reason = choice.finish_reason;
    if (typeof reason === 'string' && reason !== '' && this.finishReason === undefined) {
      this.finishReason = reason;
      this.flushCalls();
    }
  }

  /** P7: content as an array of parts (Mistral): text parts are text, thinking parts reasoning (P10); others are skipped. */
  private parts(parts: unknown[]): void {
    for (const part of parts) {
      if (typeof part !== 'object' || part === null) continue;
      const { type, text, thinking } = part as { type?: unknown; text?: unknown; thinking?: unknown };
      if (type === 'text') {
        if (typeof text === 'string' && text !== '') this.push({ type: 'text_delta', text });
      } else if (type === 'thinking') {
        if (typeof thinking === 'string' && thinking !== '') this.push({ type: 'reasoning_delta', text: thinking });
        else if (Array.isArray(thinking)) {
          for (const inner of thinking as unknown[]) {
            const innerText = typeof inner === 'object' && inner !== null ? (inner as { text?: unknown }).text : undefined;
            if (typeof innerText === 'string' && innerText !== '') this.push({ type: 'reasoning_delta', text: innerText });
          }
        }
      }
    }
  }

  private gather(piece: unknown): void {
    if (typeof piece !== 'object' || piece === null) return;
    const delta = piece as ToolCallDelta;
    const index = typeof delta.index === 'number' ? delta.index : undefined;
    const id = typeof delta.id === 'string' && delta.id !== '' ? delta.id : undefined;
    const fn = delta.function;
    const name = typeof fn?.name === 'string' && fn.name !== '' ? fn.name : undefined;
    const raw = fn?.arguments;
    // a server that sends the arguments as an object, not as JSON text
    const args = typeof raw === 'string' ? raw : typeof raw === 'object' && raw !== null ? JSON.stringify(raw) : '';

    let call = this.find(index, id);
    // some servers number every call 0: a new id at a known index is a new call
    if (call !== undefined && id !== undefined && call.idGiven && call.id !== id) call = undefined;
    if (call === undefined) {
      const position = this.calls.length;
      call = new PendingCall(position, index, id ?? generatedCallId(position), id !== undefined, name ?? '');
      this.calls.push(call);
      this.emitWholeCalls(position); // P8: a later call has started
    } else if (call.done) {
      if (isBlank(args)) return; // a repeated header or an empty piece: nothing for the call
      throw new WireError(`tool call ${call.name} (${call.id}) got more arguments after it was complete: ${args.slice(0, 100)}`);
    }
    // P9: the first delta of a call names its id and its name (as far as known), a later one what it adds
    let sendId = !call.announced;
    let sendName = sendId && call.name !== '';
    if (id !== undefined && !call.idGiven) {
      call.id = id;
      call.idGiven = sendId = true;
    }
    if (name !== undefined && call.name === '') {
      call.name = name;
      sendName = true;
    }
    if (args !== '') call.append(args);
    if (sendId || sendName || args !== '') {
      const event: ToolCallDeltaEvent = { type: 'tool_call_delta', index: call.position, argumentsDelta: args };
      if (sendId) event.id = call.id;
      if (sendName) event.name = call.name;
      this.push(event);
      call.announced = true;
    }
    if (call.position < this.calls.length - 1 && isWhole(call)) this.emit(call); // P8: whole, and a later call has started
  }

  /** The call a delta continues: the last one at its `index`, else the one with its `id`, else the last one. */
  private find(index: number | undefined, id: string | undefined): PendingCall | undefined {
    const { calls } = this;
    for (let n = calls.length - 1; n >= 0; n--) {
      const call = calls[n];
      if (index !== undefined ? call.index === index : id === undefined || call.id === id) return call;
    }
    return undefined;
  }

  /** P8: the calls before `before` whose arguments are whole go out now, their tools start while the reply streams on (R3). */
  private emitWholeCalls(before: number): void {
    for (let n = this.firstOpen; n < before; n++) {
      const call = this.calls[n];
      if (!call.done && isWhole(call)) this.emit(call);
    }
    while (this.firstOpen < before && this.calls[this.firstOpen].done) this.firstOpen++;
  }

  private emit(call: PendingCall): void {
    call.done = true;
    if (call.name === '') throw new WireError(`tool call ${call.id} has no function name`);
    const input = parseArguments(call.arguments, call.name, call.id);
    this.push({ type: 'tool_call', call: { id: call.id, name: call.name, input } });
    this.callsMade++;
  }

  /** The reply finished: every call still open goes out, but for the ones a token limit cut (P6). */
  private flushCalls(): void {
    const cut = this.finishReason === 'length';
    for (let n = this.firstOpen; n < this.calls.length; n++) {
      const call = this.calls[n];
      if (call.done) continue;
      if (!cut) this.emit(call);
      else if (!isWhole(call)) this.dropCut(call); // the cut block: no call, no JSON error
      else {
        try {
          this.emit(call);
        } catch {
          this.dropCut(call);
        }
      }
    }
    this.firstOpen = this.calls.length;
  }

  /** P6: the call the token limit cut is no call; the reply will say `length`. */
  private dropCut(call: { done: boolean }): void {
    call.done = true;
    this.cutCall = true;
  }

  /** The reply is complete: at `[DONE]` (`done`), or at the end of the stream, which must have brought a `finish_reason`. */
  private complete(done: boolean): ProviderEvent[] {
    // P7: some servers never send a finish_reason; their [DONE] still says the reply is whole
    if (this.finishReason === undefined && !done) throw new WireError('the stream ended before the reply was complete (no finish_reason)');
    this.flushCalls();
    this.push(this.messageEnd());
    return this.out;
  }

  private messageEnd(): MessageEndEvent {
    const reason = this.finishReason ?? 'stop';
    const end: MessageEndEvent =
      this.refusal !== ''
        ? failedEnd(this.refusal, { kind: 'refusal' }) // P7
        : reason === 'length' && (this.cutCall || this.callsMade === 0) // P6: cut inside a call, or in the text alone
          ? { type: 'message_end', stopReason: 'length' }
          : this.callsMade > 0 // P3: calls made, toolUse whatever the finish_reason
            ? { type: 'message_end', stopReason: 'toolUse' }
            : messageEndOf(reason);
    const usage = usageOf(this.usage);
    if (usage !== undefined) end.usage = usage;
    return end;
  }

  private push(event: ProviderEvent): void {
    if (this.out === NONE) this.out = [event];
    else this.out.push(event);
  }
}

/** R27: Chat Completions' `usage` names its counts `prompt_tokens`, `completion_tokens`, `prompt_tokens_details`. */
function usageOf(raw: unknown): Usage | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const { prompt_tokens: input, completion_tokens: output, prompt_tokens_details: details } = raw as ChatUsage;
  return openAIUsage(input, output, details);
}

/** `finish_reason` → `message_end`, for a reply without tool calls. */
function messageEndOf(reason: string): MessageEndEvent {
  switch (reason) {
    case 'length':
      return { type: 'message_end', stopReason: 'length' };
    case 'tool_calls':
    case 'function_call':
      return { type: 'message_end', stopReason: 'toolUse' };
    case 'content_filter':
      return failedEnd('finish_reason content_filter: the content filter cut the reply', { kind: 'refusal' });
    default: // 'stop', and what servers add ('eos', 'end_turn', …)
      return { type: 'message_end', stopReason: 'stop' };
  }
}

