import type { AgentMessage, Attachment, Provider, ProviderEvent, ProviderFailure, ProviderInput, SystemMessage, StopReason, Usage } from '../types.js';
import { IMAGE_TYPES_ONLY, WEB_IMAGE_TYPES, attachmentLine, inlineData } from '../util/attachments.js';
import { inputSchema, parseArguments, parseEventData } from './json.js';
import { isPlainObject, shown } from '../util/values.js';
import type { SseEvent } from './http/sse.js';
import { HttpProviderOptions, ToolChoice, WireError, WireTranslator, failedEnd, httpSettings, statusOfErrorType, streamRequest } from './http/transport.js';
import { type ProviderIdentity, named } from './named-provider.js';
import { type AnthropicCache, withCacheBreakpoints } from './anthropic-cache.js';

/** Options of {@link anthropicProvider}. `baseURL` excludes the version: default `https://api.anthropic.com`. */
export interface AnthropicProviderOptions extends HttpProviderOptions {
  /** The reply's token limit, `max_tokens` (default 4096); with `thinking`, it must be greater than the budget. */
  maxTokens?: number;
  /**
   * P10: extended thinking with this budget of tokens, sent as `thinking: { type: 'enabled', budget_tokens }`:
   * an integer >= 1024 (the API's least budget) and below `maxTokens`, checked at call time. The API then
   * takes `temperature` only as 1 and `toolChoice` only as `'auto'` or `'none'`. (Interleaved thinking,
   * whose budget may pass `max_tokens`, goes through `extraBody: { thinking: … }` and a beta header.)
   */
  thinking?: number;
  /**
   * P19: `'auto'` (the default) marks prompt-cache breakpoints on the tools, the system prompt and the last
   * message (`cache_control: { type: 'ephemeral' }`, see `withCacheBreakpoints`), so a long conversation pays
   * for its prefix once; `'off'` sends none. Reads and writes are in `usage` (R27).
   */
  cache?: AnthropicCache;
}

/** The API version this adapter speaks. */
export const ANTHROPIC_VERSION = '2023-06-01';

/** `max_tokens` when the caller sets none: the API requires one. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

/** The least `budget_tokens` the API accepts for extended thinking. */
const MIN_THINKING_BUDGET = 1024;

/**
 * A {@link Provider} for the Anthropic Messages streaming API. Each subscription POSTs one request to
 * `${baseURL}/v1/messages` (plus retries: P4) and streams the reply as events; unsubscribing aborts
 * it. `apiKey` defaults to `ANTHROPIC_API_KEY` and is sent as `x-api-key`.
 *
 * ```ts
 * const provider = anthropicProvider({ model: 'claude-sonnet-4-5', maxTokens: 16000, thinking: 8000 });
 * runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'What time is it?' }] }).subscribe(console.log);
 * ```
 */
export function anthropicProvider(options: AnthropicProviderOptions): Provider & ProviderIdentity<'anthropic'> {
  const settings = httpSettings(options, 'anthropicProvider', 'https://api.anthropic.com', 'ANTHROPIC_API_KEY');
  const maxTokens = settings.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS;
  const { thinking } = options;
  if (thinking !== undefined) {
    if (!(Number.isInteger(thinking) && thinking >= MIN_THINKING_BUDGET)) {
      throw new RangeError(`anthropicProvider: thinking must be an integer >= ${MIN_THINKING_BUDGET} (got ${shown(thinking)})`);
    }
    // the API refuses max_tokens <= budget_tokens; say so now rather than in every reply
    if (maxTokens <= thinking) {
      const which = settings.maxTokens === undefined ? ' (the default)' : '';
      throw new RangeError(`anthropicProvider: maxTokens must be greater than thinking (got maxTokens ${maxTokens}${which}, thinking ${thinking})`);
    }
  }
  const { cache = 'auto' } = options;
  if (cache !== 'auto' && cache !== 'off') throw new TypeError(`anthropicProvider: cache must be 'auto' or 'off' (got ${shown(cache)})`);
  const { model, system, apiKey } = settings;
  const more: AnthropicRequestOptions = { temperature: settings.temperature, toolChoice: settings.toolChoice, stop: settings.stop, thinking, cache };
  const own: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION };
  if (apiKey !== '') own['x-api-key'] = apiKey;
  const provider = (input: ProviderInput) =>
    streamRequest(
      () => settings.request('/v1/messages', own, anthropicRequest(model, maxTokens, system, input, more)),
      () => new AnthropicTranslator(),
    );
  return named(provider, 'anthropic', model); // what a trace reads of it (O2)
}

