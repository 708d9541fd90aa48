import { lastValueFrom, toArray } from 'rxjs';
import type { AgentMessage, ProviderEvent, StopReason, Usage } from '../../src/index.js';
import { ToolRegistry, openAIChatProvider, runEventedToolLoop } from '../../src/index.js';
import type { OpenAIChatProviderOptions } from '../../src/index.js';
import type { FailureKind } from '../../src/providers/http/failure.js';
import { addSchema, addSpec, call, end, failed, forecastSchema, forecastSpec, history, question, start, text, timeSpec, weatherSpec } from './conversation';
import { LoopbackServer, Reply, closedPort, collect, fixture, gate, nextTurn, splitAfterEvents } from './loopback-server';

const KEY = 'sk-test-0123456789abcdefSECRET';

let server: LoopbackServer;
beforeAll(async () => {
  server = await LoopbackServer.start();
});
afterAll(() => server.stop());
beforeEach(() => server.reset());

const provider = (options: Partial<OpenAIChatProviderOptions> = {}) =>
  openAIChatProvider({ model: 'gpt-4o-mini', baseURL: `${server.url}/v1/`, apiKey: KEY, ...options });

const stream = (name: string, extra: Reply = {}): Reply => ({ body: fixture(`openai/${name}`), ...extra });

const reasoning = (value: string): ProviderEvent => ({ type: 'reasoning_delta', text: value });

/** R27: token counts as message_end carries them; the project's fixtures report 61 in, 18 out, 0 from the cache. */
const tokens = (inputTokens: number, outputTokens: number, cacheReadTokens?: number): Usage => ({
  inputTokens,
  outputTokens,
  ...(cacheReadTokens !== undefined && { cacheReadTokens }),
});
const ended = (stopReason: StopReason, usage: Usage = tokens(61, 18, 0)): ProviderEvent => ({ type: 'message_end', stopReason, usage });
const failedWith = (errorMessage: string, failure: FailureKind, usage: Usage = tokens(61, 18, 0)): ProviderEvent => ({
  type: 'message_end',
  stopReason: 'error',
  errorMessage,
  usage,
  failure: { ...failure, message: errorMessage },
});

/** P9: a piece of the arguments of the reply's call number `index` (its id and name on its first piece). */
const delta = (index: number, argumentsDelta: string, id?: string, name?: string): ProviderEvent => ({
  type: 'tool_call_delta',
  index,
  argumentsDelta,
  ...(id !== undefined && { id }),
  ...(name !== undefined && { name }),
});

// P5: recorded streams replayed in the exact wire format by a server on loopback; P3: how they read
describe('openAIChatProvider: recorded streams', () => {
  const cases: [string, ProviderEvent[], Reply?][] = [
    ['text.sse', [start, text('Hello'), text('! 现在是'), text('北京时间'), text('中午 🕛。'), ended('stop')]],
    [
      'tool-call-split.sse', // arguments in 6 pieces, then a usage-only chunk with `choices: []`
      [
        start,
        delta(0, '', 'call_Wx81kQ2pL0cMv3rN', 'get_weather'),
        ...['{"', 'city', '":"', '巴黎', '","unit', '":"celsius"}'].map((piece) => delta(0, piece)),
        call('call_Wx81kQ2pL0cMv3rN', 'get_weather', { city: '巴黎', unit: 'celsius' }),
        ended('toolUse'),
      ],
    ],
    [
      'two-tool-calls.sse', // P8: the first call goes out when the second starts
      [
        start,
        text('Checking both.'),
        delta(0, '', 'call_Paris0000000000001', 'get_weather'),
        delta(0, '{"ci'),
        delta(0, 'ty": "Pa'),
        delta(0, 'ris"}'),
        call('call_Paris0000000000001', 'get_weather', { city: 'Paris' }),
        delta(1, '', 'call_Tokyo000000000002', 'get_weather'),
        delta(1, '{"ci'),
        delta(1, 'ty": "To'),
        delta(1, 'kyo"}'),
        call('call_Tokyo000000000002', 'get_weather', { city: 'Tokyo' }),
        ended('toolUse'),
      ],
    ],
    [
      'tool-call-no-index.sse',
      [start, delta(0, '{"city":"Paris"}', 'call_noindex_1', 'get_weather'), call('call_noindex_1', 'get_weather', { city: 'Paris' }), end('toolUse')],
    ],
    ['comments.sse', [start, text('Hi'), text(' there'), ended('stop')]],
    ['crlf.sse', [start, text('Line'), text(' ends'), text(' are CRLF'), ended('stop')]],
    ['no-trailing-blank-line.sse', [start, text('No'), text(' blank'), text(' line'), ended('stop')]],
    ['length.sse', [start, text('This answer is cut'), text('  off at the tok'), ended('length')]],
    ['content-filter.sse', [start, text('I can'), failedWith('finish_reason content_filter: the content filter cut the reply', { kind: 'refusal' })]],
    [
      'stream-error.sse',
      [start, text('Partial'), failed('error in the stream: The server had an error while processing your request. Sorry about that!', { kind: 'http', status: 500 })],
    ],
    [
      'invalid-arguments.sse',
      [
        start,
        delta(0, '', 'call_bad_args_0001', 'get_weather'),
        delta(0, '{"city":'),
        delta(0, '"Par'),
        failed(expect.stringMatching(/^invalid JSON in the arguments of tool call get_weather \(call_bad_args_0001\): /), { kind: 'protocol' }),
      ],
    ],
    ['cut-off.sse', [start, text('Before the cut'), failed(expect.stringMatching(/^the stream broke off: terminated/), { kind: 'network' })], { then: 'destroy' }],
  ];

  // every row has three values: jest reads a callback with more parameters than the row as one that takes `done`
  const rows = cases.map(([name, expected, extra]): [string, ProviderEvent[], Reply] => [name, expected, extra ?? {}]);

  it.each(rows)('%s, sent at once', async (name, expected, extra) => {
    server.reply(stream(name, extra));
    expect(await collect(provider()(question))).toEqual(expected);
  });

  it.each(rows)('%s, sent in 7-byte pieces', async (name, expected, extra) => {
    server.reply(stream(name, { chunkSize: 7, between: nextTurn, ...extra }));
    expect(await collect(provider()(question))).toEqual(expected);
  });
});

