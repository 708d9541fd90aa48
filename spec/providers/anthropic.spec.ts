import type { AgentMessage, ProviderEvent, StopReason, Usage } from '../../src/index.js';
import { anthropicProvider } from '../../src/index.js';
import type { AnthropicProviderOptions } from '../../src/index.js';
import { addSchema, addSpec, call, failed, forecastSchema, forecastSpec, history, question, start, text, timeSpec, weatherSpec } from './conversation';
import { LoopbackServer, Reply, collect, fixture, gate, nextTurn, splitAfterEvents } from './loopback-server';

const KEY = 'sk-ant-api03-test-0123456789-SECRET';

let server: LoopbackServer;
beforeAll(async () => {
  server = await LoopbackServer.start();
});
afterAll(() => server.stop());
beforeEach(() => server.reset());

const provider = (options: Partial<AnthropicProviderOptions> = {}) =>
  anthropicProvider({ model: 'claude-sonnet-4-5', baseURL: `${server.url}/`, apiKey: KEY, ...options });

const stream = (name: string, extra: Reply = {}): Reply => ({ body: fixture(`anthropic/${name}`), ...extra });

/** R27: what the fixtures report — message_start's input and cache counts, message_delta's (cumulative) output count. */
const usage: Usage = { inputTokens: 412, outputTokens: 42, cacheReadTokens: 0, cacheWriteTokens: 0 };
/** `message_end` as the Anthropic fixtures end: with their usage (R27), and `extra` (reasoning, P10). */
const end = (stopReason: StopReason, extra: { usage?: Usage; reasoning?: unknown[] } = {}): ProviderEvent => ({ type: 'message_end', stopReason, usage, ...extra });
/** P9: a chunk of the arguments of the reply's call number `index`; its first chunk names the call. */
const args = (index: number, argumentsDelta: string, first?: { id: string; name: string }): ProviderEvent => ({ type: 'tool_call_delta', index, ...first, argumentsDelta });
/** P10 */
const thought = (value: string): ProviderEvent => ({ type: 'reasoning_delta', text: value });