/** The request options besides model, token limit and system prompt (P10, P11); each left out when undefined. */
export interface AnthropicRequestOptions {
  temperature?: number | undefined;
  toolChoice?: ToolChoice | undefined;
  stop?: readonly string[] | undefined;
  /** The thinking budget in tokens. */
  thinking?: number | undefined;
  /** P19: prompt-cache breakpoints, `'auto'` or `'off'`; none when left out. */
  cache?: AnthropicCache | undefined;
}

type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error: boolean }
  /** P10: a `thinking` or `redacted_thinking` block, as the API sent it. */
  | object;

interface WireMessage {
  role: 'user' | 'assistant';
  content: string | Block[];
}

/**
 * The request body for one call: an assistant's reasoning blocks (P10), text and calls as `thinking`,
 * `text` and `tool_use` blocks, in that order; the results of a turn as `tool_result` blocks of one user
 * message; the tools as JSON Schema. The API has one system prompt, at the top: the `system` option and the
 * history's `SystemMessage`s, in order, joined by a blank line (R21). `options` adds what P11 maps —
 * `temperature`, `tool_choice` (only with tools), `stop_sequences` — `thinking` (P10), with `cache: 'auto'`
 * the prompt-cache breakpoints (P19), and with `output` (J1) `output_config.format` of that JSON Schema (the
 * API's native structured output) and no tools.
 *
 * ```ts
 * anthropicRequest('claude-sonnet-4-5', 1024, 'Be brief.', { messages: [{ role: 'user', content: 'hi' }], tools: [] });
 * // { model: 'claude-sonnet-4-5', max_tokens: 1024, system: 'Be brief.', messages: [{ role: 'user', content: 'hi' }], stream: true }
 * anthropicRequest('claude-sonnet-4-5', 16000, undefined, { messages, tools: [weather] }, { toolChoice: 'required', stop: ['END'], thinking: 8000 });
 * // { …, tools: […], tool_choice: { type: 'any' }, stop_sequences: ['END'], thinking: { type: 'enabled', budget_tokens: 8000 }, stream: true }
 * ```
 */
export function anthropicRequest(
  model: string,
  maxTokens: number,
  system: string | undefined,
  { messages, tools: offered, output }: ProviderInput,
  options: AnthropicRequestOptions = {},
): object {
  // J1: a typed answer in the API's native structured output, with no tools
  const tools = output === undefined ? offered : [];
  const wire: WireMessage[] = [];
  // an empty part is left out, as an empty `system` option always was: no stray blank lines
  const prompts: string[] = system ? [system] : [];
  for (const message of messages) {
    if (message.role === 'system') {
      if (message.content !== '') prompts.push(message.content);
      continue;
    }
    const next = anthropicMessage(message);
    if (next === undefined) continue;
    const last = wire[wire.length - 1];
    // the API wants user and assistant to alternate: a turn's results (and what follows them) share one message
    if (last?.role === next.role) last.content = [...blocks(last.content), ...blocks(next.content)];
    else wire.push(next);
  }
  const { temperature, toolChoice, stop, thinking, cache } = options;
  const body = {
    model,
    max_tokens: maxTokens,
    ...(prompts.length > 0 && { system: prompts.join('\n\n') }),
    messages: wire,
    ...(tools.length > 0 && {
      tools: tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: inputSchema(tool) })),
    }),
    // the API refuses a tool_choice without tools
    ...(toolChoice !== undefined && tools.length > 0 && { tool_choice: anthropicToolChoice(toolChoice) }),
    ...(temperature !== undefined && { temperature }),
    ...(stop !== undefined && stop.length > 0 && { stop_sequences: [...stop] }),
    ...(thinking !== undefined && { thinking: { type: 'enabled', budget_tokens: thinking } }),
    ...(output !== undefined && { output_config: { format: { type: 'json_schema', schema: output.schema } } }),
    stream: true,
  };
  return cache === 'auto' ? withCacheBreakpoints(body) : body;
}

/**
 * P11: `toolChoice` in the Messages API's shape.
 *
 * ```ts
 * anthropicToolChoice('required');    // { type: 'any' }
 * anthropicToolChoice('get_weather'); // { type: 'tool', name: 'get_weather' }
 * ```
 */
