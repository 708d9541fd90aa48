import { lastValueFrom, toArray } from 'rxjs';
import type { AgentMessage, ProviderEvent, StopReason, Usage } from '../../src/index.js';
import { ToolRegistry, openAIResponsesProvider, runEventedToolLoop } from '../../src/index.js';
import type { OpenAIResponsesProviderOptions } from '../../src/index.js';
import type { FailureKind } from '../../src/providers/http/failure.js';
import { addSchema, addSpec, call, failed, forecastSchema, forecastSpec, history, question, start, text, timeSpec, weatherSpec } from './conversation';
import { LoopbackServer, Reply, closedPort, collect, fixture, gate, nextTurn, splitAfterEvents } from './loopback-server';

const KEY = 'sk-test-0123456789abcdefSECRET';

let server: LoopbackServer;
beforeAll(async () => {
  server = await LoopbackServer.start();
});
afterAll(() => server.stop());
beforeEach(() => server.reset());

const provider = (options: Partial<OpenAIResponsesProviderOptions> = {}) =>
  openAIResponsesProvider({ model: 'gpt-5-mini', baseURL: `${server.url}/v1/`, apiKey: KEY, ...options });

const stream = (name: string, extra: Reply = {}): Reply => ({ body: fixture(`openai-responses/${name}`), ...extra });

const reasoning = (value: string): ProviderEvent => ({ type: 'reasoning_delta', text: value });

/** R27: token counts as message_end carries them (`input_tokens_details.cached_tokens` as cacheReadTokens). */
const tokens = (inputTokens: number, outputTokens: number, cacheReadTokens = 0): Usage => ({ inputTokens, outputTokens, cacheReadTokens });
const ended = (stopReason: StopReason, usage: Usage = tokens(61, 18), extra: object = {}): ProviderEvent => ({ type: 'message_end', stopReason, usage, ...extra });
const failedWith = (errorMessage: unknown, failure: FailureKind, usage?: Usage): ProviderEvent =>
  ({ type: 'message_end', stopReason: 'error', errorMessage, ...(usage !== undefined && { usage }), failure: { ...failure, message: errorMessage } }) as ProviderEvent;

/** P9: a piece of the arguments of the reply's call number `index` (its id and name on its first piece). */
const delta = (index: number, argumentsDelta: string, id?: string, name?: string): ProviderEvent => ({
  type: 'tool_call_delta',
  index,
  argumentsDelta,
  ...(id !== undefined && { id }),
  ...(name !== undefined && { name }),
});

/** The reasoning item of reasoning-tool-call.sse, as its response.output_item.done carried it (P10). */
const reasoningItem = {
  id: 'rs_0b1c2d3e4f5a6b7c80000001',
  type: 'reasoning',
  encrypted_content: 'gAAAAABpRXRvb2xMb29wUmVhc29uaW5nT25lX2VuY3J5cHRlZF9jb250ZW50X2Zvcl90aGVfdGVzdHNfMDAwMQ==',
  summary: [{ type: 'summary_text', text: '**Checking the weather**\n\nThe user wants Paris; call get_weather.' }],
};

