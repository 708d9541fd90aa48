/** P18 on the AI SDK's own mock models: each stream part's event, the ends, coldness and aborts, the options. */
import type { LanguageModelV3StreamPart, LanguageModelV4CallOptions, LanguageModelV4StreamPart, LanguageModelV4Usage } from '@ai-sdk/provider';
import { APICallError } from '@ai-sdk/provider';
import { simulateReadableStream } from 'ai';
import { MockLanguageModelV3, MockLanguageModelV4 } from 'ai/test';
import { Observable, lastValueFrom, toArray } from 'rxjs';
import { checkProviderEvents } from 'rx-tool-loop';
import type { ProviderEvent, ProviderInput } from 'rx-tool-loop';
import { languageModelProvider } from '../../src/ai-sdk/index.js';

const hello: ProviderInput = { messages: [{ role: 'user', content: 'Hi' }], tools: [] };

const usage = (input: number, output: number, cacheRead?: number, cacheWrite?: number): LanguageModelV4Usage => ({
  inputTokens: { total: input, noCache: undefined, cacheRead, cacheWrite },
  outputTokens: { total: output, text: undefined, reasoning: undefined },
});
const stop = { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(10, 2) } as const;

/** A V4 mock model that streams `chunks` (each a macrotask apart, as a real stream's parts come). */
function modelOf(...replies: LanguageModelV4StreamPart[][]): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    provider: 'openai.chat',
    modelId: 'gpt-test',
    doStream: replies.map((chunks) => ({ stream: simulateReadableStream({ chunks, chunkDelayInMs: 0 }) })),
  });
}

function events(source: Observable<ProviderEvent>): Promise<ProviderEvent[]> {
  return lastValueFrom(source.pipe(checkProviderEvents(), toArray()));
}

