import type { AgentMessage, Provider, ProviderEvent, ProviderInput, ToolCall } from '../types.js';
import { shown } from '../util/values.js';
import { inputSchema, parseArguments, parseEventData } from './json.js';
import type { SseEvent } from './http/sse.js';
import { HttpProviderOptions, ToolChoice, WireError, WireTranslator, httpSettings, messageOf, streamRequest } from './http/transport.js';

/** P10: how much a reasoning model thinks before it answers (OpenAI `reasoning_effort`). */
export type ReasoningEffort = 'low' | 'medium' | 'high';

/** Options of {@link openAIChatProvider}. `baseURL` includes the version: default `https://api.openai.com/v1`. */
export interface OpenAIChatProviderOptions extends HttpProviderOptions {
  /** P10: sent as `reasoning_effort`; other values a server knows (`minimal`, …) go through `extraBody`. */
  reasoningEffort?: ReasoningEffort;
}

const EFFORTS: ReadonlySet<unknown> = new Set<ReasoningEffort>(['low', 'medium', 'high']);

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
export function openAIChatProvider(options: OpenAIChatProviderOptions): Provider {
  const settings = httpSettings(options, 'openAIChatProvider', 'https://api.openai.com/v1', 'OPENAI_API_KEY');
  const { reasoningEffort } = options;
  if (reasoningEffort !== undefined && !EFFORTS.has(reasoningEffort)) {
    throw new RangeError(`openAIChatProvider: reasoningEffort must be 'low', 'medium' or 'high' (got ${shown(reasoningEffort)})`);
  }
  const { model, system, temperature, maxTokens, toolChoice, stop, apiKey } = settings;
  const request: OpenAIChatRequestOptions = { model, system, temperature, maxTokens, toolChoice, stop, reasoningEffort };
  const auth: Record<string, string> = apiKey === '' ? {} : { authorization: `Bearer ${apiKey}` };
  return (input: ProviderInput) =>
    streamRequest(
      () => settings.request('/chat/completions', auth, openAIChatRequest(request, input)),
      () => new OpenAIChatTranslator(),
    );
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
 * `reasoning_effort`. The provider merges `extraBody` into it last.
 *
 * ```ts
 * openAIChatRequest({ model: 'gpt-4o-mini' }, { messages: [{ role: 'user', content: 'hi' }], tools: [] });
 * // { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } }
 * openAIChatRequest({ model: 'm', toolChoice: 'get_weather', maxTokens: 100 }, { messages, tools: [weatherSpec] });
 * // { …, tool_choice: { type: 'function', function: { name: 'get_weather' } }, max_completion_tokens: 100, … }
 * ```
 */
export function openAIChatRequest(options: OpenAIChatRequestOptions, { messages, tools }: ProviderInput): object {
  const { model, system, temperature, maxTokens, toolChoice, stop, reasoningEffort } = options;
  const wire: object[] = system ? [{ role: 'system', content: system }] : [];
  for (const message of messages) wire.push(openAIMessage(message));
  const body: Record<string, unknown> = { model, messages: wire };
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
      return { role: 'user', content: message.content };
    case 'toolResult':
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

/** A streamed call being put together: arguments come in pieces. */
interface PendingCall {
  index: number | undefined;
  id: string;
  name: string;
  arguments: string;
}

interface ToolCallDelta {
  index?: unknown;
  id?: unknown;
  function?: { name?: unknown; arguments?: unknown };
}

interface ChatChunk {
  error?: unknown;
  choices?: { index?: number; delta?: { content?: unknown; tool_calls?: ToolCallDelta[] }; finish_reason?: unknown }[];
}

/**
 * Chat Completions chunks → provider events: `delta.content` is a `text_delta` at once; tool calls
 * are gathered by `index` (by `id`, or onto the last call, where a server sends no index) and emitted,
 * parsed, when `finish_reason` arrives; `message_end` follows at `[DONE]` or at the end of a stream
 * that brought a `finish_reason`. Usage-only chunks (`choices: []`) are skipped.
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
  private finishReason: string | undefined;
  private callsSent = false;

  next({ event, data }: SseEvent): ProviderEvent[] {
    if (data.trim() === '[DONE]') return this.end();
    const chunk = parseEventData(data) as ChatChunk | null;
    if (typeof chunk !== 'object' || chunk === null) throw new WireError(`unexpected data in the stream: ${data.slice(0, 200)}`);
    if (chunk.error !== undefined || event === 'error') {
      throw new WireError(`error in the stream: ${messageOf(data) ?? data.slice(0, 500)}`);
    }
    const choice = Array.isArray(chunk.choices) ? chunk.choices.find((c) => (c?.index ?? 0) === 0) : undefined;
    if (choice === undefined) return []; // the usage-only last chunk, or a server's keep-alive
    const events: ProviderEvent[] = [];
    const content = choice.delta?.content;
    if (typeof content === 'string' && content !== '') events.push({ type: 'text_delta', text: content });
    for (const delta of choice.delta?.tool_calls ?? []) this.gather(delta);
    if (typeof choice.finish_reason === 'string' && this.finishReason === undefined) {
      this.finishReason = choice.finish_reason;
      events.push(...this.toolCalls());
    }
    return events;
  }

  end(): ProviderEvent[] {
    if (this.finishReason === undefined) throw new WireError('the stream ended before the reply was complete (no finish_reason)');
    const events = this.toolCalls();
    if (this.calls.length > 0) events.push({ type: 'message_end', stopReason: 'toolUse' });
    else events.push(finish(this.finishReason));
    return events;
  }

  private gather(delta: ToolCallDelta): void {
    const index = typeof delta.index === 'number' ? delta.index : undefined;
    const id = typeof delta.id === 'string' && delta.id !== '' ? delta.id : undefined;
    const name = delta.function?.name;
    const args = delta.function?.arguments;
    let call =
      index !== undefined
        ? this.calls.find((c) => c.index === index)
        : id !== undefined
          ? this.calls.find((c) => c.id === id)
          : this.calls[this.calls.length - 1];
    // some servers number every call 0: a new id at a known index is a new call
    if (call !== undefined && id !== undefined && call.id !== '' && call.id !== id) call = undefined;
    if (call === undefined) {
      call = { index, id: id ?? '', name: '', arguments: '' };
      this.calls.push(call);
    }
    if (call.id === '' && id !== undefined) call.id = id;
    if (call.name === '' && typeof name === 'string') call.name = name;
    if (typeof args === 'string') call.arguments += args;
    // a server that sends the arguments as an object, not as JSON text
    else if (typeof args === 'object' && args !== null) call.arguments += JSON.stringify(args);
  }

  /** The gathered calls, parsed: once, when the reply finished. */
  private toolCalls(): ProviderEvent[] {
    if (this.callsSent) return [];
    this.callsSent = true;
    const calls: ToolCall[] = this.calls.map((pending, n) => {
      const id = pending.id !== '' ? pending.id : `call_${Date.now().toString(36)}_${n}`;
      if (pending.name === '') throw new WireError(`tool call ${id} has no function name`);
      return { id, name: pending.name, input: parseArguments(pending.arguments, pending.name, id) };
    });
    return calls.map((call) => ({ type: 'tool_call', call }));
  }
}

/** `finish_reason` → `message_end`, for a reply without tool calls. */
function finish(reason: string): ProviderEvent {
  switch (reason) {
    case 'length':
      return { type: 'message_end', stopReason: 'length' };
    case 'tool_calls':
    case 'function_call':
      return { type: 'message_end', stopReason: 'toolUse' };
    case 'content_filter':
      return { type: 'message_end', stopReason: 'error', errorMessage: 'finish_reason content_filter: the content filter cut the reply' };
    default: // 'stop', and what servers add ('eos', 'end_turn', …)
      return { type: 'message_end', stopReason: 'stop' };
  }
}