// P6, P8, P9: calls as they stream — each piece of the arguments at once, each call as soon as it is whole
describe('openAIChatProvider: tool calls as they stream', () => {
  const cases: [string, string, ProviderEvent[]][] = [
    [
      'P6: a reply cut inside its second call ends with length, its text and the whole first call, no call for the cut one',
      'length-in-tool-call.sse',
      [
        start,
        text('Checking both.'),
        delta(0, '', 'call_Paris0000000000001', 'get_weather'),
        delta(0, '{"city":'),
        delta(0, ' "Paris"}'),
        call('call_Paris0000000000001', 'get_weather', { city: 'Paris' }),
        delta(1, '', 'call_Tokyo000000000002', 'get_weather'),
        delta(1, '{"city":'),
        delta(1, ' "To'),
        ended('length', tokens(61, 32, 0)),
      ],
    ],
    [
      'P6: a reply cut inside its only call ends with length, never a JSON error',
      'length-in-only-call.sse',
      [start, delta(0, '', 'call_cut_only_00001', 'get_weather'), delta(0, '{"ci'), ended('length', tokens(61, 5, 0))],
    ],
    [
      'P3, P6: a length finish after whole calls only is toolUse: no call was cut, the calls run',
      'length-after-whole-call.sse',
      [
        start,
        delta(0, '', 'call_whole_only_0001', 'get_weather'),
        delta(0, '{"city": "Oslo"}'),
        call('call_whole_only_0001', 'get_weather', { city: 'Oslo' }),
        ended('toolUse', tokens(61, 9, 0)),
      ],
    ],
    [
      "P9: each piece of a call's arguments is a tool_call_delta before its tool_call, its index counted from 0 whatever the server's",
      'tool-call-index-one.sse',
      [
        start,
        text('Let me read it.'),
        delta(0, '', 'toolu_01ReadNotes000000000001', 'read_file'),
        delta(0, '{"path": "no'),
        delta(0, 'tes.md"}'),
        call('toolu_01ReadNotes000000000001', 'read_file', { path: 'notes.md' }),
        end('toolUse'),
      ],
    ],
    [
      'P8: calls whose deltas interleave (index 0, 1, 0, 1) each go out whole, the first as soon as it is',
      'interleaved-calls.sse',
      [
        start,
        delta(0, '{"city":', 'call_inter_paris_0001', 'get_weather'),
        delta(1, '{"city":', 'call_inter_tokyo_0002', 'get_weather'),
        delta(0, ' "Paris", "unit": "celsius"}'),
        call('call_inter_paris_0001', 'get_weather', { city: 'Paris', unit: 'celsius' }),
        delta(1, ' "Tokyo", "note": "a } and a \\" in a string"}'),
        call('call_inter_tokyo_0002', 'get_weather', { city: 'Tokyo', note: 'a } and a " in a string' }),
        ended('toolUse', tokens(61, 40, 0)),
      ],
    ],
    [
      'P8: a delta for a call that already went out ends the reply with error, never a truncated call',
      'arguments-after-call.sse',
      [
        start,
        delta(0, '{"city": "Paris"}', 'call_late_paris_0001', 'get_weather'),
        call('call_late_paris_0001', 'get_weather', { city: 'Paris' }),
        delta(1, '{"city": "Tokyo"}', 'call_late_tokyo_0002', 'get_weather'),
        failed('tool call get_weather (call_late_paris_0001) got more arguments after it was complete: , "unit": "celsius"}', { kind: 'protocol' }),
      ],
    ],
  ];

  it.each(cases)('%s (%s, sent at once)', async (_rule, name, expected) => {
    server.reply(stream(name));
    expect(await collect(provider()(question))).toEqual(expected);
  });

  it.each(cases)('%s (%s, sent in 7-byte pieces)', async (_rule, name, expected) => {
    server.reply(stream(name, { chunkSize: 7, between: nextTurn }));
    expect(await collect(provider()(question))).toEqual(expected);
  });

  it('P6: in the loop, the whole call runs and its result is kept; the loop ends with length', async () => {
    server.reply(stream('length-in-tool-call.sse'));
    const cities: unknown[] = [];
    const registry = new ToolRegistry().register({
      ...weatherSpec,
      input: { city: 'The city' },
      handler: (input) => (cities.push(input.city), '18°C'),
    });
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

  it("P8, R3: the first call's tool starts while the second call still streams", async () => {
    const { opened, open } = gate();
    const fallback = setTimeout(open, 3000); // a tool that never starts fails the expectations below, not by a timeout
    const [head, tail] = splitAfterEvents(fixture('openai/two-tool-calls.sse'), 9); // the tail: Tokyo's last piece onwards
    server.reply({ body: [head, tail], between: () => opened }, stream('text.sse'));
    const started: { city: unknown; tailSent: boolean }[] = [];
    const registry = new ToolRegistry().register({
      ...weatherSpec,
      input: { city: 'The city' },
      handler: (input) => {
        started.push({ city: input.city, tailSent: server.requests[0].progress.done });
        open();
        return '18°C';
      },
    });
    const events = await lastValueFrom(runEventedToolLoop({ provider: provider(), registry, messages: question.messages }).pipe(toArray()));
    clearTimeout(fallback);
    expect(started).toEqual([
      { city: 'Paris', tailSent: false },
      { city: 'Tokyo', tailSent: true },
    ]);
    const seen = events.map((event) =>
      event.type === 'tool_start' ? `start ${event.call.input.city}` : event.type === 'tool_call_delta' ? `delta ${event.argumentsDelta}` : event.type,
    );
    expect(seen.indexOf('start Paris')).toBeLessThan(seen.indexOf('delta kyo"}'));
    expect(events.at(-1)).toMatchObject({ type: 'loop_end', reason: 'stop' });
  });
});

// P7, P10: what OpenAI-compatible servers send besides plain text
describe('openAIChatProvider: content parts, refusals, replies without finish_reason, reasoning', () => {
  const cases: [string, string, ProviderEvent[]][] = [
    [
      'P7: a refusal ends the reply with error, its deltas joined as the message',
      'refusal.sse',
      [start, failedWith("I'm sorry, I can't help with that.", { kind: 'refusal' }, tokens(61, 9, 0))],
    ],
    [
      'P7, P10: content given as an array of parts keeps its text parts; its thinking parts are reasoning',
      'content-parts.sse',
      [start, reasoning('Two and two'), reasoning(' make four.'), text('2 + 2'), text(' = 4'), ended('stop', tokens(10, 21))],
    ],
    [
      'P7: [DONE] without a finish_reason completes a reply that made calls, as toolUse',
      'no-finish-reason.sse',
      [
        start,
        delta(0, '', 'get_weather:0', 'get_weather'),
        delta(0, '{"city":"Paris"}'),
        call('get_weather:0', 'get_weather', { city: 'Paris' }),
        ended('toolUse', tokens(57, 17, 0)),
      ],
    ],
    ['P7: [DONE] without a finish_reason completes a reply of text, as stop', 'no-finish-reason-text.sse', [start, text('Bonjour'), text(' !'), end('stop')]],
    [
      'P10: reasoning_content is reasoning, never text',
      'reasoning-content.sse',
      [start, reasoning('The user'), reasoning(' greets me.'), text('Hello'), text('!'), ended('stop', tokens(13, 12, 0))],
    ],
    [
      'P10: reasoning (with a channel) is reasoning, never text',
      'reasoning-field.sse',
      [
        start,
        reasoning('Need the'),
        reasoning(' weather tool.'),
        delta(0, '{"city":"Paris"}', 'fc_0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9', 'get_weather'),
        call('fc_0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9', 'get_weather', { city: 'Paris' }),
        ended('toolUse', tokens(304, 49)),
      ],
    ],
  ];

  it.each(cases)('%s (%s, sent at once)', async (_rule, name, expected) => {
    server.reply(stream(name));
    expect(await collect(provider()(question))).toEqual(expected);
  });

  it.each(cases)('%s (%s, sent in 7-byte pieces)', async (_rule, name, expected) => {
    server.reply(stream(name, { chunkSize: 7, between: nextTurn }));
    expect(await collect(provider()(question))).toEqual(expected);
  });

  it('P7: a stream without finish_reason that ends without [DONE] is still cut', async () => {
    server.reply({ body: splitAfterEvents(fixture('openai/no-finish-reason-text.sse'), 2)[0] });
    expect(await collect(provider()(question))).toEqual([
      start,
      text('Bonjour'),
      text(' !'),
      failed('the stream ended before the reply was complete (no finish_reason)', { kind: 'protocol' }),
    ]);
  });

  it('P10: in the loop, the reasoning stays out of the assistant message', async () => {
    server.reply(stream('reasoning-content.sse'));
    const registry = new ToolRegistry();
    const events = await lastValueFrom(runEventedToolLoop({ provider: provider(), registry, messages: question.messages }).pipe(toArray()));
    expect(events.filter((event) => event.type === 'reasoning_delta')).toHaveLength(2);
    expect(events.at(-1)).toMatchObject({ type: 'loop_end', reason: 'stop', assistant: { role: 'assistant', content: 'Hello!', stopReason: 'stop' } });
  });
});

// R27: the usage the server reports, and when message_end may come
describe('openAIChatProvider: usage', () => {
  it('R27: inputTokens = prompt_tokens, outputTokens = completion_tokens, cacheReadTokens = prompt_tokens_details.cached_tokens', async () => {
    server.reply(stream('usage-cached.sse'));
    expect(await collect(provider()(question))).toEqual([start, text('Cached.'), ended('stop', tokens(2006, 300, 1024))]);
  });

  it('R27: message_end waits for the usage chunk that follows the finish_reason', async () => {
    const { opened, open } = gate();
    const [head, tail] = splitAfterEvents(fixture('openai/text.sse'), 6); // the head ends with the finish_reason chunk
    server.reply({ body: [head, tail], between: () => opened });
    const seen: ProviderEvent[] = [];
    const done = new Promise<void>((resolve) => provider()(question).subscribe({ next: (event) => seen.push(event), complete: resolve }));
    await waitFor(() => seen.length === 5); // start and the four text deltas
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen.map((event) => event.type)).not.toContain('message_end');
    open();
    await done;
    expect(seen.at(-1)).toEqual(ended('stop'));
  });

  it('R27: a usage chunk after the finish_reason ends the reply, even when the server then sends no [DONE] and keeps the response open', async () => {
    server.reply({ body: splitAfterEvents(fixture('openai/text.sse'), 7)[0], then: 'hang' });
    expect((await collect(provider()(question))).at(-1)).toEqual(ended('stop'));
  });

  it("R27: usage in the finish_reason's own chunk ends the reply there", async () => {
    server.reply({ body: splitAfterEvents(fixture('openai/content-parts.sse'), 4)[0], then: 'hang' });
    expect((await collect(provider()(question))).at(-1)).toEqual(ended('stop', tokens(10, 21)));
  });

  it('R27: a server that sends no usage: message_end at [DONE], without usage, not delayed', async () => {
    server.reply(stream('tool-call-no-index.sse', { then: 'hang' })); // the response stays open: only [DONE] can end the reply
    expect((await collect(provider()(question))).at(-1)).toEqual(end('toolUse'));
  });

  it('R27: the loop sums the usage of each call', async () => {
    server.reply(stream('tool-call-split.sse'), stream('usage-cached.sse'));
    const registry = new ToolRegistry().register({ ...weatherSpec, handler: () => '18°C' });
    const events = await lastValueFrom(runEventedToolLoop({ provider: provider(), registry, messages: question.messages }).pipe(toArray()));
    expect(events.filter((event) => event.type === 'turn_end').map((event) => event.type === 'turn_end' && event.usage)).toEqual([
      tokens(61, 18, 0),
      tokens(2067, 318, 1024),
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'loop_end', reason: 'stop', usage: tokens(2067, 318, 1024) });
  });
});

// P2: the history and the tools in the API's own format
describe('openAIChatProvider: the request', () => {
  it('posts the history, the system prompt and the tools in the Chat Completions format', async () => {
    server.reply(stream('text.sse'));
    await collect(
      provider({ system: 'You are terse.', headers: { 'x-trace-id': 'trace-1' } })({ messages: history, tools: [weatherSpec, timeSpec] }),
    );
    const [request] = server.requests;
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/v1/chat/completions'); // the trailing slash of baseURL is dropped
    expect(request.headers).toMatchObject({
      authorization: `Bearer ${KEY}`,
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'x-trace-id': 'trace-1',
    });
    expect(request.json).toEqual({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Weather in Paris and Tokyo?' },
        {
          role: 'assistant',
          content: 'Checking both.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Tokyo"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '18°C' },
        { role: 'tool', tool_call_id: 'call_2', content: 'error: timeout' },
        { role: 'assistant', content: 'Paris is 18°C; Tokyo failed.' },
        { role: 'user', content: 'And the time?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_3', type: 'function', function: { name: 'current_time', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'call_3', content: '2026-01-01T00:00:00Z' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'The weather in a city',
            parameters: {
              type: 'object',
              properties: {
                city: { type: 'string', description: 'The city' },
                unit: { type: 'string', description: 'celsius or fahrenheit' },
              },
              required: ['city', 'unit'],
            },
          },
        },
        {
          type: 'function',
          function: {
            name: 'current_time',
            description: 'Returns the current time as an ISO 8601 string',
            parameters: { type: 'object', properties: {}, required: [] },
          },
        },
      ],
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('R21, P11: sends a SystemMessage of the history in place, as a system message after the system option', async () => {
    const messages: AgentMessage[] = [
      { role: 'system', content: 'Answer in French.' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Salut.', stopReason: 'stop' },
      { role: 'system', content: 'Now in German.' },
      { role: 'user', content: 'again' },
    ];
    server.reply(stream('text.sse'), stream('text.sse'));
    await collect(provider({ system: 'You are terse.' })({ messages, tools: [] }));
    await collect(provider()({ messages, tools: [] }));
    const wire = [
      { role: 'system', content: 'Answer in French.' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Salut.' },
      { role: 'system', content: 'Now in German.' },
      { role: 'user', content: 'again' },
    ];
    expect(server.requests[0].json).toMatchObject({ messages: [{ role: 'system', content: 'You are terse.' }, ...wire] });
    expect(server.requests[1].json).toMatchObject({ messages: wire });
  });

  it('P11: sends temperature, maxTokens as max_completion_tokens, toolChoice, stop as a list', async () => {
    server.reply(stream('text.sse'));
    await collect(provider({ temperature: 0.2, maxTokens: 300, toolChoice: 'required', stop: 'END' })(question));
    expect(server.requests[0].json).toEqual({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [expect.objectContaining({ type: 'function' })],
      tool_choice: 'required',
      temperature: 0.2,
      max_completion_tokens: 300,
      stop: ['END'],
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it("P11: toolChoice in the API's shape — 'auto', 'none', 'required' as they are, a tool's name as a named function", async () => {
    const choices = ['auto', 'none', 'required', 'get_weather'] as const;
    server.reply(...choices.map(() => stream('text.sse')));
    for (const toolChoice of choices) await collect(provider({ toolChoice })(question));
    expect(server.requests.map((request) => request.json.tool_choice)).toEqual([
      'auto',
      'none',
      'required',
      { type: 'function', function: { name: 'get_weather' } },
    ]);
  });

  it('P11: leaves out tool_choice when the call has no tools (the API refuses it without), and options that are not set', async () => {
    server.reply(stream('text.sse'));
    await collect(provider({ toolChoice: 'required' })({ messages: [{ role: 'user', content: 'hi' }], tools: [] }));
    expect(Object.keys(server.requests[0].json)).toEqual(['model', 'messages', 'stream', 'stream_options']);
  });

  it('P11: sends several stop strings as they are', async () => {
    server.reply(stream('text.sse'));
    await collect(provider({ stop: ['END', '\n\n'] })(question));
    expect(server.requests[0].json.stop).toEqual(['END', '\n\n']);
  });

  it('P11: merges extraBody last and shallowly — its top-level keys replace, max_tokens for a server that knows only that', async () => {
    server.reply(stream('text.sse'));
    const extraBody = { max_tokens: 50, temperature: 1, stream_options: { continuous_usage_stats: true }, top_k: 20 };
    await collect(provider({ temperature: 0, maxTokens: 300, extraBody })(question));
    expect(server.requests[0].json).toMatchObject({ max_completion_tokens: 300, ...extraBody });
    expect(server.requests[0].json.stream_options).toEqual({ continuous_usage_stats: true });
  });

  it('P10: sends reasoningEffort as reasoning_effort', async () => {
    server.reply(stream('text.sse'), stream('text.sse'));
    await collect(provider({ reasoningEffort: 'low' })(question));
    await collect(provider({ reasoningEffort: 'high', extraBody: { reasoning_effort: 'minimal' } })(question));
    expect(server.requests.map((request) => request.json.reasoning_effort)).toEqual(['low', 'minimal']);
  });

  it('P10, P11: checks the new options when the provider is made', () => {
    expect(() => openAIChatProvider({ model: 'm', reasoningEffort: 'extreme' as never })).toThrow(
      new RangeError(`openAIChatProvider: reasoningEffort must be 'low', 'medium' or 'high' (got "extreme", a string)`),
    );
    expect(() => openAIChatProvider({ model: 'm', reasoningEffort: 1 as never })).toThrow(RangeError);
    expect(() => openAIChatProvider({ model: 'm', temperature: -1 })).toThrow(RangeError);
    expect(() => openAIChatProvider({ model: 'm', maxTokens: 0 })).toThrow(RangeError);
    expect(() => openAIChatProvider({ model: 'm', toolChoice: '' })).toThrow(TypeError);
    expect(() => openAIChatProvider({ model: 'm', stop: [1] as never })).toThrow(TypeError);
    expect(() => openAIChatProvider({ model: 'm', extraBody: [] as never })).toThrow(TypeError);
  });

  it('R24: sends an inputSchema tool and a zod tool with their JSON Schema as `parameters`, as it is', async () => {
    server.reply(stream('text.sse'));
    await collect(provider()({ messages: [{ role: 'user', content: 'hi' }], tools: [weatherSpec, addSpec, forecastSpec] }));
    const tools = (server.requests[0].json as { tools: { function: { name: string; parameters: unknown } }[] }).tools;
    expect(tools.map((tool) => [tool.function.name, tool.function.parameters])).toEqual([
      ['get_weather', { type: 'object', properties: { city: { type: 'string', description: 'The city' }, unit: { type: 'string', description: 'celsius or fahrenheit' } }, required: ['city', 'unit'] }],
      ['add', addSchema],
      ['forecast', forecastSchema],
    ]);
    expect(tools[1]).toEqual({ type: 'function', function: { name: 'add', description: 'Adds two numbers', parameters: addSchema } });
  });

  it('leaves out `tools` when there are none', async () => {
    server.reply(stream('text.sse'));
    await collect(provider()({ messages: [{ role: 'user', content: 'hi' }], tools: [] }));
    expect(server.requests[0].json).not.toHaveProperty('tools');
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
    expect(server.requests[0].headers).not.toHaveProperty('authorization');
    expect(server.requests[1].headers.authorization).toBe('Bearer sk-from-the-environment');
  });

  it('uses a custom fetch', async () => {
    const urls: string[] = [];
    const fetch = (url: string, init: RequestInit) => {
      urls.push(url);
      return globalThis.fetch(url, init);
    };
    server.reply(stream('text.sse'));
    expect((await collect(provider({ fetch })(question))).at(-1)).toEqual(ended('stop'));
    expect(urls).toEqual([`${server.url}/v1/chat/completions`]);
  });

  it('checks its options', () => {
    expect(() => openAIChatProvider({ model: '' })).toThrow(TypeError);
    expect(() => openAIChatProvider({ model: 'm', maxRetries: -1 })).toThrow(RangeError);
    expect(() => openAIChatProvider({ model: 'm', maxRetries: 1.5 })).toThrow(RangeError);
  });

  it('left open (c): checks every setting when the provider is made, naming it and the value (headers: "abc" sends no headers named 0, 1, 2)', () => {
    const bad = (options: object) => () => openAIChatProvider({ model: 'm', ...options } as OpenAIChatProviderOptions);
    expect(bad({ headers: 'abc' })).toThrow(new TypeError('openAIChatProvider: headers must be a record of strings (got "abc", a string)'));
    expect(bad({ baseURL: 'api.openai.com/v1' })).toThrow(new TypeError('openAIChatProvider: baseURL must be an http or https URL (got "api.openai.com/v1", a string)'));
    expect(bad({ fetch: {} })).toThrow(new TypeError('openAIChatProvider: fetch must be a function (got {}, an object)'));
    expect(bad({ apiKey: { key: KEY } })).toThrow(new TypeError('openAIChatProvider: apiKey must be a string (got an object)'));
    expect(bad({ system: 3 })).toThrow(new TypeError('openAIChatProvider: system must be a string (got 3, a number)'));
    expect(bad({ maxRetries: '1' })).toThrow(new RangeError('openAIChatProvider: maxRetries must be an integer >= 0 (got "1", a string)'));
    expect(bad({ idleTimeoutMs: 0 })).toThrow(new RangeError('openAIChatProvider: idleTimeoutMs must be an integer >= 1 or Infinity (got 0, a number)'));
    expect(server.requests).toHaveLength(0);
  });

  it('left open (c): the settings are copied when the provider is made: changing the options afterwards changes no request', async () => {
    const options: OpenAIChatProviderOptions = { model: 'gpt-4o-mini', baseURL: `${server.url}/v1`, apiKey: KEY, headers: { 'x-trace': 't1' }, stop: ['END'], extraBody: { seed: 1 }, reasoningEffort: 'low' };
    const made = openAIChatProvider(options);
    options.headers!['x-trace'] = 't2';
    (options.stop as string[]).push('STOP');
    options.extraBody!.seed = 2;
    Object.assign(options, { model: 'other', apiKey: 'sk-other-12345678', reasoningEffort: 'high', baseURL: 'http://127.0.0.1:9' });
    server.reply(stream('text.sse'));
    await collect(made(question));
    const [sent] = server.requests;
    expect([sent.headers['x-trace'], sent.headers.authorization]).toEqual(['t1', `Bearer ${KEY}`]);
    expect([sent.json.model, sent.json.stop, sent.json.seed, sent.json.reasoning_effort]).toEqual(['gpt-4o-mini', ['END'], 1, 'low']);
  });
});

// P4: errors are messages, retries only before anything was emitted, no key in any text
describe('openAIChatProvider: errors and retries', () => {
  it('retries a 429 with retry-after: 0, then streams the answer', async () => {
    server.reply({ status: 429, headers: { 'retry-after': '0' }, body: fixture('openai/error-429.json') }, stream('text.sse'));
    const events = await collect(provider()(question));
    expect(events).toEqual([start, text('Hello'), text('! 现在是'), text('北京时间'), text('中午 🕛。'), ended('stop')]);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1].body).toBe(server.requests[0].body);
  });

  it('honours retry-after as an HTTP date, retries 5xx, and gives up after maxRetries', async () => {
    const past = new Date(Date.now() - 5000).toUTCString();
    const unavailable: Reply = { status: 503, headers: { 'retry-after': past }, body: '{"error":{"message":"Service Unavailable"}}' };
    server.reply(unavailable, unavailable, unavailable);
    expect(await collect(provider({ maxRetries: 2 })(question))).toEqual([start, failed(`HTTP 503 from POST ${server.url}/v1/chat/completions: Service Unavailable`, { kind: 'http', status: 503, retryAfterMs: 0 })]);
    expect(server.requests).toHaveLength(3);
  });

  it('does not retry when retry-after asks for more than a minute', async () => {
    server.reply({ status: 429, headers: { 'retry-after': '3600' }, body: fixture('openai/error-429.json') });
    const events = await collect(provider()(question));
    expect(events).toEqual([start, failed(expect.stringMatching(/^HTTP 429 from POST http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions: Rate limit reached for gpt-4o-mini/), { kind: 'http', status: 429, retryAfterMs: 3_600_000 })]);
    expect(server.requests).toHaveLength(1);
  });

  it('P4, P2: does not retry a 401, and names the status, the method and URL, and the API\'s message', async () => {
    server.reply({ status: 401, body: fixture('openai/error-401.json') });
    expect(await collect(provider()(question))).toEqual([
      start,
      failed(
        `HTTP 401 from POST ${server.url}/v1/chat/completions: Incorrect API key provided: sk-test-****************************CRET. You can find your API key at https://platform.openai.com/account/api-keys.`, { kind: 'http', status: 401 },
      ),
    ]);
    expect(server.requests).toHaveLength(1);
  });

  it('never shows the API key, even when the server echoes it', async () => {
    server.reply((request) => ({
      status: 401,
      body: JSON.stringify({ error: { message: `Incorrect API key provided: ${String(request.headers.authorization).slice(7)}` } }),
    }));
    const events = await collect(provider()(question));
    expect(events).toEqual([start, failed(`HTTP 401 from POST ${server.url}/v1/chat/completions: Incorrect API key provided: [redacted]`, { kind: 'http', status: 401 })]);
    expect(JSON.stringify(events)).not.toContain(KEY);
  });

  it('never shows a key passed as an authorization header, nor one echoed in the stream', async () => {
    const secret = 'sk-or-v1-header-secret-0123';
    server.reply((request) => ({
      body: `data: {"error":{"message":"bad key ${String(request.headers.authorization).slice(7)}","code":401}}\n\n`,
    }));
    const events = await collect(provider({ apiKey: '', headers: { Authorization: `Bearer ${secret}` } })(question));
    expect(server.requests[0].headers.authorization).toBe(`Bearer ${secret}`);
    expect(events).toEqual([start, failed('error in the stream: bad key [redacted]', { kind: 'protocol' })]);
  });

  it('reports a network failure as message_end with the address', async () => {
    const port = await closedPort();
    const events = await collect(openAIChatProvider({ model: 'm', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 })(question));
    expect(events).toEqual([
      start,
      failed(`request to http://127.0.0.1:${port}/v1/chat/completions failed: fetch failed (connect ECONNREFUSED 127.0.0.1:${port})`, { kind: 'network' }),
    ]);
  });

  it('reports a JSON reply where a stream was expected', async () => {
    server.reply({ headers: { 'content-type': 'application/json' }, body: '{"error":{"message":"streaming is not supported"}}' });
    expect(await collect(provider()(question))).toEqual([
      start,
      failed(`HTTP 200 from POST ${server.url}/v1/chat/completions: expected an event stream, got application/json: streaming is not supported`, { kind: 'protocol' }),
    ]);
  });

  it('left open (g): a 200 reply that is not an event stream (text/html) ends with error naming the content type, the method and the URL', async () => {
    server.reply({ headers: { 'content-type': 'text/html; charset=utf-8' }, body: '<html><body>Please log in to the proxy</body></html>\n' });
    expect(await collect(provider()(question))).toEqual([
      start,
      failed(`HTTP 200 from POST ${server.url}/v1/chat/completions: expected an event stream, got text/html; charset=utf-8: <html><body>Please log in to the proxy</body></html>`, { kind: 'protocol' }),
    ]);
    expect(server.requests).toHaveLength(1); // not retried: the server answered, with the wrong thing
  });

  it('left open (g): an event stream named with parameters or in capitals is one', async () => {
    server.reply({ headers: { 'content-type': 'Text/Event-Stream; charset=utf-8' }, body: fixture('openai/text.sse') });
    expect((await collect(provider()(question))).at(-1)).toMatchObject({ type: 'message_end', stopReason: 'stop' });
  });

  it('reports a stream that ends cleanly before finish_reason', async () => {
    server.reply({ body: splitAfterEvents(fixture('openai/text.sse'), 2)[0] });
    expect(await collect(provider()(question))).toEqual([
      start,
      text('Hello'),
      failed('the stream ended before the reply was complete (no finish_reason)', { kind: 'protocol' }),
    ]);
  });

  it('reports data that is not JSON', async () => {
    server.reply({ body: 'data: {"choices": [\n\n' });
    expect(await collect(provider()(question))).toEqual([start, failed('invalid JSON in the stream: {"choices": [', { kind: 'protocol' })]);
  });
});

// P1: one request per subscription, none before it; unsubscribing aborts it
describe('openAIChatProvider: cold, live and cancellable', () => {
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
    server.reply({ body: splitAfterEvents(fixture('openai/text.sse'), 2), between: () => opened });
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
    expect(seen.at(-1)).toEqual({ event: ended('stop'), restSent: true });
  });

  it('closes the connection when unsubscribed mid-stream', async () => {
    server.reply({ body: splitAfterEvents(fixture('openai/text.sse'), 2)[0], then: 'hang' });
    const seen: ProviderEvent[] = [];
    const subscription = provider()(question).subscribe((event) => {
      seen.push(event);
      if (event.type === 'text_delta') subscription.unsubscribe();
    });
    await waitFor(() => server.requests.length === 1);
    await server.requests[0].closed; // the server sees the socket close
    expect(seen).toEqual([start, text('Hello')]);
  });

  it('stops waiting to retry when unsubscribed', async () => {
    server.reply({ status: 429, headers: { 'retry-after': '30' }, body: fixture('openai/error-429.json') }, stream('text.sse'));
    const seen: ProviderEvent[] = [];
    const subscription = provider()(question).subscribe((event) => seen.push(event));
    await waitFor(() => server.requests.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    subscription.unsubscribe();
    expect(seen).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it('reads the end of the body after [DONE], so that the next call reuses the connection', async () => {
    server.reply(stream('text.sse', { lingerMs: 20 }), stream('text.sse', { lingerMs: 20 }));
    expect((await collect(provider()(question))).at(-1)).toEqual(ended('stop'));
    const connections = server.connections; // 0 or 1: an earlier test's connection may serve this call
    await new Promise((resolve) => setTimeout(resolve, 100)); // the body ends 20 ms after [DONE]
    expect((await collect(provider()(question))).at(-1)).toEqual(ended('stop'));
    expect(server.connections).toBe(connections);
  });

  it('ends the call at [DONE] even when the server keeps the response open, and then closes it', async () => {
    server.reply(stream('text.sse', { then: 'hang' }));
    expect((await collect(provider()(question))).at(-1)).toEqual(ended('stop'));
    await server.requests[0].closed; // about a second later
  });

  it('takes an unsubscribe after the end in its stride', async () => {
    server.reply(stream('text.sse'), stream('text.sse'));
    let completed = false;
    const subscription = provider()(question).subscribe({ complete: () => (completed = true) });
    await waitFor(() => completed);
    subscription.unsubscribe();
    expect((await collect(provider()(question))).at(-1)).toEqual(ended('stop'));
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}