// P5: recorded streams replayed in the exact wire format by a server on loopback; P3: how they read
describe('anthropicProvider: recorded streams', () => {
  // R27 gave every end its usage, P9 every tool_use its argument deltas, P10 the thinking block of unknown-events.sse its events
  const cases: [string, ProviderEvent[], Reply][] = [
    ['text.sse', [start, text('Hello'), text('! 现在是'), text('北京时间'), text('中午 🕛。'), end('stop')], {}],
    [
      'tool-use-split.sse', // a text block, then a tool_use block whose input comes in 6 input_json_delta pieces
      [
        start,
        text("I'll check the weather."),
        args(0, '', { id: 'toolu_01WeatherParis00000001', name: 'get_weather' }), // call 0, though content block 1
        args(0, '{"city'),
        args(0, '": "巴'),
        args(0, '黎", "u'),
        args(0, 'nit": "cel'),
        args(0, 'sius"}'),
        call('toolu_01WeatherParis00000001', 'get_weather', { city: '巴黎', unit: 'celsius' }),
        end('toolUse'),
      ],
      {},
    ],
    [
      'two-tool-uses.sse',
      [
        start,
        args(0, '', { id: 'toolu_01Paris000000000000001', name: 'get_weather' }),
        args(0, '{"city": "Paris"}'),
        call('toolu_01Paris000000000000001', 'get_weather', { city: 'Paris' }),
        args(1, '{"city": ', { id: 'toolu_01Tokyo000000000000002', name: 'get_weather' }),
        args(1, '"Tokyo"}'),
        call('toolu_01Tokyo000000000000002', 'get_weather', { city: 'Tokyo' }),
        end('toolUse'),
      ],
      {},
    ],
    [
      'ping-no-arg-tool.sse', // pings between deltas; the tool's only partial_json is ""
      [
        start,
        text('Let me'),
        text(' look.'),
        args(0, '', { id: 'toolu_01CurrentTime0000000001', name: 'current_time' }),
        call('toolu_01CurrentTime0000000001', 'current_time', {}),
        end('toolUse'),
      ],
      {},
    ],
    ['max-tokens.sse', [start, text('This answer is cut'), text(' off at the tok'), end('length')], {}],
    [
      'unknown-events.sse', // a future event type is skipped; the thinking block is reasoning (P10)
      [
        start,
        thought('The user wants a greeting.'),
        text('Hi!'),
        end('stop', {
          reasoning: [{ type: 'thinking', thinking: 'The user wants a greeting.', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds' }],
        }),
      ],
      {},
    ],
    ['stream-error.sse', [start, text('Partial'), failed('error in the stream: overloaded_error: Overloaded')], {}],
    [
      'invalid-arguments.sse',
      [
        start,
        args(0, '{"city": ', { id: 'toolu_01BadArgs00000000000001', name: 'get_weather' }),
        args(0, '"Par'),
        failed(expect.stringMatching(/^invalid JSON in the arguments of tool call get_weather \(toolu_01BadArgs00000000000001\): /)),
      ],
      {},
    ],
    ['cut-off.sse', [start, text('Before the cut'), failed(expect.stringMatching(/^the stream broke off: terminated/))], { then: 'destroy' }],
  ];

  it.each(cases)('%s, sent at once', async (name, expected, extra) => {
    server.reply(stream(name, extra));
    expect(await collect(provider()(question))).toEqual(expected);
  });

  it.each(cases)('%s, sent in 5-byte pieces', async (name, expected, extra) => {
    server.reply(stream(name, { chunkSize: 5, between: nextTurn, ...extra }));
    expect(await collect(provider()(question))).toEqual(expected);
  });
});

// P2: the history and the tools in the API's own format
describe('anthropicProvider: the request', () => {
  it('posts the history, the system prompt and the tools in the Messages format', async () => {
    server.reply(stream('text.sse'));
    await collect(provider({ system: 'You are terse.', headers: { 'anthropic-beta': 'test-beta' } })({ messages: history, tools: [weatherSpec, timeSpec] }));
    const [request] = server.requests;
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/v1/messages');
    expect(request.headers).toMatchObject({
      'x-api-key': KEY,
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'test-beta',
      'content-type': 'application/json',
      accept: 'text/event-stream',
    });
    expect(request.headers).not.toHaveProperty('authorization');
    expect(request.json).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 4096,
      system: 'You are terse.',
      messages: [
        { role: 'user', content: 'Weather in Paris and Tokyo?' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking both.' },
            { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'call_2', name: 'get_weather', input: { city: 'Tokyo' } },
          ],
        },
        {
          role: 'user', // both results of the turn in one user message
          content: [
            { type: 'tool_result', tool_use_id: 'call_1', content: '18°C', is_error: false },
            { type: 'tool_result', tool_use_id: 'call_2', content: 'error: timeout', is_error: true },
          ],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'Paris is 18°C; Tokyo failed.' }] },
        { role: 'user', content: 'And the time?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'call_3', name: 'current_time', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_3', content: '2026-01-01T00:00:00Z', is_error: false }] },
      ],
      tools: [
        {
          name: 'get_weather',
          description: 'The weather in a city',
          input_schema: {
            type: 'object',
            properties: {
              city: { type: 'string', description: 'The city' },
              unit: { type: 'string', description: 'celsius or fahrenheit' },
            },
            required: ['city', 'unit'],
          },
        },
        {
          name: 'current_time',
          description: 'Returns the current time as an ISO 8601 string',
          input_schema: { type: 'object', properties: {}, required: [] },
        },
      ],
      stream: true,
    });
  });

  it('R21: joins the system option and the history\'s system messages, in order, with a blank line, into `system`', async () => {
    const messages: AgentMessage[] = [
      { role: 'system', content: 'Answer in French.' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Salut.', stopReason: 'stop' },
      { role: 'system', content: 'Now in German.' },
      { role: 'system', content: '' }, // nothing to join: no stray blank line
      { role: 'user', content: 'again' },
    ];
    server.reply(stream('text.sse'), stream('text.sse'), stream('text.sse'));
    await collect(provider({ system: 'You are terse.' })({ messages, tools: [] }));
    await collect(provider()({ messages, tools: [] }));
    await collect(provider()({ messages: [{ role: 'system', content: '' }, { role: 'user', content: 'hi' }], tools: [] }));
    const wire = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'text', text: 'Salut.' }] },
      { role: 'user', content: 'again' },
    ];
    expect(server.requests[0].json).toMatchObject({ system: 'You are terse.\n\nAnswer in French.\n\nNow in German.', messages: wire });
    expect(server.requests[1].json).toMatchObject({ system: 'Answer in French.\n\nNow in German.', messages: wire });
    expect(server.requests[2].json).not.toHaveProperty('system');
  });

  it('R24: sends an inputSchema tool and a zod tool with their JSON Schema as `input_schema`, as it is', async () => {
    server.reply(stream('text.sse'));
    await collect(provider()({ messages: [{ role: 'user', content: 'hi' }], tools: [weatherSpec, addSpec, forecastSpec] }));
    const tools = (server.requests[0].json as { tools: { name: string; input_schema: unknown }[] }).tools;
    expect(tools.map((tool) => [tool.name, tool.input_schema])).toEqual([
      ['get_weather', { type: 'object', properties: { city: { type: 'string', description: 'The city' }, unit: { type: 'string', description: 'celsius or fahrenheit' } }, required: ['city', 'unit'] }],
      ['add', addSchema],
      ['forecast', forecastSchema],
    ]);
    expect(tools[1]).toEqual({ name: 'add', description: 'Adds two numbers', input_schema: addSchema });
  });

  it('leaves out an assistant message with nothing in it, keeping user and assistant alternating', async () => {
    const messages: AgentMessage[] = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: '', stopReason: 'error', errorMessage: 'HTTP 529: Overloaded' },
      { role: 'user', content: 'again' },
    ];
    server.reply(stream('text.sse'));
    await collect(provider({ maxTokens: 256 })({ messages, tools: [] }));
    expect(server.requests[0].json).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 256,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'text', text: 'again' }] }],
      stream: true,
    });
  });

  it('sends no x-api-key without a key, and takes the key from ANTHROPIC_API_KEY', async () => {
    const saved = process.env.ANTHROPIC_API_KEY;
    try {
      delete process.env.ANTHROPIC_API_KEY;
      server.reply(stream('text.sse'), stream('text.sse'));
      await collect(provider({ apiKey: undefined })(question));
      process.env.ANTHROPIC_API_KEY = 'sk-ant-from-the-environment';
      await collect(provider({ apiKey: undefined })(question));
    } finally {
      if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = saved;
    }
    expect(server.requests[0].headers).not.toHaveProperty('x-api-key');
    expect(server.requests[1].headers['x-api-key']).toBe('sk-ant-from-the-environment');
  });

  it('checks its options', () => {
    expect(() => anthropicProvider({ model: 'm', maxTokens: 0 })).toThrow(RangeError);
    expect(() => anthropicProvider({ model: 'm', maxRetries: -1 })).toThrow(RangeError);
    expect(() => anthropicProvider({ model: undefined as unknown as string })).toThrow(TypeError);
  });
});

