/**
 * P17: geminiProvider against a server on loopback that answers as `streamGenerateContent?alt=sse` does — one
 * `data: <json>` line an event, events apart by CRLF CRLF, no terminal event: the reply ends with the body.
 * The streams are written here from the API reference (GenerateContentResponse, Candidate, Part,
 * UsageMetadata), with the quirks real servers show: a signature on an empty last text part, a call and its
 * finishReason in one chunk, Vertex's streamed arguments, a usage-only chunk.
 */
import { lastValueFrom, toArray } from 'rxjs';
import type { AgentMessage, ProviderEvent, Usage } from '../../src/index.js';
import { ToolRegistry, geminiProvider, runEventedToolLoop } from '../../src/index.js';
import type { GeminiProviderOptions } from '../../src/index.js';
import { call, history, question, start, text, weatherSpec } from './conversation';
import { LoopbackServer, Received, Reply, closedPort, collect, gate, nextTurn } from './loopback-server';

const KEY = 'AIzaSy-test-0123456789abcdefSECRET';

let server: LoopbackServer;
beforeAll(async () => {
  server = await LoopbackServer.start();
});
afterAll(() => server.stop());
beforeEach(() => server.reset());

const provider = (options: Partial<GeminiProviderOptions> = {}) =>
  geminiProvider({ model: 'gemini-2.5-flash', baseURL: `${server.url}/v1beta/`, apiKey: KEY, maxRetries: 0, ...options });

/** One event as Gemini frames it. */
const data = (chunk: object): string => `data: ${JSON.stringify(chunk)}\r\n\r\n`;
/** A chunk of the reply: the first candidate's parts, and what else the chunk says. */
const chunk = (parts: object[] | undefined, more: { finishReason?: string; finishMessage?: string; usageMetadata?: object } = {}): object => {
  const { usageMetadata, ...candidate } = more;
  return {
    candidates: [{ ...(parts !== undefined && { content: { role: 'model', parts } }), ...candidate, index: 0 }],
    ...(usageMetadata !== undefined && { usageMetadata }),
    modelVersion: 'gemini-2.5-flash',
    responseId: 'resp-gemini-0001',
  };
};
const sse = (...chunks: object[]): Reply => ({ body: chunks.map(data) });
const counts = { promptTokenCount: 40, candidatesTokenCount: 12, totalTokenCount: 52 };
const usage = (inputTokens: number, outputTokens: number, cacheReadTokens?: number): Usage => ({ inputTokens, outputTokens, ...(cacheReadTokens !== undefined && { cacheReadTokens }) });
const ended = (stopReason: 'stop' | 'toolUse' | 'length', extra: object = {}): ProviderEvent => ({ type: 'message_end', stopReason, usage: usage(40, 12), ...extra });
const delta = (index: number, argumentsDelta: string, id?: string, name?: string): ProviderEvent => ({
  type: 'tool_call_delta',
  index,
  argumentsDelta,
  ...(id !== undefined && { id }),
  ...(name !== undefined && { name }),
});
const failure = (kind: string, message: unknown, more: object = {}) => ({ type: 'message_end', stopReason: 'error', errorMessage: message, failure: { kind, message, ...more } });
/** The id the library gives a call the API gave none: `call_<Date.now() in base 36>_<index>`, as the other providers do. */
const madeUp = (index: number) => expect.stringMatching(new RegExp(`^call_[0-9a-z]+_${index}$`));