/** An HTTP error's text: `HTTP 401: …`, or with the request named (`HTTP 401 from POST http://…/responses: …`). */
const httpError = (status: number, message: string) => new RegExp(`^HTTP ${status}( from POST \\S+/v1/responses)?: ${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);

// P14, P15: streams in the exact wire format (each event named by its `event:` line), replayed by a server on loopback
describe('openAIResponsesProvider: streams in the wire format', () => {
  const cases: [string, string, ProviderEvent[], Reply?][] = [
    ['P14: response.output_text.delta is text_delta; response.completed is message_end stop with the usage', 'text.sse', [start, text('Hello'), text('! 现在是'), text('北京时间'), text('中午 🕛。'), ended('stop')]],
    [
      "P14: each function_call_arguments.delta is a tool_call_delta, the first with the call's id and name (P9); output_item.done of the function_call is its tool_call; completed with calls is toolUse",
      'tool-call.sse',
      [
        start,
        delta(0, '{"', 'call_Wx81kQ2pL0cMv3rN', 'get_weather'),
        ...['city', '":"', '巴黎', '","unit', '":"celsius"}'].map((piece) => delta(0, piece)),
        call('call_Wx81kQ2pL0cMv3rN', 'get_weather', { city: '巴黎', unit: 'celsius' }),
        ended('toolUse'),
      ],
    ],
    [
      'P14: each call goes out at its item\'s done, before the next call and the text after the calls; cached_tokens is cacheReadTokens (R27)',
      'calls-then-text.sse',
      [
        start,
        text('Checking'),
        text(' both.'),
        delta(0, '{"ci', 'call_Paris0000000000001', 'get_weather'),
        delta(0, 'ty": "Pa'),
        delta(0, 'ris"}'),
        call('call_Paris0000000000001', 'get_weather', { city: 'Paris' }),
        delta(1, '{"ci', 'call_Tokyo000000000002', 'get_weather'),
        delta(1, 'ty": "To'),
        delta(1, 'kyo"}'),
        call('call_Tokyo000000000002', 'get_weather', { city: 'Tokyo' }),
        text(' One'),
        text(' moment'),
        text(' please.'),
        ended('toolUse', tokens(61, 40, 32)),
      ],
    ],
    [
      'P14, P10: reasoning_summary_text.delta is reasoning_delta; the reasoning item travels as message_end.reasoning',
      'reasoning-tool-call.sse',
      [
        start,
        reasoning('**Checking the weather**\n\n'),
        reasoning('The user wants Paris;'),
        reasoning(' call get_weather.'),
        delta(0, '{"city":"Paris",', 'call_Reason00000000001', 'get_weather'),
        delta(0, '"unit":"celsius"}'),
        call('call_Reason00000000001', 'get_weather', { city: 'Paris', unit: 'celsius' }),
        ended('toolUse', tokens(2006, 300, 1024), { reasoning: [reasoningItem] }),
      ],
    ],
    [
      'P15, P6: response.incomplete (max_output_tokens) inside a call is length: the whole call goes out, the cut one is dropped',
      'max-output-tokens-in-call.sse',
      [
        start,
        text('Checking both.'),
        delta(0, '{"city":', 'call_Paris0000000000001', 'get_weather'),
        delta(0, ' "Paris"}'),
        call('call_Paris0000000000001', 'get_weather', { city: 'Paris' }),
        delta(1, '{"city":', 'call_Tokyo000000000002', 'get_weather'),
        delta(1, ' "To'),
        ended('length', tokens(61, 32)),
      ],
    ],
    ['P15, P6: response.incomplete (max_output_tokens) inside the text is length', 'max-output-tokens.sse', [start, text('This answer is cut'), text('  off at the tok'), ended('length', tokens(61, 16))]],
    ['P15, P7: a refusal ends the reply with error, its deltas joined as the message', 'refusal.sse', [start, failedWith("I'm sorry, I can't help with that.", { kind: 'refusal' }, tokens(61, 9))]],
    [
      "P15: response.failed ends the reply with error and the server's message",
      'response-failed.sse',
      [start, text('Partial'), failed('response failed: server_error: The server had an error while processing your request. Sorry about that!', { kind: 'http', status: 500 })],
    ],
    [
      "P15: an error event ends the reply with error and the server's message",
      'error-event.sse',
      [
        start,
        text('Partial'),
        failed('error in the stream: rate_limit_exceeded: Rate limit reached for gpt-5-mini in organization org-test on tokens per min (TPM). Please try again in 1.2s.', { kind: 'http', status: 429 }),
      ],
    ],
    ['P4: a stream cut before response.completed ends with error', 'cut-off.sse', [start, text('Before'), text(' the cut'), failed(expect.stringMatching(/^the stream broke off: terminated/), { kind: 'network' })], { then: 'destroy' }],
  ];

  // every row has four values: jest reads a callback with more parameters than the row as one that takes `done`
  const rows = cases.map(([rule, name, expected, extra]): [string, string, ProviderEvent[], Reply] => [rule, name, expected, extra ?? {}]);

  it.each(rows)('%s (%s, sent at once)', async (_rule, name, expected, extra) => {
    server.reply(stream(name, extra));
    expect(await collect(provider()(question))).toEqual(expected);
  });

  it.each(rows)('%s (%s, sent in 1-byte pieces)', async (_rule, name, expected, extra) => {
    server.reply(stream(name, { chunkSize: 1, between: nextTurn, ...extra }));
    expect(await collect(provider()(question))).toEqual(expected);
  });

  it('P15: a stream that ends cleanly without response.completed ends with error', async () => {
    server.reply({ body: splitAfterEvents(fixture('openai-responses/text.sse'), 6)[0] });
    expect(await collect(provider()(question))).toEqual([
      start,
      text('Hello'),
      text('! 现在是'),
      failed('the stream ended before the reply was complete (no response.completed)', { kind: 'protocol' }),
    ]);
  });
});

// P14, R3: the point of the Responses API — a call's tool starts at the call's last byte
describe('openAIResponsesProvider in the loop', () => {
  it("P14, R3: a call's tool starts at its item's done, while the text after the calls still streams", async () => {
    const { opened, open } = gate();
    const fallback = setTimeout(open, 3000); // a tool that never starts fails the expectations below, not by a timeout
    // the head ends with Paris's response.output_item.done; the tail (Tokyo, the text after) waits for the gate
    const [head, tail] = splitAfterEvents(fixture('openai-responses/calls-then-text.sse'), 15);
    server.reply({ body: [head, tail], between: () => opened }, stream('text.sse'));
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
    const seen = events.map((event) =>
      event.type === 'tool_start' ? `start ${String(event.call.input.city)}` : event.type === 'text_delta' ? `text${event.text}` : event.type,
    );
    // Paris runs while Tokyo's arguments and the text after both calls still stream
    expect(seen.indexOf('start Paris')).toBeLessThan(seen.indexOf('start Tokyo'));
    expect(seen.indexOf('start Tokyo')).toBeLessThan(seen.indexOf('text One'));
    expect(events.at(-1)).toMatchObject({ type: 'loop_end', reason: 'stop' });
    // turn 2 sent the whole history: the text before and after the calls, both calls, both results
    expect(server.requests[1]!.json.input).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: 'Checking both. One moment please.' },
      { type: 'function_call', call_id: 'call_Paris0000000000001', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call', call_id: 'call_Tokyo000000000002', name: 'get_weather', arguments: '{"city":"Tokyo"}' },
      { type: 'function_call_output', call_id: 'call_Paris0000000000001', output: 'Paris: 18°C' },
      { type: 'function_call_output', call_id: 'call_Tokyo000000000002', output: 'Tokyo: 18°C' },
    ]);
  });

  it('P10, P13: the reasoning item goes back unchanged in the next request, before the call it led to; never a previous_response_id', async () => {
    server.reply(stream('reasoning-tool-call.sse'), stream('text.sse'));
    const registry = new ToolRegistry().register({ ...weatherSpec, handler: () => '18°C' });
    const events = await lastValueFrom(runEventedToolLoop({ provider: provider(), registry, messages: question.messages }).pipe(toArray()));
    const turnEnd = events.find((event) => event.type === 'turn_end');
    expect(turnEnd?.type === 'turn_end' && turnEnd.assistant.reasoning).toEqual([reasoningItem]);
    const second = server.requests[1]!.json;
    expect(second).not.toHaveProperty('previous_response_id');
    expect(second).toMatchObject({ store: false, stream: true, include: ['reasoning.encrypted_content'] });
    expect(second.input).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      reasoningItem,
      { type: 'function_call', call_id: 'call_Reason00000000001', name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' },
      { type: 'function_call_output', call_id: 'call_Reason00000000001', output: '18°C' },
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'loop_end', reason: 'stop', usage: tokens(2067, 318, 1024) });
  });

  it('P6, P15: in the loop, the whole call runs and its result is kept; the loop ends with length', async () => {
    server.reply(stream('max-output-tokens-in-call.sse'));
    const cities: unknown[] = [];
    const registry = new ToolRegistry().register({ ...weatherSpec, input: { city: 'The city' }, handler: (input) => (cities.push(input.city), '18°C') });
    const events = await lastValueFrom(runEventedToolLoop({ provider: provider(), registry, messages: question.messages }).pipe(toArray()));
    const last = events.at(-1);
    expect(cities).toEqual(['Paris']);
    expect(last?.type === 'loop_end' && [last.reason, last.messages.slice(1)]).toEqual([
      'length',
      [
        {
          role: 'assistant',
          content: 'Checking both.',
          stopReason: 'length',
          toolCalls: [{ id: 'call_Paris0000000000001', name: 'get_weather', input: { city: 'Paris' } }],
        },
        { role: 'toolResult', toolCallId: 'call_Paris0000000000001', toolName: 'get_weather', content: '18°C', isError: false },
      ],
    ]);
  });
});

// P13: stateless requests in the Responses API's own format
describe('openAIResponsesProvider: the request', () => {
  it('P13: posts to {baseURL}/responses with store: false, stream: true, the system option as instructions, the whole history as input, the tools as function tools', async () => {
    server.reply(stream('text.sse'));
    await collect(provider({ system: 'You are terse.', headers: { 'x-trace-id': 'trace-1' } })({ messages: history, tools: [weatherSpec, timeSpec] }));
    const [request] = server.requests;
    expect(request!.method).toBe('POST');
    expect(request!.path).toBe('/v1/responses'); // the trailing slash of baseURL is dropped
    expect(request!.headers).toMatchObject({ authorization: `Bearer ${KEY}`, 'content-type': 'application/json', accept: 'text/event-stream', 'x-trace-id': 'trace-1' });
    expect(request!.json).toEqual({
      model: 'gpt-5-mini',
      instructions: 'You are terse.',
      input: [
        { role: 'user', content: 'Weather in Paris and Tokyo?' },
        { role: 'assistant', content: 'Checking both.' },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call', call_id: 'call_2', name: 'get_weather', arguments: '{"city":"Tokyo"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '18°C' },
        { type: 'function_call_output', call_id: 'call_2', output: 'error: timeout' },
        { role: 'assistant', content: 'Paris is 18°C; Tokyo failed.' },
        { role: 'user', content: 'And the time?' },
        { type: 'function_call', call_id: 'call_3', name: 'current_time', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_3', output: '2026-01-01T00:00:00Z' },
      ],
      tools: [
        {
          type: 'function',
          name: 'get_weather',
          description: 'The weather in a city',
          parameters: {
            type: 'object',
            properties: { city: { type: 'string', description: 'The city' }, unit: { type: 'string', description: 'celsius or fahrenheit' } },
            required: ['city', 'unit'],
          },
          strict: false,
        },
        {
          type: 'function',
          name: 'current_time',
          description: 'Returns the current time as an ISO 8601 string',
          parameters: { type: 'object', properties: {}, required: [] },
          strict: false,
        },
      ],
      include: ['reasoning.encrypted_content'],
      store: false,
      stream: true,
    });
    expect(request!.json).not.toHaveProperty('previous_response_id');
  });

  it('P13, R21: a SystemMessage of the history goes in place as a developer message', async () => {
    const messages: AgentMessage[] = [
      { role: 'system', content: 'Answer in French.' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Salut.', stopReason: 'stop' },
      { role: 'system', content: 'Now in German.' },
      { role: 'user', content: 'again' },
    ];
    server.reply(stream('text.sse'));
    await collect(provider({ system: 'You are terse.' })({ messages, tools: [] }));
    expect(server.requests[0]!.json).toMatchObject({
      instructions: 'You are terse.',
      input: [
        { role: 'developer', content: 'Answer in French.' },
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'Salut.' },
        { role: 'developer', content: 'Now in German.' },
        { role: 'user', content: 'again' },
      ],
    });
  });

  it("P13, P11: maxTokens as max_output_tokens, toolChoice, temperature, reasoningEffort as reasoning: { effort }", async () => {
    server.reply(stream('text.sse'));
    await collect(provider({ temperature: 0.2, maxTokens: 300, toolChoice: 'required', reasoningEffort: 'low' })(question));
    expect(server.requests[0]!.json).toEqual({
      model: 'gpt-5-mini',
      input: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [expect.objectContaining({ type: 'function', name: 'get_weather', strict: false })],
      tool_choice: 'required',
      temperature: 0.2,
      max_output_tokens: 300,
      reasoning: { effort: 'low' },
      include: ['reasoning.encrypted_content'],
      store: false,
      stream: true,
    });
  });

  it("P13, P11: toolChoice in the API's shape — 'auto', 'none', 'required' as they are, a tool's name as { type: 'function', name }", async () => {
    const choices = ['auto', 'none', 'required', 'get_weather'] as const;
    server.reply(...choices.map(() => stream('text.sse')));
    for (const toolChoice of choices) await collect(provider({ toolChoice })(question));
    expect(server.requests.map((request) => request.json.tool_choice)).toEqual(['auto', 'none', 'required', { type: 'function', name: 'get_weather' }]);
  });

  it('P13, P11: leaves out tool_choice without tools, the options not set, and include when it is empty', async () => {
    server.reply(stream('text.sse'));
    await collect(provider({ toolChoice: 'required', include: [] })({ messages: [{ role: 'user', content: 'hi' }], tools: [] }));
    expect(server.requests[0]!.json).toEqual({ model: 'gpt-5-mini', input: [{ role: 'user', content: 'hi' }], store: false, stream: true });
  });

  it('P13, P11: merges extraBody last and shallowly: its top-level keys replace', async () => {
    server.reply(stream('text.sse'));
    await collect(provider({ reasoningEffort: 'low', extraBody: { reasoning: { effort: 'minimal', summary: 'auto' }, parallel_tool_calls: false } })(question));
    expect(server.requests[0]!.json).toMatchObject({ reasoning: { effort: 'minimal', summary: 'auto' }, parallel_tool_calls: false, store: false });
  });

  it('P13, R24: sends an inputSchema tool and a zod tool with their JSON Schema as `parameters`, as it is', async () => {
    server.reply(stream('text.sse'));
    await collect(provider()({ messages: [{ role: 'user', content: 'hi' }], tools: [addSpec, forecastSpec] }));
    expect(server.requests[0]!.json.tools).toEqual([
      { type: 'function', name: 'add', description: 'Adds two numbers', parameters: addSchema, strict: false },
      { type: 'function', name: 'forecast', description: 'The forecast for a city', parameters: forecastSchema, strict: false },
    ]);
  });

  it('P10: sends back only Responses reasoning items (another API\'s blocks are not its own), and none that nothing follows', async () => {
    const messages: AgentMessage[] = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: '', stopReason: 'length', reasoning: [reasoningItem] }, // cut while it reasoned
      { role: 'user', content: 'again' },
      { role: 'assistant', content: 'Hello.', stopReason: 'stop', reasoning: [{ type: 'thinking', thinking: 'hm', signature: 'c2ln' }, reasoningItem] },
      { role: 'user', content: 'and?' },
    ];
    server.reply(stream('text.sse'));
    await collect(provider()({ messages, tools: [] }));
    expect(server.requests[0]!.json.input).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'user', content: 'again' },
      reasoningItem,
      { role: 'assistant', content: 'Hello.' },
      { role: 'user', content: 'and?' },
    ]);
  });

  it('sends no authorization header without a key, and takes the key from OPENAI_API_KEY', async () => {
    const saved = process.env.OPENAI_API_KEY;
    try {
      delete process.env.OPENAI_API_KEY;
      server.reply(stream('text.sse'), stream('text.sse'));
      await collect(provider({ apiKey: undefined })(question));
      process.env.OPENAI_API_KEY = 'sk-from-the-environment';
      await collect(provider({ apiKey: undefined })(question));
    } finally {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
    }
    expect(server.requests[0]!.headers).not.toHaveProperty('authorization');
    expect(server.requests[1]!.headers.authorization).toBe('Bearer sk-from-the-environment');
  });

  it('P13: checks its own settings when the provider is made, naming the setting and the value', () => {
    const make = (options: Partial<OpenAIResponsesProviderOptions>) => () => openAIResponsesProvider({ model: 'm', ...options });
    expect(make({ store: true as never })).toThrow(
      new TypeError('openAIResponsesProvider: store must be false or left out: the provider sends the whole history every time (got true, a boolean)'),
    );
    expect(make({ include: 'reasoning.encrypted_content' as never })).toThrow(
      new TypeError('openAIResponsesProvider: include must be an array of strings (got "reasoning.encrypted_content", a string)'),
    );
    expect(make({ include: [1] as never })).toThrow(TypeError);
    expect(make({ stop: 'END' })).toThrow(new TypeError('openAIResponsesProvider: stop is not an option of the Responses API, which has no stop sequences (got "END", a string)'));
    expect(make({ reasoningEffort: 'extreme' as never })).toThrow(
      new RangeError(`openAIResponsesProvider: reasoningEffort must be 'low', 'medium' or 'high' (got "extreme", a string)`),
    );
    expect(make({ model: '' })).toThrow(TypeError);
    expect(make({ maxTokens: 0 })).toThrow(RangeError);
    expect(make({ maxRetries: -1 })).toThrow(RangeError);
    expect(make({ store: false, include: [] })).not.toThrow();
  });
});

// P15: HTTP errors, retries and the idle timeout as for Chat Completions (the shared transport)
describe('openAIResponsesProvider: errors, retries, idle timeout', () => {
  it('P15, P4: retries a 429 with retry-after: 0, then streams the answer with the same body', async () => {
    server.reply({ status: 429, headers: { 'retry-after': '0' }, body: fixture('openai/error-429.json') }, stream('text.sse'));
    expect((await collect(provider()(question))).at(-1)).toEqual(ended('stop'));
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]!.body).toBe(server.requests[0]!.body);
  });

  it('P15, P4: retries 5xx, and gives up after maxRetries with the status and the message', async () => {
    const unavailable: Reply = { status: 503, headers: { 'retry-after': '0' }, body: '{"error":{"message":"Service Unavailable"}}' };
    server.reply(unavailable, unavailable);
    expect(await collect(provider({ maxRetries: 1 })(question))).toEqual([start, failed(expect.stringMatching(httpError(503, 'Service Unavailable')), { kind: 'http', status: 503, retryAfterMs: 0 })]);
    expect(server.requests).toHaveLength(2);
  });

  it("P15, P4: does not retry a 401; names the status and the API's message, never the key", async () => {
    server.reply((request) => ({
      status: 401,
      body: JSON.stringify({ error: { message: `Incorrect API key provided: ${String(request.headers.authorization).slice(7)}`, type: 'invalid_request_error', code: 'invalid_api_key' } }),
    }));
    const events = await collect(provider()(question));
    expect(events).toEqual([start, failed(expect.stringMatching(httpError(401, 'Incorrect API key provided: [redacted]')), { kind: 'http', status: 401 })]);
    expect(JSON.stringify(events)).not.toContain(KEY);
    expect(server.requests).toHaveLength(1);
  });

  it('P15, P4: never shows the key when the stream echoes it', async () => {
    server.reply((request) => ({
      body: `event: error\ndata: ${JSON.stringify({ type: 'error', code: 'invalid_api_key', message: `bad key ${String(request.headers.authorization).slice(7)}`, param: null, sequence_number: 0 })}\n\n`,
    }));
    const events = await collect(provider()(question));
    expect(events).toEqual([start, failed('error in the stream: invalid_api_key: bad key [redacted]', { kind: 'protocol' })]);
  });

  it('P15, P4: a network failure names the address', async () => {
    const port = await closedPort();
    const events = await collect(openAIResponsesProvider({ model: 'm', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 })(question));
    expect(events).toEqual([start, failed(expect.stringContaining(`http://127.0.0.1:${port}/v1/responses`), { kind: 'network' })]);
  });

  it('P15, P12: a stream that stops sending ends after idleTimeoutMs with "no data for N ms"', async () => {
    server.reply({ body: splitAfterEvents(fixture('openai-responses/text.sse'), 6)[0], then: 'hang' });
    expect(await collect(provider({ idleTimeoutMs: 60 })(question))).toEqual([start, text('Hello'), text('! 现在是'), failed('no data for 60 ms', { kind: 'timeout' })]);
  });

  it('P15: a JSON reply where a stream was expected is an error', async () => {
    server.reply({ headers: { 'content-type': 'application/json' }, body: '{"error":{"message":"streaming is not supported"}}' });
    expect(await collect(provider()(question))).toEqual([start, failed(expect.stringMatching(/json/i), { kind: 'protocol' })]); // named by its content type
  });

  it('P1: sends nothing before subscribe, one request per subscription; unsubscribing closes the connection', async () => {
    server.reply(stream('text.sse'), { body: splitAfterEvents(fixture('openai-responses/text.sse'), 6)[0], then: 'hang' });
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
    expect(seen).toEqual([start, text('Hello')]);
  });
});
