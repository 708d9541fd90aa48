import { Observable } from 'rxjs';
import type { Provider, ProviderEvent, ProviderInput } from '../types.js';
import { inputSchema } from '../providers/json.js';
import { drain } from '../providers/http/drain.js';
import { type ProviderIdentity, named } from '../providers/named-provider.js';
import { type RequestOptions, type ToolChoice, checkedRequestOptions } from '../providers/http/settings.js';
import { isPlainObject, shown } from '../util/values.js';
import { type AnyCallOptions, type AnyLanguageModel, type AnyStreamPart, streamOf } from './language-model.js';
import { aiSdkPrompt, jsonSchema7 } from './prompt.js';
import { StreamTranslator } from './stream-translator.js';

/** Options of {@link languageModelProvider}: P11's request options, in the AI SDK's names when sent. */
export interface LanguageModelProviderOptions extends RequestOptions {
  /** Request headers, added to the model's own. */
  headers?: Record<string, string>;
  /** The AI SDK's `providerOptions`, by provider name (`{ openai: { store: false } }`), passed as they are. */
  providerOptions?: Record<string, Record<string, unknown>>;
}

/**
 * P18: any AI SDK language model (`@ai-sdk/provider`'s `LanguageModelV3` or `LanguageModelV4`: `@ai-sdk/openai`,
 * `@ai-sdk/google`, `@ai-sdk/anthropic`, a gateway, a mock) as a {@link Provider}. Each subscription calls
 * `model.doStream` once (the AI SDK's retries are `streamText`'s, not the model's: none here) with the history
 * as its prompt, the tools as function tools and `input.output` as `responseFormat: { type: 'json' }` without
 * tools (J1); unsubscribing aborts its `abortSignal`. The stream's parts become provider events (see
 * `StreamTranslator`); a rejected `doStream`, an `error` part or a broken stream end the call with `message_end`
 * `error` and its `failure`, never an Observable error. The provider names itself after the model
 * (`providerName` the AI SDK provider's first word, `openai` for `openai.chat`; `model` its `modelId`) for traces.
 *
 * ```text
 * doStream:  --(p)--t--t--c--f|     p: stream opened, t: text-delta, c: tool-call, f: finish
 * provider:  --s----T--T--C--(e|)   s: message_start, T: text_delta, C: tool_call, e: message_end
 * ```
 *
 * ```ts
 * import { createOpenAI } from '@ai-sdk/openai';
 * import { languageModelProvider } from 'rx-tool-loop/ai-sdk';
 *
 * const provider = languageModelProvider(createOpenAI({ apiKey: process.env.OPENAI_API_KEY })('gpt-5-mini'), { maxTokens: 2048 });
 * runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'What time is it?' }] }).subscribe(console.log);
 * ```
 */
export function languageModelProvider(model: AnyLanguageModel, options: LanguageModelProviderOptions = {}): Provider & ProviderIdentity {
  const version = checkModel(model);
  const settings = checkModelOptions(options);
  const doStream = streamOf(model);
  const provider = (input: ProviderInput) =>
    new Observable<ProviderEvent>((subscriber) => {
      const controller = new AbortController();
      const translator = new StreamTranslator();
      let reader: ReadableStreamDefaultReader<AnyStreamPart> | undefined;
      let started = false;
      const emit = (events: ProviderEvent[]) => {
        for (const event of events) subscriber.next(event);
        if (translator.ended) subscriber.complete();
      };
      const start = () => {
        started = true;
        subscriber.next({ type: 'message_start' });
      };
      const read = async () => {
        const { stream } = await doStream(callOptions(input, settings, version, controller.signal));
        if (subscriber.closed) return void stream.cancel().catch(ignore);
        reader = stream.getReader();
        start();
        while (!translator.ended) {
          const { done, value } = await reader.read();
          if (subscriber.closed) return;
          emit(done ? translator.end() : translator.next(value));
        }
      };
      read().catch((error: unknown) => {
        if (subscriber.closed) return;
        if (!started) start();
        emit(translator.fail(error));
      });
      return () => {
        // after the reply, what follows it is read (a server's closing `[DONE]`) so the connection can serve again
        if (translator.ended && reader !== undefined) {
          const parts = reader;
          void drain(() => parts.read(), controller);
        } else {
          controller.abort();
          reader?.cancel().catch(ignore);
        }
      };
    });
  return named(provider, providerNameOf(model.provider), model.modelId);
}

interface Settings extends Omit<LanguageModelProviderOptions, 'stop'> {
  stop?: string[];
}