describe('languageModelProvider: stream parts as provider events', () => {
  it('P18: text-delta is text_delta, reasoning-delta reasoning_delta; finish is message_end with its usage, cache reads and writes included (R27)', async () => {
    const model = modelOf([
      { type: 'stream-start', warnings: [] },
      { type: 'response-metadata', id: 'r1', modelId: 'gpt-test' },
      { type: 'reasoning-start', id: 'r' },
      { type: 'reasoning-delta', id: 'r', delta: 'The user greets.' },
      { type: 'reasoning-end', id: 'r' },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'Hel' },
      { type: 'text-delta', id: 't', delta: '' },
      { type: 'text-delta', id: 't', delta: 'lo!' },
      { type: 'text-end', id: 't' },
      { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(1200, 40, 1024, 64) },
    ]);
    expect(await events(languageModelProvider(model)(hello))).toEqual([
      { type: 'message_start' },
      { type: 'reasoning_delta', text: 'The user greets.' },
      { type: 'text_delta', text: 'Hel' },
      { type: 'text_delta', text: 'lo!' },
      {
        type: 'message_end',
        stopReason: 'stop',
        usage: { inputTokens: 1200, outputTokens: 40, cacheReadTokens: 1024, cacheWriteTokens: 64 },
        reasoning: [
          { type: 'ai-sdk.reasoning', text: 'The user greets.' },
          { type: 'ai-sdk.text', text: 'Hello!' },
        ],
      },
    ]);
  });

  it('P18: a reply without reasoning or provider metadata has no reasoning to send back; usage without totals is no usage', async () => {
    const none: LanguageModelV4Usage = { inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: undefined, text: undefined, reasoning: undefined } };
    const model = modelOf([{ type: 'text-delta', id: 't', delta: 'Hi' }, { type: 'finish', finishReason: { unified: 'stop', raw: undefined }, usage: none }]);
    expect(await events(languageModelProvider(model)(hello))).toEqual([
      { type: 'message_start' },
      { type: 'text_delta', text: 'Hi' },
      { type: 'message_end', stopReason: 'stop' },
    ]);
  });

  it('P18: tool-input deltas are P9 tool_call_deltas (index from 0, id and name on the first), tool-call a tool_call at once; a call whose input came in no delta gets one', async () => {
    const model = modelOf([
      { type: 'tool-input-start', id: 'call_a', toolName: 'get_weather' },
      { type: 'tool-input-delta', id: 'call_a', delta: '{"city":' },
      { type: 'tool-input-delta', id: 'call_a', delta: '"Paris"}' },
      { type: 'tool-input-end', id: 'call_a' },
      { type: 'tool-call', toolCallId: 'call_a', toolName: 'get_weather', input: '{"city":"Paris"}' },
      { type: 'tool-call', toolCallId: 'call_b', toolName: 'get_weather', input: '{"city":"Tokyo"}' },
      { type: 'tool-call', toolCallId: 'call_c', toolName: 'current_time', input: '' },
      { type: 'tool-call', toolCallId: 'ws_1', toolName: 'web_search', input: '{}', providerExecuted: true },
      { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage(50, 30) },
    ]);
    expect(await events(languageModelProvider(model)(hello))).toEqual([
      { type: 'message_start' },
      { type: 'tool_call_delta', index: 0, id: 'call_a', name: 'get_weather', argumentsDelta: '{"city":' },
      { type: 'tool_call_delta', index: 0, argumentsDelta: '"Paris"}' },
      { type: 'tool_call', call: { id: 'call_a', name: 'get_weather', input: { city: 'Paris' } } },
      { type: 'tool_call_delta', index: 1, id: 'call_b', name: 'get_weather', argumentsDelta: '{"city":"Tokyo"}' },
      { type: 'tool_call', call: { id: 'call_b', name: 'get_weather', input: { city: 'Tokyo' } } },
      { type: 'tool_call', call: { id: 'call_c', name: 'current_time', input: {} } },
      { type: 'message_end', stopReason: 'toolUse', usage: { inputTokens: 50, outputTokens: 30 } },
    ]);
  });

  it('P18: finish reasons — stop or tool-calls are toolUse when calls came, else stop; length is length (P6); content-filter, error and other end with error naming them', async () => {
    const call = { type: 'tool-call', toolCallId: 'c1', toolName: 'x', input: '{}' } as const;
    const end = async (reason: string, raw: string | undefined, calls: boolean) => {
      const chunks: LanguageModelV4StreamPart[] = [...(calls ? [call] : []), { type: 'finish', finishReason: { unified: reason as 'stop', raw }, usage: usage(1, 1) }];
      const all = await events(languageModelProvider(modelOf(chunks))(hello));
      const { stopReason, errorMessage, failure } = all[all.length - 1] as Extract<ProviderEvent, { type: 'message_end' }>;
      return { stopReason, errorMessage, failure };
    };
    expect(await end('stop', 'stop', false)).toEqual({ stopReason: 'stop' });
    expect(await end('stop', 'STOP', true)).toEqual({ stopReason: 'toolUse' });
    expect(await end('tool-calls', 'tool_calls', true)).toEqual({ stopReason: 'toolUse' });
    expect(await end('tool-calls', 'tool_calls', false)).toEqual({ stopReason: 'stop' });
    expect(await end('length', 'max_tokens', true)).toEqual({ stopReason: 'length' });
    expect(await end('content-filter', 'SAFETY', false)).toEqual({
      stopReason: 'error',
      errorMessage: 'the model stopped: content-filter (SAFETY)',
      failure: { kind: 'refusal', message: 'the model stopped: content-filter (SAFETY)' },
    });
    expect(await end('other', 'MALFORMED_FUNCTION_CALL', false)).toMatchObject({ stopReason: 'error', errorMessage: 'the model stopped: other (MALFORMED_FUNCTION_CALL)' });
    expect(await end('interrupted', undefined, false)).toMatchObject({ stopReason: 'error', errorMessage: 'the model stopped: interrupted' });
  });

  it('P18: an error part ends the reply with error and its failure (an APICallError: HTTP status and retry-after); nothing after it is read', async () => {
    const error = new APICallError({
      message: 'Rate limit reached',
      url: 'https://api.example.test/v1/chat/completions?key=secret',
      requestBodyValues: {},
      statusCode: 429,
      responseHeaders: { 'retry-after': '3' },
    });
    const model = modelOf([{ type: 'text-delta', id: 't', delta: 'Hi' }, { type: 'error', error }, { type: 'text-delta', id: 't', delta: ' more' }, stop]);
    const message = 'HTTP 429 from POST https://api.example.test/v1/chat/completions: Rate limit reached';
    expect(await events(languageModelProvider(model)(hello))).toEqual([
      { type: 'message_start' },
      { type: 'text_delta', text: 'Hi' },
      { type: 'message_end', stopReason: 'error', errorMessage: message, failure: { kind: 'http', status: 429, retryAfterMs: 3000, message } },
    ]);
  });

  it('P18: a doStream that rejects (a network failure) is message_start then message_end error; a stream that ends without finish is an error; bad call JSON is an error naming the call', async () => {
    const unreachable = new APICallError({ message: 'Cannot connect to API: connect ECONNREFUSED', url: 'http://127.0.0.1:9/v1', requestBodyValues: {}, isRetryable: true });
    const rejecting = new MockLanguageModelV4({ doStream: () => Promise.reject(unreachable) });
    expect(await events(languageModelProvider(rejecting)(hello))).toEqual([
      { type: 'message_start' },
      { type: 'message_end', stopReason: 'error', errorMessage: 'Cannot connect to API: connect ECONNREFUSED', failure: { kind: 'network', message: 'Cannot connect to API: connect ECONNREFUSED' } },
    ]);
    const cut = await events(languageModelProvider(modelOf([{ type: 'text-delta', id: 't', delta: 'Hi' }]))(hello));
    expect(cut[cut.length - 1]).toEqual({
      type: 'message_end',
      stopReason: 'error',
      errorMessage: 'the stream ended without a finish part',
      failure: { kind: 'protocol', message: 'the stream ended without a finish part' },
    });
    const bad = await events(languageModelProvider(modelOf([{ type: 'tool-call', toolCallId: 'c9', toolName: 'get_weather', input: '{"city":' }, stop]))(hello));
    expect(bad[bad.length - 1]).toMatchObject({ stopReason: 'error', errorMessage: expect.stringMatching(/^invalid JSON in the arguments of tool call get_weather \(c9\): /) });
  });

  it('P18: cold — nothing is asked before subscribe, each subscription calls doStream once; unsubscribing aborts its abortSignal', async () => {
    const signals: AbortSignal[] = [];
    const model = new MockLanguageModelV4({
      doStream: async ({ abortSignal }) => {
        signals.push(abortSignal!);
        return { stream: new ReadableStream<LanguageModelV4StreamPart>({ start: (controller) => controller.enqueue({ type: 'text-delta', id: 't', delta: 'Hi' }) }) };
      },
    });
    const call = languageModelProvider(model)(hello);
    expect(model.doStreamCalls).toHaveLength(0);
    const seen: ProviderEvent[] = [];
    const subscription = call.subscribe((event) => seen.push(event));
    expect(model.doStreamCalls).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(seen).toEqual([{ type: 'message_start' }, { type: 'text_delta', text: 'Hi' }]);
    expect(signals[0]!.aborted).toBe(false);
    subscription.unsubscribe();
    expect(signals[0]!.aborted).toBe(true);
    await events(languageModelProvider(modelOf([stop]))(hello));
    const twice = modelOf([stop], [stop]);
    const provider = languageModelProvider(twice);
    await events(provider(hello));
    await events(provider(hello));
    expect(twice.doStreamCalls).toHaveLength(2);
  });

  it('P18: after the reply, unsubscribing aborts nothing (an ended call is harmless to unsubscribe, P1)', async () => {
    let signal: AbortSignal | undefined;
    const model = new MockLanguageModelV4({
      doStream: async ({ abortSignal }) => ((signal = abortSignal), { stream: simulateReadableStream({ chunks: [stop], chunkDelayInMs: 0 }) }),
    });
    await events(languageModelProvider(model)(hello));
    expect(signal!.aborted).toBe(false);
  });
});