describe('geminiProvider: streams in the wire format', () => {
  it('P17: text parts are text_deltas; STOP is stop; usage from the last chunk with counts (prompt + tool-use prompt in, candidates + thoughts out, cached content read)', async () => {
    server.reply(
      sse(
        chunk([{ text: 'Bonjour, ' }], { usageMetadata: { trafficType: 'ON_DEMAND' } }),
        chunk([{ text: 'il fait beau à Paris ☀️' }], { usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1 } }),
        chunk([{ text: '' }], {
          finishReason: 'STOP',
          usageMetadata: { promptTokenCount: 40, candidatesTokenCount: 12, toolUsePromptTokenCount: 5, thoughtsTokenCount: 30, cachedContentTokenCount: 16, totalTokenCount: 87 },
        }),
        { usageMetadata: { trafficType: 'ON_DEMAND' } }, // counts nothing: the last counts stand
      ),
    );
    expect(await collect(provider()(question))).toEqual([
      start,
      text('Bonjour, '),
      text('il fait beau à Paris ☀️'),
      { type: 'message_end', stopReason: 'stop', usage: usage(45, 42, 16) },
    ]);
  });

  it("P17, R3: a functionCall part is whole in its chunk: a tool_call_delta and its tool_call at once, with the API's id; two calls in one chunk; STOP with calls is toolUse", async () => {
    server.reply(
      sse(
        chunk([
          { functionCall: { id: 'fc_paris', name: 'get_weather', args: { city: 'Paris' } } },
          { functionCall: { id: 'fc_tokyo', name: 'get_weather', args: { city: 'Tokyo', unit: 'celsius' } } },
        ]),
        chunk([{ text: '' }], { finishReason: 'STOP', usageMetadata: counts }),
      ),
    );
    expect(await collect(provider()(question))).toEqual([
      start,
      delta(0, '{"city":"Paris"}', 'fc_paris', 'get_weather'),
      call('fc_paris', 'get_weather', { city: 'Paris' }),
      delta(1, '{"city":"Tokyo","unit":"celsius"}', 'fc_tokyo', 'get_weather'),
      call('fc_tokyo', 'get_weather', { city: 'Tokyo', unit: 'celsius' }),
      ended('toolUse', { reasoning: [{ functionCall: { id: 'fc_paris', name: 'get_weather', args: { city: 'Paris' } } }, { functionCall: { id: 'fc_tokyo', name: 'get_weather', args: { city: 'Tokyo', unit: 'celsius' } } }, { text: '' }] }),
    ]);
  });

  it("P17: a call without an id gets one of the library's; a call without args has {} as its input; the call and its finishReason in one chunk", async () => {
    server.reply(sse(chunk([{ functionCall: { name: 'current_time' }, thoughtSignature: 'c2lnLXRpbWU=' }], { finishReason: 'STOP', usageMetadata: counts })));
    const events = await collect(provider()(question));
    expect(events).toEqual([
      start,
      { type: 'tool_call_delta', index: 0, id: madeUp(0), name: 'current_time', argumentsDelta: '{}' },
      { type: 'tool_call', call: { id: madeUp(0), name: 'current_time', input: {} } },
      ended('toolUse', { reasoning: [{ functionCall: { name: 'current_time' }, thoughtSignature: 'c2lnLXRpbWU=' }] }),
    ]);
  });

  it('P17, P10: thought parts are reasoning_deltas; the parts go on message_end.reasoning as they came, text runs joined, each signature on its part (one on an empty last text part)', async () => {
    server.reply(
      sse(
        chunk([{ text: '**Planning** The user ', thought: true }]),
        chunk([{ text: 'wants a haiku.', thought: true }]),
        chunk([{ text: 'Autumn moonlight—' }]),
        chunk([{ text: '\na worm digs silently' }]),
        chunk([{ text: '', thoughtSignature: 'c2lnLXRleHQ=' }], { finishReason: 'STOP', usageMetadata: counts }),
      ),
    );
    expect(await collect(provider()(question))).toEqual([
      start,
      { type: 'reasoning_delta', text: '**Planning** The user ' },
      { type: 'reasoning_delta', text: 'wants a haiku.' },
      text('Autumn moonlight—'),
      text('\na worm digs silently'),
      ended('stop', {
        reasoning: [
          { text: '**Planning** The user wants a haiku.', thought: true },
          { text: 'Autumn moonlight—\na worm digs silently', thoughtSignature: 'c2lnLXRleHQ=' },
        ],
      }),
    ]);
  });

  it('P17: a plain text reply carries no reasoning: its text is all there is to send back', async () => {
    server.reply(sse(chunk([{ text: 'Hi' }]), chunk([{ text: '!' }], { finishReason: 'STOP', usageMetadata: counts })));
    expect((await collect(provider()(question))).at(-1)).toEqual(ended('stop'));
  });

  it("P17, P9: Vertex's streamed arguments (partialArgs, willContinue) are tool_call_deltas; the call's tool_call comes with its closing part", async () => {
    server.reply(
      sse(
        chunk([{ functionCall: { name: 'get_weather', willContinue: true }, thoughtSignature: 'c2lnLXN0cmVhbQ==' }]),
        chunk([{ functionCall: { partialArgs: [{ jsonPath: '$.city', stringValue: 'San ', willContinue: true }], willContinue: true } }]),
        chunk([{ functionCall: { partialArgs: [{ jsonPath: '$.city', stringValue: 'Francisco' }, { jsonPath: '$.days', numberValue: 3 }], willContinue: true } }]),
        chunk([{ functionCall: {} }]),
        chunk([{ functionCall: { name: 'current_time', willContinue: true } }]),
        chunk([{ functionCall: {} }], { finishReason: 'STOP', usageMetadata: counts }),
      ),
    );
    const events = await collect(provider()(question));
    expect(events).toEqual([
      start,
      { type: 'tool_call_delta', index: 0, id: madeUp(0), name: 'get_weather', argumentsDelta: '' },
      delta(0, 'San '),
      delta(0, 'Francisco'),
      delta(0, '3'),
      { type: 'tool_call', call: { id: madeUp(0), name: 'get_weather', input: { city: 'San Francisco', days: 3 } } },
      { type: 'tool_call_delta', index: 1, id: madeUp(1), name: 'current_time', argumentsDelta: '' },
      { type: 'tool_call', call: { id: madeUp(1), name: 'current_time', input: {} } },
      ended('toolUse', {
        // sent back whole, as one part each: the API takes no partialArgs in a request
        reasoning: [
          { functionCall: { name: 'get_weather', args: { city: 'San Francisco', days: 3 } }, thoughtSignature: 'c2lnLXN0cmVhbQ==' },
          { functionCall: { name: 'current_time', args: {} } },
        ],
      }),
    ]);
  });

  it('P17, P6: MAX_TOKENS is length, whatever the reply held; a call still streaming is dropped', async () => {
    server.reply(
      sse(
        chunk([{ text: 'Let me check' }]),
        chunk([{ functionCall: { name: 'get_weather', willContinue: true } }]),
        chunk([{ functionCall: { partialArgs: [{ jsonPath: '$.city', stringValue: 'Par', willContinue: true }], willContinue: true } }], { finishReason: 'MAX_TOKENS', usageMetadata: counts }),
      ),
    );
    const events = await collect(provider()(question));
    expect(events.filter((event) => event.type === 'tool_call')).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: 'message_end', stopReason: 'length', usage: usage(40, 12) });
  });

  it.each(['SAFETY', 'RECITATION', 'PROHIBITED_CONTENT', 'BLOCKLIST', 'SPII'])('P17, L1: finishReason %s is an error naming it, failure refusal', async (reason) => {
    server.reply(sse(chunk([{ text: 'Once upon' }]), chunk(undefined, { finishReason: reason, usageMetadata: counts })));
    const events = await collect(provider()(question));
    expect(events).toEqual([start, text('Once upon'), { ...failure('refusal', `finish reason ${reason}`), usage: usage(40, 12) }]);
  });

  it("P17, L1: MALFORMED_FUNCTION_CALL (a candidate without content) is an error naming it and the API's finishMessage, failure protocol", async () => {
    server.reply(sse(chunk(undefined, { finishReason: 'MALFORMED_FUNCTION_CALL', finishMessage: 'Malformed function call: print(default_api.archive(cities=["New', usageMetadata: { promptTokenCount: 61, totalTokenCount: 61 } })));
    const message = 'finish reason MALFORMED_FUNCTION_CALL: Malformed function call: print(default_api.archive(cities=["New';
    expect(await collect(provider()(question))).toEqual([start, { ...failure('protocol', message), usage: usage(61, 0) }]);
  });

  it('P17, L1: promptFeedback.blockReason with no candidates is an error naming it, failure refusal', async () => {
    server.reply(sse({ promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 }, modelVersion: 'gemini-2.5-flash' }));
    expect(await collect(provider()(question))).toEqual([start, { ...failure('refusal', 'prompt blocked: PROHIBITED_CONTENT'), usage: usage(9, 0) }]);
  });

  it('P17, L1: a stream that ends without a finishReason is an error, failure protocol; an error object in the stream names its status, failure http', async () => {
    server.reply(sse(chunk([{ text: 'Half' }])), { body: [data(chunk([{ text: 'First ' }])), data({ error: { code: 503, status: 'UNAVAILABLE', message: 'The model is overloaded.' } })] });
    expect(await collect(provider()(question))).toEqual([start, text('Half'), failure('protocol', 'the stream ended before the reply was complete (no finishReason)')]);
    expect(await collect(provider()(question))).toEqual([
      start,
      text('First '),
      failure('http', 'error in the stream (503 UNAVAILABLE): The model is overloaded.', { status: 503 }),
    ]);
  });
});