export function anthropicToolChoice(choice: ToolChoice): { type: 'auto' | 'none' | 'any' } | { type: 'tool'; name: string } {
  if (choice === 'auto') return { type: 'auto' };
  if (choice === 'none') return { type: 'none' };
  return choice === 'required' ? { type: 'any' } : { type: 'tool', name: choice };
}

function anthropicMessage(message: Exclude<AgentMessage, SystemMessage>): WireMessage | undefined {
  switch (message.role) {
    case 'user':
      if (message.attachments === undefined) return { role: 'user', content: message.content };
      return { role: 'user', content: [...textBlock(message.content), ...message.attachments.map(anthropicBlock)] };
    case 'toolResult': {
      // F2: with attachments, the result's content is blocks: its text, then each attachment
      const { attachments } = message;
      const content = attachments === undefined ? message.content : [...textBlock(message.content), ...attachments.map(anthropicBlock)];
      return { role: 'user', content: [{ type: 'tool_result', tool_use_id: message.toolCallId, content, is_error: message.isError }] };
    }
    case 'assistant': {
      const content: Block[] = message.content === '' ? [] : [{ type: 'text', text: message.content }];
      for (const call of message.toolCalls ?? []) content.push({ type: 'tool_use', id: call.id, name: call.name, input: call.input });
      // the API rejects empty messages: an assistant turn that failed before saying anything is left out,
      // its reasoning with it (thinking alone is no reply)
      if (content.length === 0) return undefined;
      // P10: the thinking blocks go back first and unchanged, as the API requires when a tool round goes on
      const reasoning = message.reasoning === undefined ? [] : message.reasoning.filter(isThinkingBlock);
      return { role: 'assistant', content: reasoning.length > 0 ? [...reasoning, ...content] : content };
    }
  }
}

/** A text as a `text` block; none for an empty text (the API refuses an empty text block). */
function textBlock(text: string): Block[] {
  return text === '' ? [] : [{ type: 'text', text }];
}

/**
 * F2: an attachment as a Messages API block: an image as `image` (base64 for jpeg, png, gif, webp; a web URL as
 * `url`), a PDF as a `document` (base64 or `url`), a text file (`text/*`, JSON) as a `document` of its decoded
 * text; what the API cannot take (audio; other images and files) as a `text` block that says so.
 */
function anthropicBlock(attachment: Attachment): Block {
  const data = inlineData(attachment);
  const mimeType = attachment.mimeType.toLowerCase();
  if (attachment.type === 'image') {
    if (data === undefined) return { type: 'image', source: { type: 'url', url: attachment.url } };
    if (WEB_IMAGE_TYPES.has(mimeType)) return { type: 'image', source: { type: 'base64', media_type: mimeType, data } };
    return { type: 'text', text: attachmentLine(attachment, IMAGE_TYPES_ONLY) };
  }
  if (attachment.type === 'file') {
    const title = attachment.name === undefined ? {} : { title: attachment.name };
    if (mimeType === 'application/pdf') {
      const source = data === undefined ? { type: 'url', url: attachment.url } : { type: 'base64', media_type: 'application/pdf', data };
      return { type: 'document', source, ...title };
    }
    if (data !== undefined && (mimeType.startsWith('text/') || mimeType === 'application/json')) {
      return { type: 'document', source: { type: 'text', media_type: 'text/plain', data: utf8(data) }, ...title };
    }
    return { type: 'text', text: attachmentLine(attachment, 'not sent, API takes PDF and text files only') };
  }
  return { type: 'text', text: attachmentLine(attachment, 'not sent, API takes no audio') };
}

/** Base64 as the UTF-8 text it encodes (the platform's own decoders: the main entry imports nothing but rxjs). */
function utf8(data: string): string {
  return new TextDecoder().decode(Uint8Array.from(atob(data), (c) => c.charCodeAt(0)));
}

/** A block this API sent as reasoning; another API's reasoning (a history that changed providers) is not sent. */
function isThinkingBlock(block: unknown): block is object {
  if (typeof block !== 'object' || block === null) return false;
  const type = (block as { type?: unknown }).type;
  return type === 'thinking' || type === 'redacted_thinking';
}