describe('languageModelProvider: what it sends', () => {
  const weather = { name: 'get_weather', description: 'The weather in a city', input: { city: 'The city' } };

  it('P18: the tools are function tools with their JSON Schema; options in the AI SDK names (maxOutputTokens, temperature, stopSequences, toolChoice, headers, providerOptions)', async () => {
    const model = modelOf([stop]);
    const provider = languageModelProvider(model, {
      system: 'Be brief.',
      maxTokens: 256,
      temperature: 0.2,
      stop: 'END',
      toolChoice: 'get_weather',
      headers: { 'x-trace': 't1' },
      providerOptions: { openai: { store: false } },
    });
    await events(provider({ messages: [{ role: 'user', content: 'Paris?' }], tools: [weather] }));
    const { abortSignal, ...sent } = model.doStreamCalls[0]!;
    expect(abortSignal).toBeInstanceOf(AbortSignal);
    expect(sent).toEqual({
      prompt: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Paris?' }] },
      ],
      tools: [
        {
          type: 'function',
          name: 'get_weather',
          description: 'The weather in a city',
          inputSchema: { type: 'object', properties: { city: { type: 'string', description: 'The city' } }, required: ['city'] },
        },
      ],
      toolChoice: { type: 'tool', toolName: 'get_weather' },
      maxOutputTokens: 256,
      temperature: 0.2,
      stopSequences: ['END'],
      headers: { 'x-trace': 't1' },
      providerOptions: { openai: { store: false } },
    } satisfies Omit<LanguageModelV4CallOptions, 'abortSignal'>);
  });

  it('P18: input.output asks for JSON with its schema and name (responseFormat) and sends no tools', async () => {
    const model = modelOf([stop]);
    const schema = { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] };
    await events(languageModelProvider(model, { toolChoice: 'required' })({ messages: [{ role: 'user', content: 'A city?' }], tools: [weather], output: { name: 'city', schema } }));
    const sent = model.doStreamCalls[0]!;
    expect(sent.responseFormat).toEqual({ type: 'json', schema, name: 'city' });
    expect(sent.tools).toBeUndefined();
    expect(sent.toolChoice).toBeUndefined();
  });

  it('P18: the history as the prompt (V4) — system messages in place, user text with file parts, assistant text and tool-call parts, a turn\'s results one tool message (error-text, content with files); a failed empty turn left out', async () => {
    const model = modelOf([stop]);
    await events(
      languageModelProvider(model)({
        tools: [],
        messages: [
          { role: 'system', content: 'Answer in French.' },
          {
            role: 'user',
            content: 'What is on these?',
            attachments: [
              { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' },
              { type: 'file', mimeType: 'application/pdf', url: 'https://example.test/a.pdf', name: 'a.pdf' },
              { type: 'image', mimeType: 'image/gif', url: 'data:image/gif;base64,R0lGODlh' },
            ],
          },
          { role: 'assistant', content: '', stopReason: 'error', errorMessage: 'HTTP 500' },
          {
            role: 'assistant',
            content: 'Looking.',
            stopReason: 'toolUse',
            toolCalls: [
              { id: 'c1', name: 'screenshot', input: { page: 1 } },
              { id: 'c2', name: 'ocr', input: {} },
            ],
          },
          { role: 'toolResult', toolCallId: 'c1', toolName: 'screenshot', content: 'page 1', isError: false, attachments: [{ type: 'image', mimeType: 'image/png', data: 'AAAA' }] },
          { role: 'toolResult', toolCallId: 'c2', toolName: 'ocr', content: 'error: no text', isError: true },
          { role: 'user', content: 'Thanks' },
        ],
      }),
    );
    expect(model.doStreamCalls[0]!.prompt).toEqual([
      { role: 'system', content: 'Answer in French.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is on these?' },
          { type: 'file', mediaType: 'image/png', data: { type: 'data', data: 'iVBORw0KGgo=' } },
          { type: 'file', mediaType: 'application/pdf', filename: 'a.pdf', data: { type: 'url', url: new URL('https://example.test/a.pdf') } },
          { type: 'file', mediaType: 'image/gif', data: { type: 'data', data: 'R0lGODlh' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking.' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'screenshot', input: { page: 1 } },
          { type: 'tool-call', toolCallId: 'c2', toolName: 'ocr', input: {} },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c1',
            toolName: 'screenshot',
            output: { type: 'content', value: [{ type: 'text', text: 'page 1' }, { type: 'file', mediaType: 'image/png', data: { type: 'data', data: 'AAAA' } }] },
          },
          { type: 'tool-result', toolCallId: 'c2', toolName: 'ocr', output: { type: 'error-text', value: 'error: no text' } },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
    ] satisfies LanguageModelV4CallOptions['prompt']);
  });

  it('P18: a V3 model gets V3 file data — base64 or a URL object in file parts, image-data and file-url parts in tool results', async () => {
    const model = new MockLanguageModelV3({ doStream: { stream: simulateReadableStream<LanguageModelV3StreamPart>({ chunks: [stop], chunkDelayInMs: 0 }) } });
    await events(
      languageModelProvider(model)({
        tools: [],
        messages: [
          { role: 'user', content: '', attachments: [{ type: 'audio', mimeType: 'audio/wav', data: 'UklGRg==' }, { type: 'file', mimeType: 'text/csv', url: 'https://example.test/a.csv' }] },
          { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [{ id: 'c1', name: 'chart', input: {} }] },
          {
            role: 'toolResult',
            toolCallId: 'c1',
            toolName: 'chart',
            content: 'a chart',
            isError: false,
            attachments: [
              { type: 'image', mimeType: 'image/png', data: 'AAAA' },
              { type: 'file', mimeType: 'application/pdf', url: 'https://example.test/c.pdf' },
            ],
          },
        ],
      }),
    );
    expect(model.doStreamCalls[0]!.prompt).toEqual([
      {
        role: 'user',
        content: [
          { type: 'file', mediaType: 'audio/wav', data: 'UklGRg==' },
          { type: 'file', mediaType: 'text/csv', data: new URL('https://example.test/a.csv') },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'chart', input: {} }] },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c1',
            toolName: 'chart',
            output: {
              type: 'content',
              value: [
                { type: 'text', text: 'a chart' },
                { type: 'image-data', data: 'AAAA', mediaType: 'image/png' },
                { type: 'file-url', url: 'https://example.test/c.pdf' },
              ],
            },
          },
        ],
      },
    ]);
  });

  it('P10: a reply\'s reasoning and its parts\' provider metadata go back in the order they came, as providerOptions; the calls as the history holds them', async () => {
    const first = modelOf(
      [
        { type: 'reasoning-start', id: 'r', providerMetadata: { openai: { itemId: 'rs_1' } } },
        { type: 'reasoning-delta', id: 'r', delta: 'Need the weather.' },
        { type: 'reasoning-end', id: 'r', providerMetadata: { openai: { reasoningEncryptedContent: 'gAAA' } } },
        { type: 'text-delta', id: 't', delta: 'Checking.', providerMetadata: { google: { thoughtSignature: 'sig-text' } } },
        { type: 'tool-call', toolCallId: 'c1', toolName: 'get_weather', input: '{"city":"Paris"}', providerMetadata: { google: { thoughtSignature: 'sig-call' } } },
        { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage(5, 5) },
      ],
      [stop],
    );
    const provider = languageModelProvider(first);
    const reply = await events(provider(hello));
    const end = reply[reply.length - 1] as Extract<ProviderEvent, { type: 'message_end' }>;
    expect(end.reasoning).toEqual([
      { type: 'ai-sdk.reasoning', text: 'Need the weather.', providerOptions: { openai: { itemId: 'rs_1', reasoningEncryptedContent: 'gAAA' } } },
      { type: 'ai-sdk.text', text: 'Checking.', providerOptions: { google: { thoughtSignature: 'sig-text' } } },
      { type: 'ai-sdk.tool-call', toolCallId: 'c1', providerOptions: { google: { thoughtSignature: 'sig-call' } } },
    ]);
    await events(
      provider({
        tools: [],
        messages: [
          { role: 'user', content: 'Hi' },
          // another API's reasoning block in the same list is not sent to this one
          { role: 'assistant', content: 'Checking.', stopReason: 'toolUse', toolCalls: [{ id: 'c1', name: 'get_weather', input: { city: 'Paris' } }], reasoning: [{ type: 'thinking', thinking: 'x', signature: 's' }, ...end.reasoning!] },
          { role: 'toolResult', toolCallId: 'c1', toolName: 'get_weather', content: '18°C', isError: false },
        ],
      }),
    );
    expect(first.doStreamCalls[1]!.prompt[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'Need the weather.', providerOptions: { openai: { itemId: 'rs_1', reasoningEncryptedContent: 'gAAA' } } },
        { type: 'text', text: 'Checking.', providerOptions: { google: { thoughtSignature: 'sig-text' } } },
        { type: 'tool-call', toolCallId: 'c1', toolName: 'get_weather', input: { city: 'Paris' }, providerOptions: { google: { thoughtSignature: 'sig-call' } } },
      ],
    });
  });

  it('P10: when the history\'s text no longer spells the kept text parts (an edited history), the content goes as one text part before the calls', async () => {
    const model = modelOf([stop]);
    const reasoning = [
      { type: 'ai-sdk.text', text: 'Old words.', providerOptions: { google: { thoughtSignature: 's1' } } },
      { type: 'ai-sdk.tool-call', toolCallId: 'c1' },
    ];
    await events(
      languageModelProvider(model)({
        tools: [],
        messages: [{ role: 'assistant', content: 'New words.', stopReason: 'toolUse', toolCalls: [{ id: 'c1', name: 'x', input: {} }, { id: 'c2', name: 'y', input: {} }], reasoning }],
      }),
    );
    expect(model.doStreamCalls[0]!.prompt[0]!.content).toEqual([
      { type: 'text', text: 'New words.' },
      { type: 'tool-call', toolCallId: 'c1', toolName: 'x', input: {} },
      { type: 'tool-call', toolCallId: 'c2', toolName: 'y', input: {} },
    ]);
  });
});

