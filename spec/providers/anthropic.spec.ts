import { lastValueFrom, toArray } from 'rxjs';
import type { AgentMessage, LoopEvent, ProviderEvent, StopReason, Usage } from '../../src/index.js';
import { ToolRegistry, anthropicProvider, runEventedToolLoop } from '../../src/index.js';
import { AnthropicTranslator } from '../../src/providers/anthropic.js';
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

// these specs read the request without P19's cache breakpoints (spec/providers/anthropic-cache.spec.ts reads them)
const provider = (options: Partial<AnthropicProviderOptions> = {}) =>
  anthropicProvider({ model: 'claude-sonnet-4-5', baseURL: `${server.url}/`, apiKey: KEY, cache: 'off', ...options });

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
    ['stream-error.sse', [start, text('Partial'), failed('error in the stream: overloaded_error: Overloaded', { kind: 'http', status: 529 })], {}],
    [
      'invalid-arguments.sse', // a closed block whose input does not parse, and the reply ends with tool_use (P6: held, then an error)
      [
        start,
        args(0, '{"city": ', { id: 'toolu_01BadArgs00000000000001', name: 'get_weather' }),
        args(0, '"Par'),
        failed(expect.stringMatching(/^invalid JSON in the arguments of tool call get_weather \(toolu_01BadArgs00000000000001\): /), { kind: 'protocol' }),
      ],
      {},
    ],
    ['cut-off.sse', [start, text('Before the cut'), failed(expect.stringMatching(/^the stream broke off: terminated/), { kind: 'network' })], { then: 'destroy' }],
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

/** One SSE event of the Messages API, as the translator gets it. */
const sse = (data: object) => ({ event: (data as { type: string }).type, data: JSON.stringify(data) });
/** Every event the translator makes of `events`, then of the stream's end; a thrown error as the transport words it. */
function translate(...events: object[]): ProviderEvent[] {
  const translator = new AnthropicTranslator();
  const out: ProviderEvent[] = [];
  try {
    for (const event of events) {
      out.push(...translator.next(sse(event)));
      if (out.at(-1)?.type === 'message_end') return out;
    }
    out.push(...translator.end());
  } catch (error) {
    out.push({ type: 'message_end', stopReason: 'error', errorMessage: (error as Error).message });
  }
  return out;
}
const messageStart = (usage: object = { input_tokens: 10, output_tokens: 1 }) => ({ type: 'message_start', message: { id: 'msg_1', usage } });
const blockStart = (index: number, content_block: object) => ({ type: 'content_block_start', index, content_block });
const blockDelta = (index: number, delta: object) => ({ type: 'content_block_delta', index, delta });
const blockStop = (index: number) => ({ type: 'content_block_stop', index });
const messageDelta = (stop_reason: string | null, usage?: object) => ({ type: 'message_delta', delta: { stop_reason }, ...(usage && { usage }) });
const messageStop = { type: 'message_stop' };
const ended = (stopReason: StopReason, extra: object = {}): ProviderEvent => ({ type: 'message_end', stopReason, usage: { inputTokens: 10, outputTokens: 1 }, ...extra });

const pieces: [string, Reply][] = [
  ['sent at once', {}],
  ['sent in 5-byte pieces', { chunkSize: 5, between: nextTurn }],
];

/** The fixture without its last `count` events: a stream that ended early. */
const withoutLast = (name: string, count: number): string => {
  const events = fixture(`anthropic/${name}`).toString('utf8').split('\n\n').filter((event) => event !== '');
  return `${events.slice(0, events.length - count).join('\n\n')}\n\n`;
};