function callOptions(input: ProviderInput, settings: Settings, version: AnyLanguageModel['specificationVersion'], abortSignal: AbortSignal): AnyCallOptions {
  const { system, maxTokens, temperature, toolChoice, stop, headers, providerOptions } = settings;
  const tools = input.output === undefined ? input.tools : []; // J1: structured output is asked without tools
  const options = {
    prompt: aiSdkPrompt(input.messages, system, version),
    abortSignal,
    ...(tools.length > 0 && {
      tools: tools.map((tool) => ({ type: 'function' as const, name: tool.name, description: tool.description, inputSchema: jsonSchema7(inputSchema(tool)) })),
    }),
    ...(toolChoice !== undefined && tools.length > 0 && { toolChoice: aiSdkToolChoice(toolChoice) }),
    ...(input.output !== undefined && {
      responseFormat: { type: 'json' as const, schema: jsonSchema7(input.output.schema), name: input.output.name },
    }),
    ...(maxTokens !== undefined && { maxOutputTokens: maxTokens }),
    ...(temperature !== undefined && { temperature }),
    ...(stop !== undefined && stop.length > 0 && { stopSequences: [...stop] }),
    ...(headers !== undefined && { headers: { ...headers } }),
    ...(providerOptions !== undefined && { providerOptions: structuredClone(providerOptions) }),
  };
  return options as AnyCallOptions;
}

/** P11's `toolChoice` in the AI SDK's shape. */
function aiSdkToolChoice(choice: ToolChoice): NonNullable<AnyCallOptions['toolChoice']> {
  if (choice === 'auto' || choice === 'none' || choice === 'required') return { type: choice as 'auto' | 'none' | 'required' };
  return { type: 'tool', toolName: choice };
}

/** `openai` of `openai.chat`, `google` of `google.generative-ai`: the name the GenAI conventions use (O2). */
function providerNameOf(provider: string): string {
  return provider.split('.')[0] || provider;
}

function ignore(): void {}

const WHO = 'languageModelProvider';

function checkModel(model: unknown): AnyLanguageModel['specificationVersion'] {
  const { specificationVersion, doStream, provider, modelId } = (typeof model === 'object' && model !== null ? model : {}) as Record<string, unknown>;
  if ((specificationVersion !== 'v3' && specificationVersion !== 'v4') || typeof doStream !== 'function') {
    const version = typeof specificationVersion === 'string' ? ` (its specificationVersion is ${JSON.stringify(specificationVersion)})` : '';
    throw new TypeError(`${WHO}: model must be an AI SDK LanguageModelV3 or LanguageModelV4${version} (got ${shown(model)})`);
  }
  if (typeof provider !== 'string' || typeof modelId !== 'string') {
    throw new TypeError(`${WHO}: model must name its provider and modelId as strings (got ${shown(provider)}, ${shown(modelId)})`);
  }
  return specificationVersion;
}

/** R20: the options checked and copied when the provider is made; a wrong one named, with its value. */
function checkModelOptions(options: unknown): Settings {
  if (!isPlainObject(options)) throw new TypeError(`${WHO}: options must be an object (got ${shown(options)})`);
  const { toolChoice, headers, providerOptions } = options as LanguageModelProviderOptions;
  // P11's options, checked as the HTTP providers check them; an absent one stays absent in the call options
  const { system, maxTokens, temperature, stop } = checkedRequestOptions(options as LanguageModelProviderOptions, WHO);
  const settings: Settings = {};
  if (system !== undefined) settings.system = system;
  if (maxTokens !== undefined) settings.maxTokens = maxTokens;
  if (temperature !== undefined) settings.temperature = temperature;
  if (stop !== undefined) settings.stop = stop;
  if (toolChoice !== undefined) {
    if (typeof toolChoice !== 'string' || toolChoice === '') throw new TypeError(`${WHO}: toolChoice must be a non-empty string (got ${shown(toolChoice)})`);
    settings.toolChoice = toolChoice;
  }
  if (headers !== undefined) {
    if (!isPlainObject(headers) || !Object.values(headers).every((value) => typeof value === 'string')) {
      throw new TypeError(`${WHO}: headers must be a record of strings (got ${shown(headers)})`);
    }
    settings.headers = { ...headers };
  }
  if (providerOptions !== undefined) {
    if (!isPlainObject(providerOptions) || !Object.values(providerOptions).every(isPlainObject)) {
      throw new TypeError(`${WHO}: providerOptions must be a record of objects, by provider name (got ${shown(providerOptions)})`);
    }
    settings.providerOptions = structuredClone(providerOptions);
  }
  return settings;
}