describe('languageModelProvider: made', () => {
  it('P18: names itself after the model for traces (O2): providerName the AI SDK provider\'s first word, model its modelId', () => {
    const provider = languageModelProvider(new MockLanguageModelV4({ provider: 'google.generative-ai', modelId: 'gemini-test' }));
    expect([provider.providerName, provider.model]).toEqual(['google', 'gemini-test']);
  });

  it('P18: a model that is not an AI SDK language model, and each wrong option, is a TypeError or RangeError at call time naming it', () => {
    const model = new MockLanguageModelV4();
    expect(() => languageModelProvider({ specificationVersion: 'v2', doStream: () => undefined } as never)).toThrow(
      new TypeError('languageModelProvider: model must be an AI SDK LanguageModelV3 or LanguageModelV4 (its specificationVersion is "v2") (got {"specificationVersion":"v2"}, an object)'),
    );
    expect(() => languageModelProvider('gpt-4o' as never)).toThrow('languageModelProvider: model must be an AI SDK LanguageModelV3 or LanguageModelV4 (got "gpt-4o", a string)');
    expect(() => languageModelProvider(model, { maxTokens: 0 })).toThrow(new RangeError('languageModelProvider: maxTokens must be an integer >= 1 (got 0, a number)'));
    expect(() => languageModelProvider(model, { temperature: -1 })).toThrow(RangeError);
    expect(() => languageModelProvider(model, { system: 3 as never })).toThrow('languageModelProvider: system must be a string (got 3, a number)');
    expect(() => languageModelProvider(model, { toolChoice: '' })).toThrow('languageModelProvider: toolChoice must be a non-empty string (got "", a string)');
    expect(() => languageModelProvider(model, { stop: [1] as never })).toThrow('languageModelProvider: stop must be a string or an array of strings (got [1], an array)');
    expect(() => languageModelProvider(model, { headers: { a: 1 } as never })).toThrow('languageModelProvider: headers must be a record of strings (got {"a":1}, an object)');
    expect(() => languageModelProvider(model, { providerOptions: { openai: 1 } as never })).toThrow(/^languageModelProvider: providerOptions must be a record of objects/);
    expect(() => languageModelProvider(model, null as never)).toThrow('languageModelProvider: options must be an object (got null)');
  });

  it('P18: the options are copied when the provider is made: changing them afterwards changes no request', async () => {
    const model = modelOf([stop]);
    const options = { headers: { 'x-a': '1' }, providerOptions: { openai: { store: false } }, stop: ['END'] };
    const provider = languageModelProvider(model, options);
    options.headers['x-a'] = '2';
    options.providerOptions.openai.store = true;
    options.stop.push('MORE');
    await events(provider(hello));
    expect(model.doStreamCalls[0]).toMatchObject({ headers: { 'x-a': '1' }, providerOptions: { openai: { store: false } }, stopSequences: ['END'] });
  });
});
