import type { AgentMessage, Provider, ProviderEvent, ProviderInput, SystemMessage } from '../types.js';
import { inputSchema, parseArguments, parseEventData } from './json.js';
import { isPlainObject } from '../util/values.js';
import type { SseEvent } from './http/sse.js';
import { HttpProviderOptions, WireError, WireTranslator, httpSettings, streamRequest } from './http/transport.js';

/** Options of {@link anthropicProvider}. `baseURL` excludes the version: default `https://api.anthropic.com`. */
export interface AnthropicProviderOptions extends HttpProviderOptions {
  /** The reply's token limit, `max_tokens` (default 4096). */
  maxTokens?: number;
}

/** The API version this adapter speaks. */
export const ANTHROPIC_VERSION = '2023-06-01';

/**
 * A {@link Provider} for the Anthropic Messages streaming API. Each subscription POSTs one request to
 * `${baseURL}/v1/messages` (plus retries: P4) and streams the reply as events; unsubscribing aborts
 * it. `apiKey` defaults to `ANTHROPIC_API_KEY` and is sent as `x-api-key`.
 *
 * ```ts
 * const provider = anthropicProvider({ model: 'claude-sonnet-4-5', maxTokens: 1024 });
 * runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'What time is it?' }] }).subscribe(console.log);
 * ```
 */
export function anthropicProvider(options: AnthropicProviderOptions): Provider {
  const settings = httpSettings(options, 'anthropicProvider', 'https://api.anthropic.com', 'ANTHROPIC_API_KEY');
  const { maxTokens = 4096 } = options;
  if (!Number.isInteger(maxTokens) || maxTokens < 1) {
    throw new RangeError(`anthropicProvider: maxTokens must be an integer >= 1 (got ${String(maxTokens)})`);
  }
  const { model, system, apiKey } = settings;
  const own: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION };
  if (apiKey !== '') own['x-api-key'] = apiKey;
  return (input: ProviderInput) =>
    streamRequest(
      () => settings.request('/v1/messages', own, anthropicRequest(model, maxTokens, system, input)),
      () => new AnthropicTranslator(),
    );
}

type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error: boolean };

interface WireMessage {
  role: 'user' | 'assistant';
  content: string | Block[];
}

/**
 * The request body for one call: an assistant's text and calls as `text` and `tool_use` blocks, the
 * results of a turn as `tool_result` blocks of one user message, the tools as JSON Schema. The API has
 * one system prompt, at the top: the `system` option and the history's `SystemMessage`s, in order,
 * joined by a blank line (R21).
 *
 * ```ts
 * anthropicRequest('claude-sonnet-4-5', 1024, 'Be brief.', { messages: [{ role: 'user', content: 'hi' }], tools: [] });
 * // { model: 'claude-sonnet-4-5', max_tokens: 1024, system: 'Be brief.', messages: [{ role: 'user', content: 'hi' }], stream: true }
 * ```
 */
export function anthropicRequest(model: string, maxTokens: number, system: string | undefined, { messages, tools }: ProviderInput): object {
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
  return {
    model,
    max_tokens: maxTokens,
    ...(prompts.length > 0 && { system: prompts.join('\n\n') }),
    messages: wire,
    ...(tools.length > 0 && {
      tools: tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: inputSchema(tool) })),
    }),
    stream: true,
  };
}

function anthropicMessage(message: Exclude<AgentMessage, SystemMessage>): WireMessage | undefined {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: message.content };
    case 'toolResult':
      return {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: message.toolCallId, content: message.content, is_error: message.isError }],
      };
    case 'assistant': {
      const content: Block[] = message.content === '' ? [] : [{ type: 'text', text: message.content }];
      for (const call of message.toolCalls ?? []) content.push({ type: 'tool_use', id: call.id, name: call.name, input: call.input });
      // the API rejects empty messages: an assistant turn that failed before saying anything is left out
      return content.length > 0 ? { role: 'assistant', content } : undefined;
    }
  }
}