// P4: errors are messages, retries only before anything was emitted, no key in any text
describe('anthropicProvider: errors and retries', () => {
  it('retries a 529 Overloaded with retry-after: 0, then streams the answer', async () => {
    server.reply({ status: 529, headers: { 'retry-after': '0' }, body: fixture('anthropic/error-529.json') }, stream('text.sse'));
    expect((await collect(provider()(question))).at(-1)).toEqual(end('stop'));
    expect(server.requests).toHaveLength(2);
  });

  it('retries a 429 with retry-after: 0 at most maxRetries times', async () => {
    const limited: Reply = { status: 429, headers: { 'retry-after': '0' }, body: '{"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your rate limit"}}' };
    server.reply(limited, limited);
    expect(await collect(provider({ maxRetries: 1 })(question))).toEqual([
      start,
      failed('HTTP 429: Number of requests has exceeded your rate limit'),
    ]);
    expect(server.requests).toHaveLength(2);
  });

  it('does not retry a 401, and names the status and the API\'s message', async () => {
    server.reply({ status: 401, body: fixture('anthropic/error-401.json') });
    expect(await collect(provider()(question))).toEqual([start, failed('HTTP 401: invalid x-api-key')]);
    expect(server.requests).toHaveLength(1);
  });

  it('never shows the API key, even when the server echoes it', async () => {
    server.reply((request) => ({
      status: 400,
      body: JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: `bad key: ${String(request.headers['x-api-key'])}` } }),
    }));
    const events = await collect(provider()(question));
    expect(events).toEqual([start, failed('HTTP 400: bad key: [redacted]')]);
    expect(JSON.stringify(events)).not.toContain(KEY);
  });
});

// P1: one request per subscription, none before it; unsubscribing aborts it
describe('anthropicProvider: cold, live and cancellable', () => {
  it('sends nothing before subscribe, and one request per subscription', async () => {
    server.reply(stream('text.sse'), stream('text.sse'));
    const events = provider()(question);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(server.requests).toHaveLength(0);
    await collect(events);
    await collect(events);
    expect(server.requests).toHaveLength(2);
  });

  it('emits text as its bytes arrive (P3)', async () => {
    const { opened, open } = gate();
    server.reply({ body: splitAfterEvents(fixture('anthropic/text.sse'), 4), between: () => opened });
    const seen: { event: ProviderEvent; restSent: boolean }[] = [];
    await new Promise<void>((resolve) =>
      provider()(question).subscribe({
        next: (event) => {
          seen.push({ event, restSent: server.requests[0].progress.done });
          if (event.type === 'text_delta') open();
        },
        complete: resolve,
      }),
    );
    expect(seen.slice(0, 2)).toEqual([
      { event: start, restSent: false },
      { event: text('Hello'), restSent: false },
    ]);
    expect(seen.at(-1)).toEqual({ event: end('stop'), restSent: true });
  });

  it('closes the connection when unsubscribed mid-stream', async () => {
    server.reply({ body: splitAfterEvents(fixture('anthropic/text.sse'), 4)[0], then: 'hang' });
    const seen: ProviderEvent[] = [];
    const subscription = provider()(question).subscribe((event) => {
      seen.push(event);
      if (event.type === 'text_delta') subscription.unsubscribe();
    });
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await server.requests[0].closed; // the server sees the socket close
    expect(seen).toEqual([start, text('Hello')]);
  });
});