// P6: a reply cut by the token limit inside a tool call
describe('anthropicProvider: P6, a reply cut by the token limit inside a tool call', () => {
  const cases: [string, ProviderEvent[]][] = [
    [
      'max-tokens-mid-call.sse', // the API leaves the cut block open: no content_block_stop
      [
        start,
        text("I'll write the report"),
        text(' to a file.'),
        args(0, '', { id: 'toolu_01WriteReport00000000001', name: 'write_file' }),
        args(0, '{"path": "report.md", '),
        args(0, '"content": "# Report\\n\\nThe first fin'),
        end('length'),
      ],
    ],
    [
      'max-tokens-after-calls.sse', // a whole call first: emitted as ever
      [
        start,
        text('Checking both cities.'),
        args(0, '', { id: 'toolu_01CutParis000000000001', name: 'get_weather' }),
        args(0, '{"city": "Paris", "unit": "celsius"}'),
        call('toolu_01CutParis000000000001', 'get_weather', { city: 'Paris', unit: 'celsius' }),
        args(1, '{"city": "To', { id: 'toolu_01CutTokyo000000000002', name: 'get_weather' }),
        end('length'),
      ],
    ],
  ];
  const each = cases.flatMap(([name, expected]) => pieces.map(([how, reply]) => [name, how, expected, reply] as const));

  it.each(each)('P6: %s (%s) ends with length, the text so far and no call for the cut block, never a JSON error', async (name, _how, expected, reply) => {
    server.reply(stream(name, reply));
    expect(await collect(provider()(question))).toEqual(expected);
  });

  it('P6: the same when the stream ends after the stop reason, without message_stop', async () => {
    server.reply({ body: withoutLast('max-tokens-after-calls.sse', 1) });
    expect(await collect(provider()(question))).toEqual(cases[1][1]);
  });

  it('P6: also model_context_window_exceeded; a block the stream left open at any other stop reason is still a call', () => {
    const cut = [messageStart(), blockStart(0, { type: 'tool_use', id: 't1', name: 'f', input: {} }), blockDelta(0, { type: 'input_json_delta', partial_json: '{"a":' })];
    expect(translate(...cut, messageDelta('model_context_window_exceeded'), messageStop).at(-1)).toEqual(ended('length'));
    const whole = [messageStart(), blockStart(0, { type: 'tool_use', id: 't1', name: 'f', input: {} }), blockDelta(0, { type: 'input_json_delta', partial_json: '{"a":1}' })];
    expect(translate(...whole, messageDelta('tool_use'), messageStop).slice(-2)).toEqual([call('t1', 'f', { a: 1 }), ended('toolUse')]);
  });

  // P6 as real servers send it: the API closes the cut block with content_block_stop before it says max_tokens
  const closed: [string, ProviderEvent[]][] = [
    ['max-tokens-closed-call.sse', cases[0][1]],
    ['max-tokens-closed-after-call.sse', cases[1][1]],
  ];
  const bytewise: [string, Reply][] = [...pieces, ['sent in 1-byte pieces', { chunkSize: 1, between: nextTurn }]];
  const eachClosed = closed.flatMap(([name, expected]) => bytewise.map(([how, reply]) => [name, how, expected, reply] as const));

  it.each(eachClosed)(
    'P6 (as real servers send it): %s (%s): a cut block closed by content_block_stop before max_tokens is length and no call, never a JSON error',
    async (name, _how, expected, reply) => {
      server.reply(stream(name, reply));
      expect(await collect(provider()(question))).toEqual(expected);
    },
  );

  it('P6 (as real servers send it): a closed block whose input does not parse, when the reply ends any other way, is an error naming the call and the JSON error', () => {
    const broken = [messageStart(), blockStart(0, { type: 'tool_use', id: 't1', name: 'f', input: {} }), blockDelta(0, { type: 'input_json_delta', partial_json: '{"a":' }), blockStop(0)];
    const named = expect.stringMatching(/^invalid JSON in the arguments of tool call f \(t1\): \S/);
    for (const reason of ['end_turn', 'tool_use', 'stop_sequence', 'pause_turn']) {
      expect([reason, translate(...broken, messageDelta(reason), messageStop).slice(-1)]).toEqual([reason, [failed(named)]]);
    }
    // the stream ends without a stop reason: both are said
    expect(translate(...broken).at(-1)).toEqual(
      failed(expect.stringMatching(/^invalid JSON in the arguments of tool call f \(t1\): .+; the stream ended before the reply was complete \(no stop_reason\)$/)),
    );
    // a block after it: the held block was not the cut one, and the later call never goes out
    const later = [blockStart(1, { type: 'tool_use', id: 't2', name: 'g', input: {} }), blockDelta(1, { type: 'input_json_delta', partial_json: '{}' }), blockStop(1)];
    expect(translate(...broken, ...later, messageDelta('max_tokens'), messageStop)).toEqual([
      { type: 'tool_call_delta', index: 0, id: 't1', name: 'f', argumentsDelta: '{"a":' },
      failed(named),
    ]);
  });

  it('P6 (as real servers send it): a closed block that parses is a call at its content_block_stop, before max_tokens says anything', () => {
    const whole = [messageStart(), blockStart(0, { type: 'tool_use', id: 't1', name: 'f', input: {} }), blockDelta(0, { type: 'input_json_delta', partial_json: '{"a":1}' }), blockStop(0)];
    expect(translate(...whole, messageDelta('max_tokens'), messageStop).slice(-2)).toEqual([call('t1', 'f', { a: 1 }), ended('toolUse')]);
  });

  it('P6: the whole calls before the cut run, and the loop ends with length', async () => {
    server.reply(stream('max-tokens-after-calls.sse'));
    const registry = new ToolRegistry().register({ ...weatherSpec, handler: ({ city }) => `${city}: 18°C` });
    const events = await lastValueFrom(runEventedToolLoop({ provider: provider(), registry, messages: question.messages }).pipe(toArray()));
    const last = events.at(-1) as Extract<LoopEvent, { type: 'loop_end' }>;
    expect(last.reason).toBe('length');
    expect(last.messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: 'Checking both cities.',
        stopReason: 'length',
        toolCalls: [{ id: 'toolu_01CutParis000000000001', name: 'get_weather', input: { city: 'Paris', unit: 'celsius' } }],
      },
      { role: 'toolResult', toolCallId: 'toolu_01CutParis000000000001', toolName: 'get_weather', content: 'Paris: 18°C', isError: false },
    ]);
    expect(server.requests).toHaveLength(1); // `length` ends the loop (R6)
  });
});

