import type { AgentMessage, Attachment, Provider, ProviderInput } from '../types.js';
import { IMAGE_TYPES_ONLY, WEB_IMAGE_TYPES, attachmentLine, attachmentUrl, inlineData } from '../util/attachments.js';
import { isPlainObject, shown } from '../util/values.js';
import { inputSchema } from './json.js';
import { ToolChoice, httpSettings, streamRequest } from './http/transport.js';
import { EFFORTS, OpenAIChatProviderOptions, ReasoningEffort } from './openai.js';
import { OpenAIResponsesTranslator } from './openai-responses-translator.js';
import { type ProviderIdentity, named } from './named-provider.js';

/** The settings every OpenAI provider takes (the Chat Completions provider's options). */
export type OpenAISettings = OpenAIChatProviderOptions;

/** Options of {@link openAIResponsesProvider}: those of the Chat Completions provider, and two of the Responses API's own. */
export interface OpenAIResponsesProviderOptions extends OpenAISettings {
  /** P13: the provider is stateless: `store: false` is sent with every request, and nothing else is accepted. */
  store?: false;
  /**
   * P14: the API's `include` (default `['reasoning.encrypted_content']`: a reasoning model's reasoning comes
   * back encrypted and is sent back with the next request, P10). Models without reasoning (gpt-4o, gpt-4.1)
   * refuse it: give them `include: []`, which sends none.
   */
  include?: string[];
}

/** P14: what a stateless request asks to be included by default: the reasoning items' encrypted content. */
export const DEFAULT_INCLUDE: readonly string[] = ['reasoning.encrypted_content'];

const WHO = 'openAIResponsesProvider';

/**
 * A {@link Provider} for the OpenAI Responses streaming API (OpenAI's current API, which some
 * OpenAI-compatible servers serve too). Each subscription POSTs one request to
 * `${baseURL}/responses` (plus retries: P4) and streams the reply as events; unsubscribing aborts it. The
 * requests are stateless (P13): `store: false`, and the whole history goes in `input` every time, never a
 * `previous_response_id`. Each function call is a `tool_call` as soon as its item is done, so its tool starts
 * at the call's last byte while the model streams on (P14). `apiKey` defaults to `OPENAI_API_KEY`, sent as
 * `Authorization: Bearer`; `maxTokens` is sent as `max_output_tokens`, `reasoningEffort` as
 * `reasoning: { effort }`. The API has no stop sequences: `stop` is refused.
 *
 * ```ts
 * const provider = openAIResponsesProvider({ model: 'gpt-5-mini', reasoningEffort: 'low' });
 * const plain = openAIResponsesProvider({ model: 'gpt-4.1-mini', include: [] }); // no reasoning: nothing to include
 * runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'What time is it?' }] }).subscribe(console.log);
 * ```
 */
export function openAIResponsesProvider(options: OpenAIResponsesProviderOptions): Provider & ProviderIdentity<'openai'> {
  const settings = httpSettings(options, WHO, 'https://api.openai.com/v1', 'OPENAI_API_KEY');
  const { reasoningEffort, store, include = DEFAULT_INCLUDE } = options;
  if (reasoningEffort !== undefined && !EFFORTS.has(reasoningEffort)) {
    throw new RangeError(`${WHO}: reasoningEffort must be 'low', 'medium' or 'high' (got ${shown(reasoningEffort)})`);
  }
  if (store !== undefined && store !== false) {
    throw new TypeError(`${WHO}: store must be false or left out: the provider sends the whole history every time (got ${shown(store)})`);
  }
  if (!(Array.isArray(include) && include.every((name) => typeof name === 'string'))) {
    throw new TypeError(`${WHO}: include must be an array of strings (got ${shown(include)})`);
  }
  if (options.stop !== undefined) {
    throw new TypeError(`${WHO}: stop is not an option of the Responses API, which has no stop sequences (got ${shown(options.stop)})`);
  }
  const { model, system, temperature, maxTokens, toolChoice, apiKey } = settings;
  const request: OpenAIResponsesRequestOptions = { model, system, temperature, maxTokens, toolChoice, reasoningEffort, include: [...include] };
  const auth: Record<string, string> = apiKey === '' ? {} : { authorization: `Bearer ${apiKey}` };
  const provider = (input: ProviderInput) =>
    streamRequest(
      () => settings.request('/responses', auth, openAIResponsesRequest(request, input)),
      () => new OpenAIResponsesTranslator(),
    );
  return named(provider, 'openai', model); // what a trace reads of it (O2)
}

/** What {@link openAIResponsesRequest} puts into a request besides the conversation: the provider's checked options. */
export interface OpenAIResponsesRequestOptions {
  model: string;
  system?: string | undefined;
  temperature?: number | undefined;
  maxTokens?: number | undefined;
  toolChoice?: ToolChoice | undefined;
  reasoningEffort?: ReasoningEffort | undefined;
  /** Sent when not empty; default: none (the provider passes {@link DEFAULT_INCLUDE}). */
  include?: readonly string[] | undefined;
}

