/**
 * J1: with `input.output`, each provider asks its API for JSON of that schema natively and sends no tools; each
 * body is type-checked against the official SDK's request type (`openai` 7.60.0, `@anthropic-ai/sdk` 1.17.0).
 */
import { z } from 'zod';
import type { ProviderInput } from '../../src/index.js';
import { ToolRegistry, runEventedToolLoop, scriptedProvider } from '../../src/index.js';
import { anthropicRequest } from '../../src/providers/anthropic.js';
import { openAIChatRequest } from '../../src/providers/openai.js';
import { openAIResponsesRequest } from '../../src/providers/openai-responses.js';
import { outputSettings } from '../../src/loop/output-spec.js';
import { answerTurn, collectSync } from '../support/events.js';
import { addSpec, forecastSpec, history, weatherSpec } from './conversation';
import { type TypedBody, typedBodyErrors as typeErrors } from './sdk-types';

const output = outputSettings({ schema: z.object({ city: z.string(), days: z.array(z.number().int()).optional() }), name: 'forecast' }, 'spec').request;
// what prepareTurn might hand a provider: output and tools both; the provider still sends no tools
const input: ProviderInput = { messages: history, tools: [weatherSpec, addSpec, forecastSpec], output };
const plain: ProviderInput = { messages: history, tools: [weatherSpec] };

const chat = openAIChatRequest({ model: 'gpt-4.1-mini', toolChoice: 'required', temperature: 0 }, input) as Record<string, unknown>;
const responses = openAIResponsesRequest({ model: 'gpt-5-mini', toolChoice: 'auto', include: ['reasoning.encrypted_content'] }, input) as Record<string, unknown>;
const anthropic = anthropicRequest('claude-sonnet-4-5', 1024, 'Be brief.', input, { toolChoice: 'required', thinking: 2000 }) as Record<string, unknown>;

describe('J1 providers answer in a schema natively', () => {
  it('J1: Chat Completions: response_format json_schema { name, schema, strict: false }, no tools, no tool_choice', () => {
    expect(chat.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'forecast', schema: output.schema, strict: false } });
    expect(['tools' in chat, 'tool_choice' in chat]).toEqual([false, false]);
    expect('response_format' in (openAIChatRequest({ model: 'm' }, plain) as object)).toBe(false);
  });

  it('J1: Responses: text.format json_schema { name, schema, strict: false }, no tools, no tool_choice', () => {
    expect(responses.text).toEqual({ format: { type: 'json_schema', name: 'forecast', schema: output.schema, strict: false } });
    expect(['tools' in responses, 'tool_choice' in responses]).toEqual([false, false]);
    expect('text' in (openAIResponsesRequest({ model: 'm' }, plain) as object)).toBe(false);
  });

  it('J1: Anthropic: the native output_config.format json_schema (in the SDK 1.17 MessageCreateParams), no tools, no tool_choice', () => {
    expect(anthropic.output_config).toEqual({ format: { type: 'json_schema', schema: output.schema } });
    expect(['tools' in anthropic, 'tool_choice' in anthropic]).toEqual([false, false]);
    expect('output_config' in (anthropicRequest('m', 10, undefined, plain) as object)).toBe(false);
  });

  it('J1: the scripted provider records input.output in .inputs, and the loop asks it in the answer turn only', () => {
    const provider = scriptedProvider([answerTurn('no JSON'), answerTurn('{"city":"Oslo"}')]);
    collectSync(runEventedToolLoop({ provider, registry: new ToolRegistry(), messages: [{ role: 'user', content: 'Oslo?' }], output: { schema: z.object({ city: z.string() }), name: 'forecast' } }));
    expect(provider.inputs.map((i) => i.output?.name)).toEqual([undefined, 'forecast']);
    expect(provider.inputs[1]!.output).toEqual({ name: 'forecast', schema: expect.objectContaining({ type: 'object', required: ['city'] }) });
    expect(provider.inputs[1]!.tools).toEqual([]);
  });

  it('J1: every body with output type-checks against its SDK’s request type; a body the SDK refuses does not', () => {
    const bodies: TypedBody[] = [
      { type: 'ChatCompletionCreateParamsStreaming', from: 'openai/resources/chat/completions', body: chat },
      { type: 'ResponseCreateParamsStreaming', from: 'openai/resources/responses/responses', body: responses },
      { type: 'MessageCreateParamsStreaming', from: '@anthropic-ai/sdk/resources/messages', body: anthropic },
      // refused, or the check checks nothing: a name where the Messages API takes none, a format the Chat API does not know
      { type: 'MessageCreateParamsStreaming', from: '@anthropic-ai/sdk/resources/messages', body: { ...anthropic, output_config: { format: { type: 'json_schema', name: 'forecast', schema: {} } } } },
      { type: 'ChatCompletionCreateParamsStreaming', from: 'openai/resources/chat/completions', body: { ...chat, response_format: { type: 'json_schema', schema: {} } } },
    ];
    const errors = typeErrors(bodies);
    expect(errors.slice(0, 3)).toEqual([[], [], []]);
    expect(errors[3]!.join('\n')).toMatch(/name/);
    expect(errors[4]!.join('\n')).toMatch(/json_schema|schema/);
  }, 60_000);
});