// P7: a proxy that splices two replies into one stream is not silently accepted
describe('anthropicProvider: P7, a second message_start', () => {
  it.each(pieces)('P7: a second message_start inside one reply ends it with error (%s)', async (_how, reply) => {
    server.reply(stream('spliced-message-start.sse', reply));
    expect(await collect(provider()(question))).toEqual([
      start,
      text('Let me check.'),
      args(0, '{"city": "Pa', { id: 'toolu_01SplicedFirst000000001', name: 'get_weather' }),
      failed('a second message_start inside one reply: the stream holds two replies', { kind: 'protocol' }),
    ]);
  });

  it('P7: even one that repeats the first before anything else came', () => {
    expect(translate(messageStart(), messageStart(), blockStart(0, { type: 'text', text: '' }), messageDelta('end_turn'), messageStop)).toEqual([
      failed('a second message_start inside one reply: the stream holds two replies'),
    ]);
  });
});

// P9: the arguments as they stream
describe('anthropicProvider: P9, tool_call_delta', () => {
  it.each(pieces)('P9: one tool_call_delta per input_json_delta, before its tool_call; index counts the calls, not the content blocks (%s)', async (_how, reply) => {
    server.reply(stream('thinking-tool-use.sse', reply));
    const events = await collect(provider()(question));
    expect(events.filter((event) => event.type === 'tool_call_delta' || event.type === 'tool_call')).toEqual([
      args(0, '', { id: 'toolu_01ThinkParis0000000001', name: 'get_weather' }), // content block 3
      args(0, '{"city": "Paris",'),
      args(0, ' "unit": "celsius"}'),
      call('toolu_01ThinkParis0000000001', 'get_weather', { city: 'Paris', unit: 'celsius' }),
    ]);
  });

  it("P9: a server tool's input (server_tool_use, mcp_tool_use) makes no delta and takes no index", () => {
    const events = translate(
      messageStart(),
      blockStart(0, { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} }),
      blockDelta(0, { type: 'input_json_delta', partial_json: '{"query": "weather"}' }),
      blockStop(0),
      blockStart(1, { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] }),
      blockStop(1),
      blockStart(2, { type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'echo', server_name: 'x', input: {} }),
      blockDelta(2, { type: 'input_json_delta', partial_json: '{}' }),
      blockStop(2),
      blockStart(3, { type: 'tool_use', id: 't1', name: 'f', input: {} }),
      blockDelta(3, { type: 'input_json_delta', partial_json: '{"a":' }),
      blockDelta(3, { type: 'input_json_delta', partial_json: '1}' }),
      blockStop(3),
      blockStart(4, { type: 'tool_use', id: 't2', name: 'g', input: {} }),
      blockStop(4), // no delta at all: no tool_call_delta, the call all the same
      messageDelta('tool_use'),
      messageStop,
    );
    expect(events).toEqual([args(0, '{"a":', { id: 't1', name: 'f' }), args(0, '1}'), call('t1', 'f', { a: 1 }), call('t2', 'g', {}), ended('toolUse')]);
  });
});