/**
 * The request body for one call (P13): the `system` option as `instructions`; the history as `input` items —
 * a `SystemMessage` a `developer` message where it stands, user and assistant text messages, an assistant's
 * reasoning items (P10) as the API sent them, then its text, then each of its calls as a `function_call` item,
 * each result a `function_call_output` item; the tools as `function` tools (`strict: false`: the schemas are
 * sent as they are, R24); the options that are set in the API's names (P11): `tool_choice` (only with tools),
 * `temperature`, `max_output_tokens`, `reasoning: { effort }`, `include`; with `output` (J1), `text.format` of
 * that JSON Schema and no tools; and always `store: false` and `stream: true`. The provider merges `extraBody` into it last.
 *
 * ```ts
 * openAIResponsesRequest({ model: 'gpt-5-mini' }, { messages: [{ role: 'user', content: 'hi' }], tools: [] });
 * // { model: 'gpt-5-mini', input: [{ role: 'user', content: 'hi' }], store: false, stream: true }
 * openAIResponsesRequest({ model: 'm', toolChoice: 'get_weather', maxTokens: 100 }, { messages, tools: [weatherSpec] });
 * // { …, tool_choice: { type: 'function', name: 'get_weather' }, max_output_tokens: 100, … }
 * ```
 */
export function openAIResponsesRequest(options: OpenAIResponsesRequestOptions, { messages, tools: offered, output }: ProviderInput): object {
  const { model, system, temperature, maxTokens, toolChoice, reasoningEffort, include } = options;
  const body: Record<string, unknown> = { model };
  if (system) body.instructions = system;
  const input: object[] = [];
  for (const message of messages) pushItems(input, message);
  body.input = input;
  // J1: a typed answer as the text's format, with no tools (`strict: false`, as the tools': the schema as it is)
  const tools = output === undefined ? offered : [];
  if (output !== undefined) body.text = { format: { type: 'json_schema', name: output.name, schema: output.schema, strict: false } };
  if (tools.length > 0) {
    body.tools = tools.map((tool) => ({ type: 'function', name: tool.name, description: tool.description, parameters: inputSchema(tool), strict: false }));
    if (toolChoice !== undefined) body.tool_choice = responsesToolChoice(toolChoice);
  }
  if (temperature !== undefined) body.temperature = temperature;
  if (maxTokens !== undefined) body.max_output_tokens = maxTokens;
  if (reasoningEffort !== undefined) body.reasoning = { effort: reasoningEffort };
  if (include !== undefined && include.length > 0) body.include = [...include];
  body.store = false;
  body.stream = true;
  return body;
}

/** P11: `'auto'`, `'none'` and `'required'` as they are; a tool's name as the API's named function choice. */
function responsesToolChoice(choice: ToolChoice): string | object {
  return choice === 'auto' || choice === 'none' || choice === 'required' ? choice : { type: 'function', name: choice };
}

function pushItems(input: object[], message: AgentMessage): void {
  switch (message.role) {
    case 'system': // in place, as the API's developer message (R21)
      input.push({ role: 'developer', content: message.content });
      return;
    case 'user':
      if (message.attachments === undefined) input.push({ role: 'user', content: message.content });
      else input.push({ role: 'user', content: [...inputTextParts(message.content), ...message.attachments.map(responsesPart)] });
      return;
    case 'toolResult': // F2: with attachments, the output is an array of parts
      if (message.attachments === undefined) input.push({ type: 'function_call_output', call_id: message.toolCallId, output: message.content });
      else input.push({ type: 'function_call_output', call_id: message.toolCallId, output: [...inputTextParts(message.content), ...message.attachments.map(responsesPart)] });
      return;
    case 'assistant': {
      const calls = message.toolCalls ?? [];
      // P10: the reasoning items go back unchanged, before what they led to; the API refuses a reasoning item
      // that nothing follows (a reply cut while it reasoned), and another API's blocks are not its own
      if (message.content !== '' || calls.length > 0) {
        for (const item of message.reasoning ?? []) if (isReasoningItem(item)) input.push(item);
      }
      if (message.content !== '') input.push({ role: 'assistant', content: message.content });
      for (const call of calls) input.push({ type: 'function_call', call_id: call.id, name: call.name, arguments: JSON.stringify(call.input) });
      return;
    }
  }
}

/** A text as an `input_text` part; none for an empty text. */
function inputTextParts(text: string): object[] {
  return text === '' ? [] : [{ type: 'input_text', text }];
}

/**
 * F2: an attachment as a Responses content part, in a user message or a result's output: an image as `input_image`
 * (its URL, or its data — jpeg, png, gif, webp — as a `data:` URL), a file as `input_file` (`file_url`, or `file_data` as a `data:` URL);
 * audio, which the API takes in neither, as an `input_text` line that says so.
 */
function responsesPart(attachment: Attachment): object {
  const data = inlineData(attachment);
  if (attachment.type === 'image') {
    if (data !== undefined && !WEB_IMAGE_TYPES.has(attachment.mimeType.toLowerCase())) return { type: 'input_text', text: attachmentLine(attachment, IMAGE_TYPES_ONLY) };
    return { type: 'input_image', image_url: attachmentUrl(attachment), detail: 'auto' };
  }
  if (attachment.type === 'audio') return { type: 'input_text', text: attachmentLine(attachment, 'not sent, API takes no audio') };
  const name = attachment.name ?? 'file';
  if (data === undefined) return { type: 'input_file', file_url: attachment.url, filename: name };
  return { type: 'input_file', file_data: `data:${attachment.mimeType};base64,${data}`, filename: name };
}

/** A Responses API reasoning item, as `message_end.reasoning` carries it (P10). */
function isReasoningItem(item: unknown): item is object {
  return isPlainObject(item) && item.type === 'reasoning';
}