function blocks(content: string | Block[]): Block[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

interface StreamEvent {
  type?: unknown;
  index?: unknown;
  content_block?: { type?: unknown; id?: unknown; name?: unknown; text?: unknown; input?: unknown };
  delta?: { type?: unknown; text?: unknown; partial_json?: unknown; stop_reason?: unknown };
  error?: { type?: unknown; message?: unknown };
}

/** A `tool_use` block being streamed. */
interface PendingToolUse {
  id: string;
  name: string;
  json: string;
  input: unknown;
}

/**
 * Messages API events → provider events: `text_delta` as text arrives, a `tool_call` at each
 * `tool_use` block's `content_block_stop`, `message_end` at `message_stop` (or at the end of a stream
 * that brought a `stop_reason`). `ping` and unknown event and block types are skipped; an `error`
 * event fails the call.
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
  private readonly toolUses = new Map<number, PendingToolUse>();
  private calls = 0;
  private stopReason: string | undefined;

  next({ data }: SseEvent): ProviderEvent[] {
    const event = parseEventData(data) as StreamEvent | null;
    if (typeof event !== 'object' || event === null) throw new WireError(`unexpected data in the stream: ${data.slice(0, 200)}`);
    const index = typeof event.index === 'number' ? event.index : -1;
    switch (event.type) {
      case 'content_block_start': {
        const block = event.content_block;
        if (block?.type === 'text' && typeof block.text === 'string' && block.text !== '') return [{ type: 'text_delta', text: block.text }];
        if (block?.type === 'tool_use') {
          this.toolUses.set(index, { id: String(block.id ?? ''), name: String(block.name ?? ''), json: '', input: block.input });
        }
        return [];
      }
      case 'content_block_delta': {
        const delta = event.delta;
        if (delta?.type === 'text_delta' && typeof delta.text === 'string' && delta.text !== '') return [{ type: 'text_delta', text: delta.text }];
        const toolUse = this.toolUses.get(index);
        if (delta?.type === 'input_json_delta' && toolUse !== undefined && typeof delta.partial_json === 'string') toolUse.json += delta.partial_json;
        return [];
      }
      case 'content_block_stop':
        return this.toolCall(index);
      case 'message_delta':
        if (typeof event.delta?.stop_reason === 'string') this.stopReason = event.delta.stop_reason;
        return [];
      case 'message_stop':
        this.stopReason ??= 'end_turn';
        return this.end();
      case 'error': {
        const { type, message } = event.error ?? {};
        throw new WireError(`error in the stream: ${[type, message].filter((part) => typeof part === 'string').join(': ') || data.slice(0, 500)}`);
      }
      default: // message_start, ping, and whatever the API adds later
        return [];
    }
  }

  end(): ProviderEvent[] {
    if (this.stopReason === undefined) throw new WireError('the stream ended before the reply was complete (no stop_reason)');
    const events = [...this.toolUses.keys()].flatMap((index) => this.toolCall(index)); // blocks the stream never closed
    if (this.calls > 0) return [...events, { type: 'message_end', stopReason: 'toolUse' }];
    switch (this.stopReason) {
      case 'tool_use':
        return [...events, { type: 'message_end', stopReason: 'toolUse' }];
      case 'max_tokens':
      case 'model_context_window_exceeded':
        return [...events, { type: 'message_end', stopReason: 'length' }];
      case 'refusal':
        return [...events, { type: 'message_end', stopReason: 'error', errorMessage: 'stop_reason refusal: the model declined to answer' }];
      default: // end_turn, stop_sequence, pause_turn, …
        return [...events, { type: 'message_end', stopReason: 'stop' }];
    }
  }

  private toolCall(index: number): ProviderEvent[] {
    const toolUse = this.toolUses.get(index);
    if (toolUse === undefined) return []; // a text block, or one this adapter does not use
    this.toolUses.delete(index);
    const { id, name, json, input } = toolUse;
    const parsed = json === '' && isPlainObject(input) ? input : parseArguments(json, name, id);
    this.calls++;
    return [{ type: 'tool_call', call: { id, name, input: parsed } }];
  }
}