// P10: thinking blocks as events and as message_end.reasoning
describe('anthropicProvider: P10, thinking', () => {
  const thinkingBlock = {
    type: 'thinking',
    thinking: 'The user wants the weather in Paris. I should call get_weather in celsius.',
    signature: 'EpYDCkYIBxgCKkBzUo1qAQvTBQ2Z0u3ZdNlXG9mQ3c0SgX4wFhiW2Ww7tR0a3B4VmI5ZqLkPjHcY8YxwR1T',
  };
  const redactedBlock = { type: 'redacted_thinking', data: 'EmwKAhgBEgyJ3u7R9Qm0aLk2oTgaDPq1Wc8yXv4aUO2bZiIw0Xk3N4Z7Jp1mQd9R8aGvT5Ls2KcYw==' };

  it.each(pieces)('P10: thinking text as reasoning_delta; the thinking and redacted_thinking blocks, whole, as message_end.reasoning (%s)', async (_how, reply) => {
    server.reply(stream('thinking-tool-use.sse', reply));
    const events = await collect(provider()(question));
    expect(events.filter((event) => event.type !== 'tool_call_delta')).toEqual([
      start,
      thought('The user wants the weather in Paris.'),
      thought(' I should call get_weather in celsius.'),
      text('Let me look that up.'),
      call('toolu_01ThinkParis0000000001', 'get_weather', { city: 'Paris', unit: 'celsius' }),
      end('toolUse', {
        usage: { inputTokens: 1310, outputTokens: 96, cacheReadTokens: 2048, cacheWriteTokens: 512 },
        reasoning: [thinkingBlock, redactedBlock],
      }),
    ]);
  });

  it('P10: a block keeps fields the API may add; empty thinking deltas show nothing; a block the token limit cut is not kept', () => {
    const events = translate(
      messageStart(),
      blockStart(0, { type: 'thinking', thinking: '', signature: '', extra: 1 }),
      blockDelta(0, { type: 'thinking_delta', thinking: 'a' }),
      blockDelta(0, { type: 'thinking_delta', thinking: '' }),
      blockDelta(0, { type: 'signature_delta', signature: 'S1' }),
      blockStop(0),
      blockStart(1, { type: 'thinking', thinking: '' }), // no signature field yet: it comes in the deltas
      blockDelta(1, { type: 'thinking_delta', thinking: 'b' }),
      blockDelta(1, { type: 'signature_delta', signature: 'S' }),
      blockDelta(1, { type: 'signature_delta', signature: '2' }),
      blockStop(1),
      blockStart(2, { type: 'thinking', thinking: '', signature: '' }),
      blockDelta(2, { type: 'thinking_delta', thinking: 'c' }), // cut before its signature
      messageDelta('max_tokens'),
      messageStop,
    );
    expect(events).toEqual([
      thought('a'),
      thought('b'),
      thought('c'),
      ended('length', {
        reasoning: [
          { type: 'thinking', thinking: 'a', signature: 'S1', extra: 1 },
          { type: 'thinking', thinking: 'b', signature: 'S2' },
        ],
      }),
    ]);
    expect(translate(messageStart(), messageDelta('end_turn'), messageStop)).toEqual([ended('stop')]); // no reasoning: no field
  });

  it('P10: a reply that fails after a call went out keeps its thinking, which that call needs on the next request', () => {
    const thinking = [
      messageStart(),
      blockStart(0, { type: 'thinking', thinking: '', signature: '' }),
      blockDelta(0, { type: 'thinking_delta', thinking: 'two calls' }),
      blockDelta(0, { type: 'signature_delta', signature: 'S' }),
      blockStop(0),
    ];
    const whole = [blockStart(1, { type: 'tool_use', id: 't1', name: 'f', input: {} }), blockDelta(1, { type: 'input_json_delta', partial_json: '{}' }), blockStop(1)];
    const reasoning = [{ type: 'thinking', thinking: 'two calls', signature: 'S' }];
    const protocol = { kind: 'protocol' };
    const failures: [string, object[], string | RegExp, object][] = [
      ['invalid arguments', [blockStart(2, { type: 'tool_use', id: 't2', name: 'g', input: {} }), blockDelta(2, { type: 'input_json_delta', partial_json: '{"a' }), blockStop(2)], /^invalid JSON in the arguments of tool call g \(t2\): /, protocol],
      ['a second message_start (P7)', [messageStart()], 'a second message_start inside one reply: the stream holds two replies', protocol],
      ['an error event', [{ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }], 'error in the stream: overloaded_error: Overloaded', { kind: 'http', status: 529 }],
      ['a stream without stop_reason', [], 'the stream ended before the reply was complete (no stop_reason)', protocol],
    ];
    for (const [, rest, wording, kind] of failures) {
      const message: unknown = typeof wording === 'string' ? wording : expect.stringMatching(wording);
      const events = translate(...thinking, ...whole, ...rest);
      expect(events.slice(1, 3)).toEqual([args(0, '{}', { id: 't1', name: 'f' }), call('t1', 'f', {})]);
      // L1: a failure kept with its thinking still says what it was
      expect(events.at(-1)).toEqual({ type: 'message_end', stopReason: 'error', errorMessage: message, reasoning, failure: { ...kind, message } });
      // without a call that went out, a failure is the transport's, as ever: no reasoning
      expect(translate(...thinking, ...rest).at(-1)).toEqual({ type: 'message_end', stopReason: 'error', errorMessage: message });
    }
  });
});