/** What a Gemini server refuses (as the API does): a model turn whose functionCall parts lost their thought signature. */
function refuseUnsigned(reply: Reply): (request: Received) => Reply {
  return (request) => {
    const contents = request.json.contents as { role: string; parts: { functionCall?: unknown; thoughtSignature?: string }[] }[];
    const unsigned = contents.findIndex((content) => content.role === 'model' && content.parts.some((part) => part.functionCall !== undefined && part.thoughtSignature === undefined));
    if (unsigned < 0) return reply;
    const message = `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:get_weather\` , position ${unsigned + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`;
    return { status: 400, body: JSON.stringify({ error: { code: 400, message, status: 'INVALID_ARGUMENT' } }) };
  };
}

const signedCall = sse(
  chunk([{ text: 'Checking.' }]),
  chunk([{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2lnLWNhbGw=' }]),
  chunk([{ text: '', thoughtSignature: 'c2lnLWVuZA==' }], { finishReason: 'STOP', usageMetadata: counts }),
);
const answer = sse(chunk([{ text: 'Paris: 18°C.' }], { finishReason: 'STOP', usageMetadata: counts }));

describe('geminiProvider in the loop', () => {
  it("P17, R3: a call's tool starts when its part arrives, while the rest of the reply still streams", async () => {
    const { opened, open } = gate();
    const fallback = setTimeout(open, 3000); // a tool that never starts fails the expectations below, not by a timeout
    const head = [data(chunk([{ functionCall: { id: 'fc_1', name: 'get_weather', args: { city: 'Paris' } } }]))];
    const tail = [data(chunk([{ functionCall: { id: 'fc_2', name: 'get_weather', args: { city: 'Tokyo' } } }])), data(chunk([{ text: '' }], { finishReason: 'STOP', usageMetadata: counts }))];
    server.reply({ body: [...head, ...tail], between: (piece) => (piece === 1 ? opened : Promise.resolve()) }, answer);
    const started: { city: unknown; tailSent: boolean }[] = [];
    const registry = new ToolRegistry().register({
      ...weatherSpec,
      input: { city: 'The city' },
      handler: (input) => {
        started.push({ city: input.city, tailSent: server.requests[0]!.progress.done });
        open();
        return `${String(input.city)}: 18°C`;
      },
    });
    const events = await lastValueFrom(runEventedToolLoop({ provider: provider(), registry, messages: question.messages }).pipe(toArray()));
    clearTimeout(fallback);
    expect(started).toEqual([
      { city: 'Paris', tailSent: false },
      { city: 'Tokyo', tailSent: true },
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'loop_end', reason: 'stop' });
    // the results went back as one user turn of functionResponses, the API's ids echoed
    expect((server.requests[1]!.json.contents as object[]).at(-1)).toEqual({
      role: 'user',
      parts: [
        { functionResponse: { id: 'fc_1', name: 'get_weather', response: { output: 'Paris: 18°C' } } },
        { functionResponse: { id: 'fc_2', name: 'get_weather', response: { output: 'Tokyo: 18°C' } } },
      ],
    });
  });

  it('P17, P10: the thought signatures go back unchanged on their parts, the model turn part by part as it came: the server that refuses a missing thought_signature takes it', async () => {
    server.reply(refuseUnsigned(signedCall), refuseUnsigned(answer));
    const registry = new ToolRegistry().register({ ...weatherSpec, input: { city: 'The city' }, handler: () => '18°C' });
    const events = await lastValueFrom(runEventedToolLoop({ provider: provider(), registry, messages: question.messages }).pipe(toArray()));
    expect(events.at(-1)).toMatchObject({ type: 'loop_end', reason: 'stop' });
    expect(server.requests[1]!.json.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
      {
        role: 'model',
        parts: [
          { text: 'Checking.' },
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2lnLWNhbGw=' },
          { text: '', thoughtSignature: 'c2lnLWVuZA==' },
        ],
      },
      // the call had no id: none is echoed
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: '18°C' } } }] },
    ]);
  });

  it('P17: the same history with its signatures dropped is refused by that server with a 400 that names the missing thought_signature (the check is real)', async () => {
    server.reply(signedCall);
    const first = await collect(provider()(question));
    const end = first.at(-1) as Extract<ProviderEvent, { type: 'message_end' }>;
    const calls = first.flatMap((event) => (event.type === 'tool_call' ? [event.call] : []));
    const turn = (reasoning: unknown[] | undefined): AgentMessage[] => [
      ...question.messages,
      { role: 'assistant', content: 'Checking.', stopReason: 'toolUse', toolCalls: calls, ...(reasoning !== undefined && { reasoning }) },
      { role: 'toolResult', toolCallId: calls[0]!.id, toolName: 'get_weather', content: '18°C', isError: false },
    ];
    server.reply(refuseUnsigned(answer), refuseUnsigned(answer));
    expect((await collect(provider()({ messages: turn(end.reasoning), tools: [weatherSpec] }))).at(-1)).toMatchObject({ stopReason: 'stop' });
    expect(await collect(provider()({ messages: turn(undefined), tools: [weatherSpec] }))).toEqual([
      start,
      failure('http', expect.stringMatching(/^HTTP 400 from POST \S+: Function call is missing a thought_signature in functionCall parts/), { status: 400 }),
    ]);
  });
});

