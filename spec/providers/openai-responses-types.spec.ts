/**
 * P13: the request bodies the provider really sends, type-checked against the official `openai` package's
 * `ResponseCreateParamsStreaming` (a pinned devDependency), by the compiler (`sdk-types.ts`).
 */
import type { AgentMessage, ProviderInput } from '../../src/index.js';
import { openAIResponsesRequest } from '../../src/providers/openai-responses.js';
import type { OpenAIResponsesRequestOptions } from '../../src/providers/openai-responses.js';
import { addSpec, forecastSpec, history, timeSpec, weatherSpec } from './conversation';
import { typeErrors as sdkTypeErrors } from './sdk-types';

/** The compiler's complaints about each of `bodies`, each typed as ResponseCreateParamsStreaming: `[]` for one that type-checks. */
function typeErrors(bodies: readonly object[]): string[][] {
  return sdkTypeErrors('openai/resources/responses/responses', 'ResponseCreateParamsStreaming', bodies);
}

/** A reasoning item as the API sends it with include: ['reasoning.encrypted_content'] (P10). */
const reasoningItem = {
  id: 'rs_0b1c2d3e4f5a6b7c80000001',
  type: 'reasoning',
  encrypted_content: 'gAAAAABpRXRvb2xMb29wUmVhc29uaW5nT25lX2VuY3J5cHRlZF9jb250ZW50X2Zvcl90aGVfdGVzdHNfMDAwMQ==',
  summary: [{ type: 'summary_text', text: '**Checking the weather**\n\nThe user wants Paris; call get_weather.' }],
};

/** System prompts (the option and two in the history), several calls, an error result, reasoning, every tool kind. */
const withReasoning: AgentMessage[] = [
  { role: 'system', content: 'Answer in French.' },
  ...history,
  { role: 'system', content: 'Now in German.' },
  { role: 'user', content: 'Und in Paris?' },
  {
    role: 'assistant',
    content: 'Ich sehe nach.',
    stopReason: 'toolUse',
    reasoning: [reasoningItem],
    toolCalls: [
      { id: 'call_4', name: 'get_weather', input: { city: 'Paris', unit: 'celsius' } },
      { id: 'call_5', name: 'forecast', input: { city: 'Paris', days: 3 } },
    ],
  },
  { role: 'toolResult', toolCallId: 'call_4', toolName: 'get_weather', content: '18°C', isError: false },
  { role: 'toolResult', toolCallId: 'call_5', toolName: 'forecast', content: 'error: invalid input: days: Too big', isError: true },
  { role: 'assistant', content: '', stopReason: 'toolUse', reasoning: [{ ...reasoningItem, id: 'rs_2' }], toolCalls: [{ id: 'call_6', name: 'add', input: { a: 1, b: 2 } }] },
  { role: 'toolResult', toolCallId: 'call_6', toolName: 'add', content: '3', isError: false },
];

const bodies: [string, OpenAIResponsesRequestOptions, ProviderInput][] = [
  ['a first question, no tools', { model: 'gpt-5-mini', include: ['reasoning.encrypted_content'] }, { messages: [{ role: 'user', content: 'hi' }], tools: [] }],
  [
    'the system option, several calls and an error result, every option',
    { model: 'gpt-5-mini', system: 'You are terse.', temperature: 0.2, maxTokens: 300, toolChoice: 'required', reasoningEffort: 'low', include: ['reasoning.encrypted_content'] },
    { messages: history, tools: [weatherSpec, timeSpec] },
  ],
  [
    'system messages in the history, reasoning items sent back, a named tool choice, a JSON Schema and a zod tool',
    { model: 'o4-mini', system: 'Be brief.', toolChoice: 'get_weather', reasoningEffort: 'high', include: ['reasoning.encrypted_content'] },
    { messages: withReasoning, tools: [weatherSpec, addSpec, forecastSpec] },
  ],
  ["toolChoice 'none' and 'auto'", { model: 'gpt-4.1-mini', toolChoice: 'none' }, { messages: withReasoning, tools: [timeSpec] }],
];

/** Bodies the API would refuse: the check must fail for each, or it checks nothing. */
const refused: [string, object, RegExp][] = [
  ['arguments as an object, not JSON text', { model: 'm', input: [{ type: 'function_call', call_id: 'c', name: 'f', arguments: {} }], store: false, stream: true }, /not assignable to type 'string'/],
  ['a field the API does not know', { model: 'm', input: 'hi', store: false, stream: true, previous_response: 'resp_1' }, /previous_response/],
  ['a streaming request without stream: true', { model: 'm', input: 'hi', store: false }, /stream/],
];

describe('P13: the request bodies type-check against the openai package', () => {
  it('P13: every body the provider builds is a ResponseCreateParamsStreaming (system prompts, several calls, error results, reasoning); bodies the API refuses are not', () => {
    const built = bodies.map(([, options, input]) => openAIResponsesRequest(options, input));
    // what the bodies hold, so that a check of less would show here
    const items = built.flatMap((body) => (body as { input: { type?: string; role?: string }[] }).input.map((item) => item.type ?? item.role));
    expect(new Set(items)).toEqual(new Set(['user', 'assistant', 'developer', 'function_call', 'function_call_output', 'reasoning']));
    // one program for all: the compiler loads the openai package once
    const errors = typeErrors([...built, ...refused.map(([, body]) => body)]);
    expect(Object.fromEntries(bodies.map(([name], n) => [name, errors[n]]))).toEqual(Object.fromEntries(bodies.map(([name]) => [name, []])));
    refused.forEach(([name, , complaint], n) => expect([name, errors[bodies.length + n]!.join('\n')]).toEqual([name, expect.stringMatching(complaint)]));
  }, 60_000);
});