// R27: token counts from message_start and message_delta
describe('anthropicProvider: R27, usage', () => {
  it('R27: input, cache read and cache write from the stream, output the last (cumulative) count', async () => {
    server.reply(stream('thinking-answer.sse'));
    expect((await collect(provider()(question))).at(-1)).toEqual({
      type: 'message_end',
      stopReason: 'stop',
      usage: { inputTokens: 1450, outputTokens: 31, cacheReadTokens: 2560, cacheWriteTokens: 0 },
    });
  });

  it('R27: the last count of each kind wins; a count that is not a number is no count; no cache counts, no cache fields', () => {
    expect(
      translate(
        messageStart({ input_tokens: 10, output_tokens: 1 }),
        messageDelta(null, { output_tokens: 5 }),
        messageDelta('end_turn', { input_tokens: 12, output_tokens: 9, cache_read_input_tokens: null }),
        messageStop,
      ),
    ).toEqual([{ type: 'message_end', stopReason: 'stop', usage: { inputTokens: 12, outputTokens: 9 } }]);
    expect(translate(messageStart({ input_tokens: '10', output_tokens: 1, cache_read_input_tokens: 4 }), messageDelta('end_turn'), messageStop)).toEqual([
      { type: 'message_end', stopReason: 'stop', usage: { inputTokens: 0, outputTokens: 1, cacheReadTokens: 4 } },
    ]);
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

  it('R21, P11: joins the system option and the history\'s system messages, in order, with a blank line, into `system`', async () => {
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
    expect(() => anthropicProvider({ model: 'm', maxTokens: 0 })).toThrow(new RangeError('anthropicProvider: maxTokens must be an integer >= 1 (got 0, a number)'));
    expect(() => anthropicProvider({ model: 'm', maxRetries: -1 })).toThrow(RangeError);
    expect(() => anthropicProvider({ model: undefined as unknown as string })).toThrow(TypeError);
  });

  it('left open (c): checks every setting when the provider is made, naming it and the value', () => {
    const bad = (options: object) => () => anthropicProvider({ model: 'm', ...options } as AnthropicProviderOptions);
    expect(bad({ headers: 'abc' })).toThrow(new TypeError('anthropicProvider: headers must be a record of strings (got "abc", a string)'));
    expect(bad({ headers: { 'anthropic-beta': 1 } })).toThrow(new TypeError('anthropicProvider: headers["anthropic-beta"] must be a string (got 1, a number)'));
    expect(bad({ baseURL: '' })).toThrow(new TypeError('anthropicProvider: baseURL must be an http or https URL (got "", a string)'));
    expect(bad({ fetch: 'fetch' })).toThrow(new TypeError('anthropicProvider: fetch must be a function (got "fetch", a string)'));
    expect(bad({ apiKey: 7 })).toThrow(new TypeError('anthropicProvider: apiKey must be a string (got a number)'));
    expect(bad({ maxTokens: 1.5 })).toThrow(new RangeError('anthropicProvider: maxTokens must be an integer >= 1 (got 1.5, a number)'));
    expect(bad({ thinking: '2048' })).toThrow(new RangeError('anthropicProvider: thinking must be an integer >= 1024 (got "2048", a string)'));
    expect(server.requests).toHaveLength(0);
  });

  it('left open (c): the settings are copied when the provider is made: changing the options afterwards changes no request', async () => {
    const options: AnthropicProviderOptions = { model: 'claude-sonnet-4-5', baseURL: server.url, apiKey: KEY, headers: { 'anthropic-beta': 'b1' }, maxTokens: 4000, thinking: 2000, system: 'Be brief.', cache: 'off' };
    const made = anthropicProvider(options);
    options.headers!['anthropic-beta'] = 'b2';
    Object.assign(options, { model: 'other', apiKey: 'sk-ant-other-1234', maxTokens: 9000, thinking: 5000, system: 'Be long.', cache: 'auto' });
    server.reply(stream('text.sse'));
    await collect(made(question));
    const [sent] = server.requests;
    expect([sent.headers['anthropic-beta'], sent.headers['x-api-key']]).toEqual(['b1', KEY]);
    expect([sent.json.model, sent.json.max_tokens, sent.json.thinking, sent.json.system]).toEqual([
      'claude-sonnet-4-5',
      4000,
      { type: 'enabled', budget_tokens: 2000 },
      'Be brief.',
    ]);
  });

  it('P11: temperature, maxTokens, toolChoice in the Messages shape, stop as stop_sequences', async () => {
    const choices: [AnthropicProviderOptions['toolChoice'], object][] = [
      ['auto', { type: 'auto' }],
      ['none', { type: 'none' }],
      ['required', { type: 'any' }],
      ['get_weather', { type: 'tool', name: 'get_weather' }],
    ];
    server.reply(...choices.map(() => stream('text.sse')));
    for (const [toolChoice, index] of choices.map(([choice], index) => [choice, index] as const)) {
      await collect(provider({ toolChoice, temperature: index / 2, maxTokens: 100 + index, stop: index % 2 ? 'END' : ['END', '\n\nHuman:'] })(question));
    }
    expect(server.requests.map(({ json }) => [json.tool_choice, json.temperature, json.max_tokens, json.stop_sequences])).toEqual([
      [{ type: 'auto' }, 0, 100, ['END', '\n\nHuman:']],
      [{ type: 'none' }, 0.5, 101, ['END']],
      [{ type: 'any' }, 1, 102, ['END', '\n\nHuman:']],
      [{ type: 'tool', name: 'get_weather' }, 1.5, 103, ['END']],
    ]);
  });

  it('P11: leaves out what is not set, tool_choice without tools (the API refuses it) and an empty stop list', async () => {
    server.reply(stream('text.sse'), stream('text.sse'));
    await collect(provider()(question));
    await collect(provider({ toolChoice: 'required', stop: [] })({ messages: question.messages, tools: [] }));
    for (const { json } of server.requests) {
      expect(Object.keys(json).filter((key) => ['tool_choice', 'temperature', 'stop_sequences', 'thinking'].includes(key))).toEqual([]);
      expect(json.max_tokens).toBe(4096); // the default
    }
  });

  it('P11: extraBody is merged last, shallowly: its keys win over the provider\'s own', async () => {
    server.reply(stream('text.sse'));
    await collect(
      provider({ maxTokens: 100, thinking: undefined, extraBody: { top_k: 5, max_tokens: 200, metadata: { user_id: 'u1' }, thinking: { type: 'disabled' } } })(question),
    );
    expect(server.requests[0].json).toMatchObject({ top_k: 5, max_tokens: 200, metadata: { user_id: 'u1' }, thinking: { type: 'disabled' }, stream: true });
  });

  it('P10: thinking is sent as an enabled budget', async () => {
    server.reply(stream('text.sse'), stream('text.sse'));
    await collect(provider({ thinking: 1024 })(question));
    await collect(provider({ thinking: 10_000, maxTokens: 16_000 })(question));
    expect(server.requests.map(({ json }) => [json.thinking, json.max_tokens])).toEqual([
      [{ type: 'enabled', budget_tokens: 1024 }, 4096],
      [{ type: 'enabled', budget_tokens: 10_000 }, 16_000],
    ]);
  });

  it('P10: checks thinking at call time: an integer >= 1024, below maxTokens (default 4096)', () => {
    const make = (options: Partial<AnthropicProviderOptions>) => () => anthropicProvider({ model: 'm', ...options });
    expect(make({ thinking: 1023 })).toThrow(new RangeError('anthropicProvider: thinking must be an integer >= 1024 (got 1023, a number)'));
    expect(make({ thinking: 2048.5 })).toThrow(RangeError);
    expect(make({ thinking: '2048' as unknown as number })).toThrow(new RangeError('anthropicProvider: thinking must be an integer >= 1024 (got "2048", a string)'));
    expect(make({ thinking: 4096 })).toThrow(
      new RangeError('anthropicProvider: maxTokens must be greater than thinking (got maxTokens 4096 (the default), thinking 4096)'),
    );
    expect(make({ thinking: 8000, maxTokens: 8000 })).toThrow(new RangeError('anthropicProvider: maxTokens must be greater than thinking (got maxTokens 8000, thinking 8000)'));
    expect(make({ thinking: 4095 })).not.toThrow();
    expect(make({ thinking: 8000, maxTokens: 8001 })).not.toThrow();
  });

  it('P10: an assistant message\'s reasoning goes back first and unchanged; another API\'s reasoning does not; thinking alone is no message', async () => {
    const thinking = { type: 'thinking', thinking: 'Paris first.', signature: 'c2lnLTE=', future_field: [1] };
    const redacted = { type: 'redacted_thinking', data: 'ZW5jcnlwdGVk' };
    const messages: AgentMessage[] = [
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: 'Checking.',
        stopReason: 'toolUse',
        toolCalls: [{ id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }],
        reasoning: [thinking, { type: 'reasoning', summary: [] }, 'a note', null, redacted],
      },
      { role: 'toolResult', toolCallId: 'toolu_1', toolName: 'get_weather', content: '18°C', isError: false },
      { role: 'assistant', content: '', stopReason: 'length', reasoning: [thinking] }, // cut while thinking
      { role: 'user', content: 'And Tokyo?' },
    ];
    server.reply(stream('text.sse'));
    await collect(provider()({ messages, tools: [weatherSpec] }));
    expect(server.requests[0].json.messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: [thinking, redacted, { type: 'text', text: 'Checking.' }, { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: '18°C', is_error: false },
          { type: 'text', text: 'And Tokyo?' },
        ],
      },
    ]);
  });
});