describe('geminiProvider: the request', () => {
  it('P17: POSTs to {baseURL}/models/{model}:streamGenerateContent?alt=sse with x-goog-api-key; system messages as systemInstruction; roles user and model; calls as functionCall parts, results as functionResponse parts ({ output }, { error }); tools as functionDeclarations with parametersJsonSchema', async () => {
    server.reply(answer);
    const messages: AgentMessage[] = [{ role: 'system', content: 'Answer in French.' }, ...history];
    await collect(provider({ system: 'You are terse.' })({ messages, tools: [weatherSpec] }));
    const [request] = server.requests;
    expect(request!.method).toBe('POST');
    expect(request!.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    expect(request!.headers['x-goog-api-key']).toBe(KEY);
    expect(request!.headers.authorization).toBeUndefined();
    expect(request!.json).toEqual({
      systemInstruction: { parts: [{ text: 'You are terse.\n\nAnswer in French.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'Weather in Paris and Tokyo?' }] },
        {
          role: 'model',
          parts: [
            { text: 'Checking both.' },
            { functionCall: { id: 'call_1', name: 'get_weather', args: { city: 'Paris' } } },
            { functionCall: { id: 'call_2', name: 'get_weather', args: { city: 'Tokyo' } } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { id: 'call_1', name: 'get_weather', response: { output: '18°C' } } },
            { functionResponse: { id: 'call_2', name: 'get_weather', response: { error: 'error: timeout' } } },
          ],
        },
        { role: 'model', parts: [{ text: 'Paris is 18°C; Tokyo failed.' }] },
        { role: 'user', parts: [{ text: 'And the time?' }] },
        { role: 'model', parts: [{ functionCall: { id: 'call_3', name: 'current_time', args: {} } }] },
        { role: 'user', parts: [{ functionResponse: { id: 'call_3', name: 'current_time', response: { output: '2026-01-01T00:00:00Z' } } }] },
      ],
      tools: [
        {
          functionDeclarations: [
            {
              name: 'get_weather',
              description: 'The weather in a city',
              parametersJsonSchema: {
                type: 'object',
                properties: { city: { type: 'string', description: 'The city' }, unit: { type: 'string', description: 'celsius or fahrenheit' } },
                required: ['city', 'unit'],
              },
            },
          ],
        },
      ],
    });
  });

  it("P17, P11: temperature, maxTokens as maxOutputTokens, stop as stopSequences, thinking as thinkingConfig, toolChoice as functionCallingConfig ('required' ANY, a name ANY of it), Vertex's streamFunctionCallArguments; extraBody merged last", async () => {
    server.reply(answer, answer, answer);
    await collect(provider({ temperature: 0.2, maxTokens: 300, stop: 'END', thinking: 1024, toolChoice: 'required', extraBody: { safetySettings: [] } })(question));
    await collect(provider({ toolChoice: 'get_weather', streamFunctionCallArguments: true })(question));
    await collect(provider({ toolChoice: 'none' })({ ...question, tools: [] }));
    const [every, named, none] = server.requests.map((request) => request.json);
    expect(every).toMatchObject({
      generationConfig: { temperature: 0.2, maxOutputTokens: 300, stopSequences: ['END'], thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } },
      toolConfig: { functionCallingConfig: { mode: 'ANY' } },
      safetySettings: [],
    });
    expect(named!.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'], streamFunctionCallArguments: true } });
    expect(Object.keys(none!)).toEqual(['contents']); // no tools: no tool config either
  });

  it('P17, J1: with output, generationConfig asks for JSON in the schema (responseMimeType, responseJsonSchema), and no tools are sent', async () => {
    server.reply(answer);
    const schema = { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] };
    await collect(provider({ toolChoice: 'auto' })({ ...question, output: { name: 'answer', schema } }));
    const body = server.requests[0]!.json;
    expect(body.generationConfig).toEqual({ responseMimeType: 'application/json', responseJsonSchema: schema });
    expect(body.tools).toBeUndefined();
    expect(body.toolConfig).toBeUndefined();
  });

  it("P17, F2: a user's attachments as inlineData (base64, or a data: URL's) and fileData (a URL); a result's attachments as parts of the function response turn", async () => {
    server.reply(answer);
    const messages: AgentMessage[] = [
      {
        role: 'user',
        content: 'What is in these?',
        attachments: [
          { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' },
          { type: 'file', mimeType: 'application/pdf', url: 'https://example.com/report.pdf' },
          { type: 'file', mimeType: 'text/plain', url: 'data:text/plain,h%c3%a9' },
        ],
      },
      { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [{ id: 'fc_1', name: 'screenshot', input: {} }] },
      { role: 'toolResult', toolCallId: 'fc_1', toolName: 'screenshot', content: 'the screen', isError: false, attachments: [{ type: 'image', mimeType: 'image/png', url: 'data:image/png;base64,AAAA' }] },
    ];
    await collect(provider()({ messages, tools: [] }));
    expect(server.requests[0]!.json.contents).toEqual([
      {
        role: 'user',
        parts: [
          { text: 'What is in these?' },
          { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
          { fileData: { mimeType: 'application/pdf', fileUri: 'https://example.com/report.pdf' } },
          { inlineData: { mimeType: 'text/plain', data: Buffer.from('hé').toString('base64') } },
        ],
      },
      { role: 'model', parts: [{ functionCall: { id: 'fc_1', name: 'screenshot', args: {} } }] },
      {
        role: 'user',
        parts: [{ functionResponse: { id: 'fc_1', name: 'screenshot', response: { output: 'the screen' } } }, { inlineData: { mimeType: 'image/png', data: 'AAAA' } }],
      },
    ]);
  });

  it("P17, P10: another API's reasoning blocks are not sent as parts; a model turn whose kept parts no longer match its calls is sent from its text and calls", async () => {
    server.reply(answer, answer);
    const anthropic: AgentMessage = { role: 'assistant', content: 'Hi', stopReason: 'stop', reasoning: [{ type: 'thinking', thinking: 'x', signature: 'sig' }] };
    await collect(provider()({ messages: [{ role: 'user', content: 'a' }, anthropic, { role: 'user', content: 'b' }], tools: [] }));
    expect((server.requests[0]!.json.contents as object[])[1]).toEqual({ role: 'model', parts: [{ text: 'Hi' }] });
    const edited: AgentMessage = {
      role: 'assistant',
      content: '',
      stopReason: 'toolUse',
      reasoning: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2ln' }],
      toolCalls: [{ id: 'call_x', name: 'current_time', input: {} }],
    };
    const result: AgentMessage = { role: 'toolResult', toolCallId: 'call_x', toolName: 'current_time', content: 'noon', isError: false };
    await collect(provider()({ messages: [{ role: 'user', content: 'a' }, edited, result], tools: [] }));
    expect((server.requests[1]!.json.contents as object[])[1]).toEqual({ role: 'model', parts: [{ functionCall: { id: 'call_x', name: 'current_time', args: {} } }] });
  });

  it("P17: Vertex is a baseURL ending in …/projects/P/locations/L/publishers/google, same paths after it; named gcp.vertex_ai (the Developer API gcp.gemini); no key, no x-goog-api-key", async () => {
    server.reply(answer);
    const vertex = geminiProvider({ model: 'gemini-2.5-flash', apiKey: '', headers: { authorization: 'Bearer ya29.token-0123456789' }, baseURL: `${server.url}/v1beta1/projects/p1/locations/global/publishers/google` });
    await collect(vertex(question));
    expect(server.requests[0]!.path).toBe('/v1beta1/projects/p1/locations/global/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    expect(server.requests[0]!.headers['x-goog-api-key']).toBeUndefined();
    expect([vertex.providerName, provider().providerName, provider().model]).toEqual(['gcp.vertex_ai', 'gcp.gemini', 'gemini-2.5-flash']);
  });

  it('P17: the default baseURL is the Developer API’s v1beta; the key comes from GEMINI_API_KEY', async () => {
    const requested: string[] = [];
    const saved = process.env.GEMINI_API_KEY;
    process.env.GEMINI_API_KEY = 'env-key-0123456789';
    try {
      const fromEnv = geminiProvider({
        model: 'gemini-2.5-flash',
        maxRetries: 0,
        fetch: async (url, init) => {
          requested.push(`${url} ${new Headers(init.headers).get('x-goog-api-key')}`);
          return new Response(data(chunk([{ text: 'ok' }], { finishReason: 'STOP' })), { headers: { 'content-type': 'text/event-stream' } });
        },
      });
      expect((await collect(fromEnv(question))).at(-1)).toMatchObject({ stopReason: 'stop' });
    } finally {
      if (saved === undefined) delete process.env.GEMINI_API_KEY;
      else process.env.GEMINI_API_KEY = saved;
    }
    expect(requested).toEqual(['https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse env-key-0123456789']);
  });

  it('P17: checks its own settings when the provider is made, naming the setting and the value', () => {
    expect(() => geminiProvider({ model: 'm', apiKey: '', thinking: 1.5 })).toThrow('geminiProvider: thinking must be an integer >= 0, or -1 for the model\'s own choice (got 1.5, a number)');
    expect(() => geminiProvider({ model: 'm', apiKey: '', streamFunctionCallArguments: 'yes' as never })).toThrow(/^geminiProvider: streamFunctionCallArguments must be a boolean \(got "yes"/);
    expect(() => geminiProvider({ model: '', apiKey: '' })).toThrow(/^geminiProvider: model must be a non-empty string/);
  });
});

describe('geminiProvider: errors, retries, idle timeout (P2, P4, P12, L1)', () => {
  const googleError = (code: number, status: string, message: string) => JSON.stringify({ error: { code, message, status } });

  it("P17, P4: retries a 503, then streams the answer with the same body", async () => {
    server.reply({ status: 503, headers: { 'retry-after': '0' }, body: googleError(503, 'UNAVAILABLE', 'The model is overloaded.') }, answer);
    expect((await collect(provider({ maxRetries: 1 })(question))).at(-1)).toMatchObject({ stopReason: 'stop' });
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]!.body).toBe(server.requests[0]!.body);
  });

  it("P17, L1: an HTTP error ends with failure http, its status and retry-after; the API's message named, never the key", async () => {
    server.reply(
      { status: 429, headers: { 'retry-after': '7' }, body: googleError(429, 'RESOURCE_EXHAUSTED', 'Resource has been exhausted (e.g. check quota).') },
      (request) => ({ status: 400, body: googleError(400, 'INVALID_ARGUMENT', `API key not valid: ${String(request.headers['x-goog-api-key'])}`) }),
    );
    const limited = await collect(provider()(question));
    expect(limited).toEqual([start, failure('http', expect.stringMatching(/^HTTP 429 from POST \S+: Resource has been exhausted/), { status: 429, retryAfterMs: 7000 })]);
    const refused = await collect(provider()(question));
    expect(refused).toEqual([start, failure('http', expect.stringMatching(/^HTTP 400 from POST \S+: API key not valid: \[redacted\]$/), { status: 400 })]);
    expect(JSON.stringify([limited, refused])).not.toContain(KEY);
  });

  it("P17, L1: a 429 without retry-after says how long to wait in its RetryInfo: failure.retryAfterMs is its retryDelay", async () => {
    const details = [
      { '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [{ quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests' }] },
      { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '37s' },
    ];
    server.reply({ status: 429, body: JSON.stringify({ error: { code: 429, message: 'You exceeded your current quota.', status: 'RESOURCE_EXHAUSTED', details } }) });
    expect(await collect(provider()(question))).toEqual([start, failure('http', expect.stringMatching(/^HTTP 429 from POST \S+: You exceeded your current quota\.$/), { status: 429, retryAfterMs: 37_000 })]);
  });

  it('P17, L1: a network failure ends with failure network; bad JSON in the stream with failure protocol', async () => {
    const port = await closedPort();
    const unreachable = await collect(geminiProvider({ model: 'm', apiKey: '', maxRetries: 0, baseURL: `http://127.0.0.1:${port}/v1beta` })(question));
    expect(unreachable).toEqual([start, failure('network', expect.stringContaining(`http://127.0.0.1:${port}/v1beta/models/m:streamGenerateContent`))]);
    server.reply({ body: 'data: {"candidates": [\r\n\r\n' });
    expect(await collect(provider()(question))).toEqual([start, failure('protocol', 'invalid JSON in the stream: {"candidates": [')]);
  });

  it('P17, P12, L1: a stream that stops sending ends after idleTimeoutMs with "no data for N ms", failure timeout', async () => {
    server.reply({ body: data(chunk([{ text: 'Hel' }])), then: 'hang' });
    expect(await collect(provider({ idleTimeoutMs: 60 })(question))).toEqual([start, text('Hel'), failure('timeout', 'no data for 60 ms')]);
  });

  it('P17, P1: sends nothing before subscribe, one request per subscription; unsubscribing closes the connection', async () => {
    server.reply(answer, { body: data(chunk([{ text: 'Hel' }])), then: 'hang' });
    const events = provider()(question);
    await nextTurn();
    expect(server.requests).toHaveLength(0);
    await collect(events);
    const seen: ProviderEvent[] = [];
    const subscription = events.subscribe((event) => {
      seen.push(event);
      if (event.type === 'text_delta') subscription.unsubscribe();
    });
    while (server.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    await server.requests[1]!.closed;
    expect(seen).toEqual([start, text('Hel')]);
  });
});

