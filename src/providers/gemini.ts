import type { AssistantMessage, Attachment, Provider, ProviderInput, ToolResultMessage } from '../types.js';
import { inlineData } from '../util/attachments.js';
import { isPlainObject, shown } from '../util/values.js';
import { inputSchema } from './json.js';
import { HttpProviderOptions, ToolChoice, httpSettings, streamRequest } from './http/transport.js';
import { GeminiPart, GeminiTranslator } from './gemini-translator.js';
import { type ProviderIdentity, named } from './named-provider.js';

/** Options of {@link geminiProvider}. `baseURL` includes the version: default the Developer API's `…/v1beta`. */
export interface GeminiProviderOptions extends HttpProviderOptions {
  /**
   * P10: a thinking budget in tokens, sent as `generationConfig.thinkingConfig: { thinkingBudget, includeThoughts:
   * true }` (so that the thoughts stream as `reasoning_delta`): an integer >= 0 (0 turns thinking off where the
   * model allows it); `-1` lets the model decide.
   */
  thinking?: number;
  /**
   * P17, Vertex AI only: ask for a call's arguments as they are written (`toolConfig.functionCallingConfig.
   * streamFunctionCallArguments`); they come as `tool_call_delta`s before the call's `tool_call`.
   */
  streamFunctionCallArguments?: boolean;
}

/** P17: the Gemini Developer API; Vertex AI is a `baseURL` ending in `…/v1beta1/projects/P/locations/L/publishers/google`. */
export const GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com/v1beta';

const WHO = 'geminiProvider';

/**
 * A {@link Provider} for Gemini's streaming API (P17), on the Gemini Developer API or Vertex AI. Each
 * subscription POSTs one request to `${baseURL}/models/${model}:streamGenerateContent?alt=sse` (plus retries:
 * P4) and streams the reply as events; unsubscribing aborts it. `apiKey` defaults to `GEMINI_API_KEY` and is
 * sent as `x-goog-api-key` (for Vertex, give `apiKey: ''` and `headers: { authorization: 'Bearer …' }`). A
 * `functionCall` part is whole in its chunk: its `tool_call` goes out at once, so its tool starts while the
 * model streams on (R3). Every thought signature travels in `message_end.reasoning` (the model turn's parts as
 * they came, P10) and goes back on its part in the next request, as the API requires. `maxTokens` is sent as
 * `maxOutputTokens`, `stop` as `stopSequences`, `toolChoice` as `functionCallingConfig` (`'required'`: `ANY`).
 *
 * ```ts
 * const provider = geminiProvider({ model: 'gemini-2.5-flash', thinking: 1024 });
 * const vertex = geminiProvider({
 *   model: 'gemini-2.5-flash', apiKey: '', headers: { authorization: `Bearer ${token}` },
 *   baseURL: 'https://aiplatform.googleapis.com/v1beta1/projects/my-project/locations/global/publishers/google',
 * });
 * runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'What time is it?' }] }).subscribe(console.log);
 * ```
 */