// P10 through the loop: the thinking of a tool round goes back with the call on the next request
describe('anthropicProvider: P10, a round trip through the loop', () => {
  it('P10: a reply with thinking and tool_use; the loop\'s next request sends the thinking blocks back first (R27: usage summed)', async () => {
    server.reply(stream('thinking-tool-use.sse'), stream('thinking-answer.sse'));
    const registry = new ToolRegistry().register({ ...weatherSpec, handler: ({ city }) => `${city}: 18°C, sunny` });
    const events = await lastValueFrom(
      runEventedToolLoop({ provider: provider({ thinking: 2048, maxTokens: 8192 }), registry, messages: question.messages }).pipe(toArray()),
    );
    const thinking = {
      type: 'thinking',
      thinking: 'The user wants the weather in Paris. I should call get_weather in celsius.',
      signature: 'EpYDCkYIBxgCKkBzUo1qAQvTBQ2Z0u3ZdNlXG9mQ3c0SgX4wFhiW2Ww7tR0a3B4VmI5ZqLkPjHcY8YxwR1T',
    };
    const redacted = { type: 'redacted_thinking', data: 'EmwKAhgBEgyJ3u7R9Qm0aLk2oTgaDPq1Wc8yXv4aUO2bZiIw0Xk3N4Z7Jp1mQd9R8aGvT5Ls2KcYw==' };
    const call = { id: 'toolu_01ThinkParis0000000001', name: 'get_weather', input: { city: 'Paris', unit: 'celsius' } };

    expect(server.requests).toHaveLength(2);
    expect(server.requests[1].json).toMatchObject({ max_tokens: 8192, thinking: { type: 'enabled', budget_tokens: 2048 } });
    expect(server.requests[1].json.messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: [thinking, redacted, { type: 'text', text: 'Let me look that up.' }, { type: 'tool_use', ...call }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'Paris: 18°C, sunny', is_error: false }] },
    ]);

    const last = events.at(-1) as Extract<LoopEvent, { type: 'loop_end' }>;
    expect(last.reason).toBe('stop');
    expect(last.messages[1]).toEqual({ role: 'assistant', content: 'Let me look that up.', stopReason: 'toolUse', toolCalls: [call], reasoning: [thinking, redacted] });
    expect(last.usage).toEqual({ inputTokens: 1310 + 1450, outputTokens: 96 + 31, cacheReadTokens: 2048 + 2560, cacheWriteTokens: 512 });
    // the reasoning survives a saved history (C5)
    expect(JSON.parse(JSON.stringify(last.messages))).toEqual(last.messages);
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
      failed(`HTTP 429 from POST ${server.url}/v1/messages: Number of requests has exceeded your rate limit`, { kind: 'http', status: 429, retryAfterMs: 0 }),
    ]);
    expect(server.requests).toHaveLength(2);
  });

  it('P4, P2: does not retry a 401, and names the status, the method and URL, and the API\'s message', async () => {
    server.reply({ status: 401, body: fixture('anthropic/error-401.json') });
    expect(await collect(provider()(question))).toEqual([start, failed(`HTTP 401 from POST ${server.url}/v1/messages: invalid x-api-key`, { kind: 'http', status: 401 })]);
    expect(server.requests).toHaveLength(1);
  });

  it('never shows the API key, even when the server echoes it', async () => {
    server.reply((request) => ({
      status: 400,
      body: JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: `bad key: ${String(request.headers['x-api-key'])}` } }),
    }));
    const events = await collect(provider()(question));
    expect(events).toEqual([start, failed(`HTTP 400 from POST ${server.url}/v1/messages: bad key: [redacted]`, { kind: 'http', status: 400 })]);
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