function blocks(content: string | Block[]): Block[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

interface WireUsage {
  input_tokens?: unknown;
  output_tokens?: unknown;
  cache_read_input_tokens?: unknown;
  cache_creation_input_tokens?: unknown;
}

interface StreamEvent {
  type?: unknown;
  index?: unknown;
  message?: { usage?: WireUsage };
  content_block?: { type?: unknown; id?: unknown; name?: unknown; text?: unknown; input?: unknown; thinking?: unknown; signature?: unknown };
  delta?: { type?: unknown; text?: unknown; partial_json?: unknown; stop_reason?: unknown; thinking?: unknown; signature?: unknown };
  usage?: WireUsage;
  error?: { type?: unknown; message?: unknown };
}

/** A `tool_use` block being streamed; `call` is its place among the reply's calls (P9). */
interface OpenToolUse {
  kind: 'tool_use';
  call: number;
  id: string;
  name: string;
  json: string;
  input: unknown;
  /** Whether a `tool_call_delta` of it went out (the first carries id and name). */
  announced: boolean;
}

/** A `thinking` block being streamed (its text and signature come in deltas), or a `redacted_thinking` one (whole at its start). */
interface OpenReasoning {
  kind: 'reasoning';
  block: Record<string, unknown>;
  thinking: string;
  signature: string;
}

const CUT_STOP_REASONS: ReadonlySet<string> = new Set(['max_tokens', 'model_context_window_exceeded']);

/**
 * Messages API events → provider events: `text_delta` as text arrives, `reasoning_delta` as thinking
 * arrives (P10), a `tool_call_delta` for each `input_json_delta` (P9) and a `tool_call` at each
 * `tool_use` block's `content_block_stop`, `message_end` at `message_stop` (or at the end of a stream that
 * brought a `stop_reason`) with the reply's `usage` (R27) and its thinking blocks, reassembled as the API
 * would have sent them whole, as `reasoning` (P10). A `tool_use` block that the token limit cut is no call
 * (P6), whether the stream left it open or closed it — the API closes it before it says `max_tokens`, so a
 * block whose input does not parse at its `content_block_stop` is held: `length` when the reply then ends
 * with `max_tokens`, else an error naming the call and the JSON error. A second `message_start` (two
 * replies spliced into one stream, P7) and an `error` event fail the call (keeping the thinking when calls
 * already went out). `ping` and unknown event, block and delta types are skipped.
 *
 * ```ts
 * const stream = new AnthropicTranslator();
 * stream.next({ event: 'content_block_delta', data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}' });
 * // [text_delta 'Hi']
 * stream.next({ event: 'message_delta', data: '{"type":"message_delta","delta":{"stop_reason":"end_turn"}}' }); // []
 * stream.next({ event: 'message_stop', data: '{"type":"message_stop"}' });                                     // [message_end 'stop']
 * ```
 */
export class AnthropicTranslator implements WireTranslator {
  /** The blocks this adapter uses that have started and not stopped, by content block index. */
  private readonly open = new Map<number, OpenToolUse | OpenReasoning>();
  private started = false;
  /** `tool_use` blocks started, and `tool_call`s emitted. */
  private toolUses = 0;
  private calls = 0;
  private stopReason: string | undefined;
  /**
   * P6 as real servers send it: the `WireError` of a `tool_use` block whose input did not parse at its
   * `content_block_stop`. The API closes the block it cut before it says `max_tokens`, so this is the cut
   * block when the reply ends so, and the reply's error when it ends any other way.
   */
  private held: WireError | undefined;
  private reasoning: unknown[] | undefined;
  private inputTokens: number | undefined;
  private outputTokens: number | undefined;
  private cacheReadTokens: number | undefined;
  private cacheWriteTokens: number | undefined;

  next(event: SseEvent): ProviderEvent[] {
    try {
      return this.read(event);
    } catch (error) {
      return this.failed(error);
    }
  }

  end(): ProviderEvent[] {
    try {
      return this.finish();
    } catch (error) {
      return this.failed(error);
    }
  }

  /**
   * A failed reply whose calls went out keeps its thinking: those calls run and stand in the history, and
   * with thinking on, the API refuses them on every later request without the blocks that came before
   * them (P10). Any other failure is the transport's to word.
   */
  private failed(error: unknown): ProviderEvent[] {
    if (!(error instanceof WireError) || this.calls === 0 || this.reasoning === undefined) throw error;
    return [{ ...failedEnd(error.message, error.failure), reasoning: this.reasoning }];
  }

  private read({ data }: SseEvent): ProviderEvent[] {
    const event = parseEventData(data) as StreamEvent | null;
    if (typeof event !== 'object' || event === null) throw new WireError(`unexpected data in the stream: ${data.slice(0, 200)}`);
    switch (event.type) {
      case 'content_block_delta':
        return this.delta(event);
      case 'content_block_start':
        return this.start(event);
      case 'content_block_stop':
        return this.stop(typeof event.index === 'number' ? event.index : -1);
      case 'message_start':
        // P7: a proxy that retried upstream may splice a second reply into the stream; its blocks would mix with the first's
        if (this.started) throw new WireError('a second message_start inside one reply: the stream holds two replies');
        this.started = true;
        this.count(event.message?.usage);
        return [];
      case 'message_delta':
        if (typeof event.delta?.stop_reason === 'string') this.stopReason = event.delta.stop_reason;
        this.count(event.usage);
        return [];
      case 'message_stop':
        this.stopReason ??= 'end_turn';
        return this.finish();
      case 'error': {
        const { type, message } = event.error ?? {};
        // L1: an error in the stream of a 200 (overloaded_error) fails over as its status would
        const status = statusOfErrorType(type);
        throw new WireError(
          `error in the stream: ${[type, message].filter((part) => typeof part === 'string').join(': ') || data.slice(0, 500)}`,
          status === undefined ? { kind: 'protocol' } : { kind: 'http', status },
        );
      }
      default: // ping, and whatever the API adds later
        return [];
    }
  }

  private finish(): ProviderEvent[] {
    const { held } = this;
    if (this.stopReason === undefined) {
      const incomplete = 'the stream ended before the reply was complete (no stop_reason)';
      throw new WireError(held === undefined ? incomplete : `${held.message}; ${incomplete}`);
    }
    const cut = CUT_STOP_REASONS.has(this.stopReason);
    if (held !== undefined && !cut) throw held;
    let cutCall = held !== undefined;
    const events: ProviderEvent[] = [];
    // blocks the stream never closed: cut by the token limit (P6: no call, no half a signature), else whole
    for (const [index, block] of this.open) {
      if (!cut) events.push(...this.stop(index));
      else if (block.kind === 'tool_use') cutCall = true;
    }
    this.open.clear();
    // P6 before P3: a call cut short makes the reply `length`, whatever whole calls came before it
    if (cutCall || (cut && this.calls === 0)) events.push(this.messageEnd('length'));
    else if (this.calls > 0 || this.stopReason === 'tool_use') events.push(this.messageEnd('toolUse'));
    else if (this.stopReason === 'refusal') events.push(this.messageEnd('error', 'stop_reason refusal: the model declined to answer', 'refusal'));
    else events.push(this.messageEnd('stop')); // end_turn, stop_sequence, pause_turn, …
    return events;
  }

  private start({ index, content_block: block }: StreamEvent): ProviderEvent[] {
    // a block after the held one: that one was not cut by the token limit, its input is broken
    if (this.held !== undefined) throw this.held;
    const at = typeof index === 'number' ? index : -1;
    switch (block?.type) {
      case 'text':
        return typeof block.text === 'string' && block.text !== '' ? [{ type: 'text_delta', text: block.text }] : [];
      case 'tool_use':
        this.open.set(at, {
          kind: 'tool_use',
          call: this.toolUses++,
          id: String(block.id ?? ''),
          name: String(block.name ?? ''),
          json: '',
          input: block.input,
          announced: false,
        });
        return [];
      case 'thinking': {
        const thinking = typeof block.thinking === 'string' ? block.thinking : '';
        const signature = typeof block.signature === 'string' ? block.signature : '';
        this.open.set(at, { kind: 'reasoning', block: block as Record<string, unknown>, thinking, signature });
        return thinking !== '' ? [{ type: 'reasoning_delta', text: thinking }] : [];
      }
      case 'redacted_thinking': // encrypted: nothing to show, all to send back
        this.open.set(at, { kind: 'reasoning', block: block as Record<string, unknown>, thinking: '', signature: '' });
        return [];
      default: // server tools' blocks and their results, and whatever the API adds later
        return [];
    }
  }

  private delta({ index, delta }: StreamEvent): ProviderEvent[] {
    switch (delta?.type) {
      case 'text_delta':
        return typeof delta.text === 'string' && delta.text !== '' ? [{ type: 'text_delta', text: delta.text }] : [];
      case 'input_json_delta': {
        const open = this.open.get(typeof index === 'number' ? index : -1);
        if (open?.kind !== 'tool_use' || typeof delta.partial_json !== 'string') return []; // a server tool's input
        open.json += delta.partial_json;
        if (open.announced) return [{ type: 'tool_call_delta', index: open.call, argumentsDelta: delta.partial_json }];
        open.announced = true;
        return [{ type: 'tool_call_delta', index: open.call, id: open.id, name: open.name, argumentsDelta: delta.partial_json }];
      }
      case 'thinking_delta': {
        const open = this.open.get(typeof index === 'number' ? index : -1);
        if (open?.kind !== 'reasoning' || typeof delta.thinking !== 'string' || delta.thinking === '') return [];
        open.thinking += delta.thinking;
        return [{ type: 'reasoning_delta', text: delta.thinking }];
      }
      case 'signature_delta': {
        const open = this.open.get(typeof index === 'number' ? index : -1);
        if (open?.kind === 'reasoning' && typeof delta.signature === 'string') open.signature += delta.signature;
        return [];
      }
      default: // citations_delta, compaction_delta, …
        return [];
    }
  }

  /**
   * A block's `content_block_stop`: a `tool_call` for a `tool_use` block — or, when its input does not
   * parse, nothing yet: the block is held (P6); a reasoning block joins `reasoning`.
   */
  private stop(index: number): ProviderEvent[] {
    const open = this.open.get(index);
    if (open === undefined) return []; // a text block, or one this adapter does not use
    this.open.delete(index);
    if (open.kind === 'reasoning') {
      // the block as the API would have sent it whole: its text and signature put back together
      const whole = open.block.type === 'thinking' ? { ...open.block, thinking: open.thinking, signature: open.signature } : open.block;
      (this.reasoning ??= []).push(whole);
      return [];
    }
    const { id, name, json, input } = open;
    let parsed: Record<string, unknown>;
    try {
      parsed = json === '' && isPlainObject(input) ? input : parseArguments(json, name, id);
    } catch (error) {
      if (!(error instanceof WireError)) throw error;
      this.held = error; // P6: perhaps the block the token limit cut; the reply's end will tell
      return [];
    }
    this.calls++;
    return [{ type: 'tool_call', call: { id, name, input: parsed } }];
  }

  /** R27: the last count of each kind wins (`message_delta`'s are cumulative). */
  private count(usage: WireUsage | undefined): void {
    if (typeof usage !== 'object' || usage === null) return;
    const { input_tokens: input, output_tokens: output, cache_read_input_tokens: read, cache_creation_input_tokens: write } = usage;
    if (typeof input === 'number' && Number.isFinite(input)) this.inputTokens = input;
    if (typeof output === 'number' && Number.isFinite(output)) this.outputTokens = output;
    if (typeof read === 'number' && Number.isFinite(read)) this.cacheReadTokens = read;
    if (typeof write === 'number' && Number.isFinite(write)) this.cacheWriteTokens = write;
  }

  private messageEnd(stopReason: StopReason, errorMessage?: string, kind?: ProviderFailure['kind']): ProviderEvent {
    const event: Extract<ProviderEvent, { type: 'message_end' }> =
      errorMessage !== undefined && kind !== undefined ? failedEnd(errorMessage, { kind }) : { type: 'message_end', stopReason };
    if (errorMessage !== undefined) event.errorMessage = errorMessage;
    const usage = this.usage();
    if (usage !== undefined) event.usage = usage;
    if (this.reasoning !== undefined) event.reasoning = this.reasoning;
    return event;
  }

  /** The reply's token counts, when the stream reported any (R27). */
  private usage(): Usage | undefined {
    if (this.inputTokens === undefined && this.outputTokens === undefined) return undefined;
    const usage: Usage = { inputTokens: this.inputTokens ?? 0, outputTokens: this.outputTokens ?? 0 };
    if (this.cacheReadTokens !== undefined) usage.cacheReadTokens = this.cacheReadTokens;
    if (this.cacheWriteTokens !== undefined) usage.cacheWriteTokens = this.cacheWriteTokens;
    return usage;
  }
}