export function geminiProvider(options: GeminiProviderOptions): Provider & ProviderIdentity<'gcp.gemini' | 'gcp.vertex_ai'> {
  const settings = httpSettings(options, WHO, GEMINI_BASE_URL, 'GEMINI_API_KEY');
  const { thinking, streamFunctionCallArguments } = options;
  if (thinking !== undefined && !(Number.isInteger(thinking) && thinking >= -1)) {
    throw new RangeError(`${WHO}: thinking must be an integer >= 0, or -1 for the model's own choice (got ${shown(thinking)})`);
  }
  if (streamFunctionCallArguments !== undefined && typeof streamFunctionCallArguments !== 'boolean') {
    throw new TypeError(`${WHO}: streamFunctionCallArguments must be a boolean (got ${shown(streamFunctionCallArguments)})`);
  }
  const { model, system, temperature, maxTokens, toolChoice, stop, apiKey } = settings;
  const request: GeminiRequestOptions = { system, temperature, maxTokens, toolChoice, stop, thinking, streamFunctionCallArguments };
  const auth: Record<string, string> = apiKey === '' ? {} : { 'x-goog-api-key': apiKey };
  const path = `/models/${encodeURIComponent(model.replace(/^models\//, ''))}:streamGenerateContent?alt=sse`;
  const provider = (input: ProviderInput) =>
    streamRequest(
      () => settings.request(path, auth, geminiRequest(request, input)),
      () => new GeminiTranslator(),
    );
  // what a trace reads of it (O2): the GenAI conventions name the two APIs apart
  return named(provider, /\/projects\/[^/]+\/locations\//.test(settings.baseURL) ? 'gcp.vertex_ai' : 'gcp.gemini', model);
}

/** What {@link geminiRequest} puts into a request besides the conversation: the provider's checked options. */
export interface GeminiRequestOptions {
  system?: string | undefined;
  temperature?: number | undefined;
  maxTokens?: number | undefined;
  toolChoice?: ToolChoice | undefined;
  stop?: readonly string[] | undefined;
  thinking?: number | undefined;
  streamFunctionCallArguments?: boolean | undefined;
}

interface Content {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

/**
 * The REST body of one call (P17): the `system` option and the history's system messages, joined by a blank
 * line, as `systemInstruction`; user turns (text, then attachments as `inlineData` / `fileData`, F2); model
 * turns as the parts they came with (P10: their thought signatures on them), else text and `functionCall`s;
 * each turn's results as one user turn of `functionResponse` parts (`{ output }`, `{ error }` for `isError`;
 * the call's `id` echoed where the API gave one) and their attachments; tools as `functionDeclarations` with
 * `parametersJsonSchema`; P11's options in `generationConfig` and `toolConfig`. With `output` (J1):
 * `responseMimeType: 'application/json'` and `responseJsonSchema`, and no tools. The provider merges
 * `extraBody` into it last.
 *
 * ```ts
 * geminiRequest({ system: 'Be brief.' }, { messages: [{ role: 'user', content: 'hi' }], tools: [] });
 * // { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], systemInstruction: { parts: [{ text: 'Be brief.' }] } }
 * ```
 */
export function geminiRequest(options: GeminiRequestOptions, { messages, tools, output }: ProviderInput): object {
  const { temperature, maxTokens, toolChoice, stop, thinking, streamFunctionCallArguments } = options;
  const system: string[] = options.system ? [options.system] : [];
  const contents: Content[] = [];
  /** Whether the API gave the id of each call of the history: only those are echoed. */
  const apiIds = new Set<string>();
  let results: Content | undefined;
  let resultAttachments: GeminiPart[] = [];
  const closeResults = () => {
    if (results !== undefined) results.parts.push(...resultAttachments);
    results = undefined;
    resultAttachments = [];
  };
  for (const message of messages) {
    if (message.role === 'toolResult') {
      if (results === undefined) contents.push((results = { role: 'user', parts: [] }));
      results.parts.push(functionResponse(message, apiIds));
      for (const attachment of message.attachments ?? []) resultAttachments.push(attachmentPart(attachment));
      continue;
    }
    closeResults();
    if (message.role === 'system') system.push(message.content);
    else if (message.role === 'user') contents.push({ role: 'user', parts: userParts(message.content, message.attachments) });
    else {
      const parts = modelParts(message, apiIds);
      if (parts.length > 0) contents.push({ role: 'model', parts }); // the API refuses a turn without parts
    }
  }
  closeResults();
  const body: Record<string, unknown> = { contents };
  if (system.length > 0) body.systemInstruction = { parts: [{ text: system.join('\n\n') }] };
  if (tools.length > 0 && output === undefined) {
    body.tools = [{ functionDeclarations: tools.map((tool) => ({ name: tool.name, description: tool.description, parametersJsonSchema: inputSchema(tool) })) }];
    const calling: Record<string, unknown> = toolChoice === undefined ? {} : functionCallingConfig(toolChoice);
    if (streamFunctionCallArguments === true) calling.streamFunctionCallArguments = true;
    if (Object.keys(calling).length > 0) body.toolConfig = { functionCallingConfig: calling };
  }
  const generation: Record<string, unknown> = {};
  if (temperature !== undefined) generation.temperature = temperature;
  if (maxTokens !== undefined) generation.maxOutputTokens = maxTokens;
  if (stop !== undefined && stop.length > 0) generation.stopSequences = [...stop];
  if (thinking !== undefined) generation.thinkingConfig = { thinkingBudget: thinking, includeThoughts: thinking !== 0 };
  if (output !== undefined) {
    generation.responseMimeType = 'application/json'; // J1
    generation.responseJsonSchema = output.schema;
  }
  if (Object.keys(generation).length > 0) body.generationConfig = generation;
  return body;
}

/** P11: `'auto'` `AUTO`, `'none'` `NONE`, `'required'` `ANY`, a tool's name `ANY` of that one. */
function functionCallingConfig(choice: ToolChoice): Record<string, unknown> {
  if (choice === 'auto') return { mode: 'AUTO' };
  if (choice === 'none') return { mode: 'NONE' };
  if (choice === 'required') return { mode: 'ANY' };
  return { mode: 'ANY', allowedFunctionNames: [choice] };
}

function userParts(content: string, attachments: readonly Attachment[] | undefined): GeminiPart[] {
  const parts: GeminiPart[] = content !== '' || attachments === undefined || attachments.length === 0 ? [{ text: content }] : [];
  for (const attachment of attachments ?? []) parts.push(attachmentPart(attachment));
  return parts;
}

/**
 * P10, P17: the model turn as it came — its parts, each thought signature on its part — when the message
 * carries them and they hold its calls; else its text and its calls (a history from another provider, or
 * edited). Either way, each call whose id the API gave goes into `apiIds`.
 */
function modelParts(message: AssistantMessage, apiIds: Set<string>): GeminiPart[] {
  const calls = message.toolCalls ?? [];
  const kept = (message.reasoning ?? []).filter(isGeminiPart);
  const keptCalls = kept.filter((part) => part.functionCall !== undefined);
  if (kept.length > 0 && keptCalls.length === calls.length && keptCalls.every((part, n) => part.functionCall?.name === calls[n]!.name)) {
    keptCalls.forEach((part, n) => {
      if (typeof part.functionCall?.id === 'string' && part.functionCall.id === calls[n]!.id) apiIds.add(part.functionCall.id);
    });
    return kept;
  }
  const parts: GeminiPart[] = message.content !== '' ? [{ text: message.content }] : [];
  for (const call of calls) {
    apiIds.add(call.id);
    parts.push({ functionCall: { id: call.id, name: call.name, args: call.input } });
  }
  return parts;
}

/** A part of a Gemini model turn (P10's opaque reasoning); another API's blocks all have a `type`. */
function isGeminiPart(value: unknown): value is GeminiPart {
  return isPlainObject(value) && !('type' in value);
}

function functionResponse(message: ToolResultMessage, apiIds: ReadonlySet<string>): GeminiPart {
  const response = message.isError ? { error: message.content } : { output: message.content };
  const id = apiIds.has(message.toolCallId) ? { id: message.toolCallId } : {};
  return { functionResponse: { ...id, name: message.toolName, response } };
}

/** F2: base64 data (or a `data:` URL) as `inlineData`, an `http(s)` URL as `fileData`. */
function attachmentPart(attachment: Attachment): GeminiPart {
  const { mimeType, url } = attachment;
  const inline = inlineData(attachment);
  return inline !== undefined ? { inlineData: { mimeType, data: inline } } : { fileData: { mimeType, fileUri: url } };
}
