/**
 * P17, J1, F2: the request bodies geminiProvider sends, type-checked against the official `@google/genai`
 * package's types (a pinned devDependency). The SDK has no type for the REST body as a whole — its
 * `GenerateContentParameters` is the SDK's call shape (`{ model, contents, config }`), which it rewrites —
 * so the body is typed as the REST `GenerateContentRequest` is documented (`contents`, `systemInstruction`,
 * `tools`, `toolConfig`, `generationConfig`, `safetySettings`, `cachedContent`), each field of the SDK's own
 * type for it: `Content` (and so `Part`, `FunctionCall`, `FunctionResponse`, `Blob`, `FileData`), `Tool` (so
 * `FunctionDeclaration`), `ToolConfig`, `GenerationConfig` (so `ThinkingConfig`), `SafetySetting` — with the
 * SDK's TypeScript enums read as the strings they are on the wire (`'ANY'` for `FunctionCallingConfigMode.ANY`).
 */
import type { AgentMessage, ProviderInput } from '../../src/index.js';
import { geminiRequest } from '../../src/providers/gemini.js';
import type { GeminiRequestOptions } from '../../src/providers/gemini.js';
import { addSpec, forecastSpec, history, timeSpec, weatherSpec } from './conversation';
import { typeErrorsAfter as typeErrors } from './sdk-types';

// the SDK's enums (FunctionCallingConfigMode…) are TypeScript enums; on the wire they are their string values
const PREAMBLE = `import type { Content, GenerationConfig, SafetySetting, Tool, ToolConfig } from '@google/genai';
type Wire<T> = T extends string ? \`\${T}\` : T extends readonly (infer U)[] ? Wire<U>[] : T extends object ? { [K in keyof T]: Wire<T[K]> } : T;
type GenerateContentRequest = Wire<{
  contents: Content[];
  systemInstruction?: Content;
  tools?: Tool[];
  toolConfig?: ToolConfig;
  generationConfig?: GenerationConfig;
  safetySettings?: SafetySetting[];
  cachedContent?: string;
}>;`;

/** A model turn as it came (P10): a thought, a signed call with the API's id, a signed empty text part. */
const signed: AgentMessage[] = [
  { role: 'system', content: 'Answer in French.' },
  ...history,
  { role: 'user', content: 'Und in Paris?', attachments: [{ type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' }, { type: 'file', mimeType: 'application/pdf', url: 'https://example.com/a.pdf' }] },
  {
    role: 'assistant',
    content: 'Je regarde.',
    stopReason: 'toolUse',
    reasoning: [
      { text: 'The user wants Paris.', thought: true },
      { text: 'Je regarde.' },
      { functionCall: { id: 'fc_1', name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2lnbmF0dXJlLTE=' },
      { text: '', thoughtSignature: 'c2lnbmF0dXJlLTI=' },
    ],
    toolCalls: [{ id: 'fc_1', name: 'get_weather', input: { city: 'Paris' } }],
  },
  {
    role: 'toolResult',
    toolCallId: 'fc_1',
    toolName: 'get_weather',
    content: '18°C',
    isError: false,
    attachments: [{ type: 'image', mimeType: 'image/png', url: 'data:image/png;base64,iVBORw0KGgo=' }],
  },
];

const bodies: [string, GeminiRequestOptions, ProviderInput][] = [
  ['a first question, no tools', {}, { messages: [{ role: 'user', content: 'hi' }], tools: [] }],
  [
    'the system option, several calls and an error result, every option',
    { system: 'You are terse.', temperature: 0.2, maxTokens: 300, toolChoice: 'required', stop: ['END'], thinking: 1024 },
    { messages: history, tools: [weatherSpec, timeSpec] },
  ],
  [
    'system messages, a signed model turn sent back as it came, attachments, a named tool choice, a JSON Schema and a zod tool, streamed arguments',
    { system: 'Be brief.', toolChoice: 'get_weather', streamFunctionCallArguments: true },
    { messages: signed, tools: [weatherSpec, addSpec, forecastSpec] },
  ],
  [
    'J1: an answer in a schema',
    { toolChoice: 'none' },
    { messages: signed, tools: [timeSpec], output: { name: 'answer', schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } },
  ],
];

/** Bodies the API would refuse: the check must fail for each, or it checks nothing. */
const refused: [string, object, RegExp][] = [
  ['a call whose arguments are named `arguments`', { contents: [{ role: 'model', parts: [{ functionCall: { name: 'f', arguments: {} } }] }] }, /arguments/],
  ['a function response that is a string, not an object', { contents: [{ role: 'user', parts: [{ functionResponse: { name: 'f', response: 'ok' } }] }] }, /not assignable/],
  ['a field the API does not know', { contents: [], generationConfig: { maxTokens: 5 } }, /maxTokens/],
];

describe('P17: the request bodies type-check against @google/genai', () => {
  it('P17, J1, F2: every body the provider builds is a GenerateContentRequest of the SDK’s types (system instruction, calls, results, signatures, attachments, output); bodies the API refuses are not', () => {
    const built = bodies.map(([, options, input]) => geminiRequest(options, input));
    // what the bodies hold, so that a check of less would show here
    const kinds = built.flatMap((body) => (body as { contents: { parts: object[] }[] }).contents.flatMap((content) => content.parts.flatMap((part) => Object.keys(part))));
    expect(new Set(kinds)).toEqual(new Set(['text', 'thought', 'functionCall', 'thoughtSignature', 'functionResponse', 'inlineData', 'fileData']));
    expect(built.map((body) => Object.keys(body).sort())).toEqual([
      ['contents'],
      ['contents', 'generationConfig', 'systemInstruction', 'toolConfig', 'tools'],
      ['contents', 'systemInstruction', 'toolConfig', 'tools'],
      ['contents', 'generationConfig', 'systemInstruction'],
    ]);
    // one program for all: the compiler loads the SDK's types once
    const errors = typeErrors(PREAMBLE, 'GenerateContentRequest', [...built, ...refused.map(([, body]) => body)]);
    expect(Object.fromEntries(bodies.map(([name], n) => [name, errors[n]]))).toEqual(Object.fromEntries(bodies.map(([name]) => [name, []])));
    refused.forEach(([name, , complaint], n) => expect([name, errors[bodies.length + n]!.join('\n')]).toEqual([name, expect.stringMatching(complaint)]));
  }, 60_000);
});
