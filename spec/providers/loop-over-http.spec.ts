import { lastValueFrom, tap, toArray } from 'rxjs';
import { LoopEvent, Provider, ToolRegistry, anthropicProvider, openAIChatProvider, openAIResponsesProvider, runEventedToolLoop } from '../../src/index.js';
import { LoopbackServer, fixture, splitAfterEvents } from './loopback-server';

const FIXED_NOW = '2026-01-01T00:00:00Z';
const question = '现在几点？';

let server: LoopbackServer;
beforeAll(async () => {
  server = await LoopbackServer.start();
});
afterAll(() => server.stop());
beforeEach(() => server.reset());

function registry(): ToolRegistry {
  return new ToolRegistry().register({
    name: 'current_time',
    description: 'Returns the current time as an ISO 8601 string',
    input: {},
    handler: () => FIXED_NOW,
  });
}

function run(provider: Provider, signal?: AbortSignal): Promise<LoopEvent[]> {
  return lastValueFrom(runEventedToolLoop({ provider, registry: registry(), messages: [{ role: 'user', content: question }], signal }).pipe(toArray()));
}

function summary(events: LoopEvent[]): string[] {
  return events.flatMap((event) => {
    switch (event.type) {
      case 'turn_start':
        return [`turn ${event.turn}`];
      case 'text_delta':
        return [`text: ${event.text}`];
      case 'tool_call':
        return [`tool_call: ${event.call.name}`];
      case 'tool_result':
        return [`tool_result: ${event.message.content}`];
      case 'message_end':
        return [`message_end: ${event.stopReason}`];
      case 'loop_end':
        return [`loop_end: ${event.reason} | ${event.messages.map((message) => message.role).join(' -> ')}`];
      default:
        return [];
    }
  });
}

const expectedRun = [
  'turn 1',
  'tool_call: current_time',
  'tool_result: 2026-01-01T00:00:00Z',
  'message_end: toolUse',
  'turn 2',
  'text: 现在是 ',
  'text: 2026-01-01T00:00:00Z',
  'text: 。',
  'message_end: stop',
  'loop_end: stop | user -> assistant -> toolResult -> assistant',
];

// P2: a round trip through the loop makes a request the API accepts; P4 and R11 over a real connection
describe('runEventedToolLoop over HTTP', () => {
  it('OpenAI: turn 2 sends the call and its result back in the Chat Completions format', async () => {
    server.reply({ body: fixture('openai/s04-tool-call.sse') }, { body: fixture('openai/s04-answer.sse') });
    const events = await run(openAIChatProvider({ model: 'gpt-4o-mini', baseURL: `${server.url}/v1`, apiKey: 'sk-test' }));

    expect(summary(events)).toEqual(expectedRun);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0].json.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'current_time',
          description: 'Returns the current time as an ISO 8601 string',
          parameters: { type: 'object', properties: {}, required: [] },
        },
      },
    ]);
    expect(server.requests[1].json.messages).toEqual([
      { role: 'user', content: question },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_s04_current_time', type: 'function', function: { name: 'current_time', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'call_s04_current_time', content: FIXED_NOW },
    ]);
  });

  it('P13, P14: OpenAI Responses: turn 2 sends the whole history back as input items, stateless', async () => {
    server.reply({ body: fixture('openai-responses/s04-tool-call.sse') }, { body: fixture('openai-responses/s04-answer.sse') });
    const events = await run(openAIResponsesProvider({ model: 'gpt-5-mini', baseURL: `${server.url}/v1`, apiKey: 'sk-test' }));

    expect(summary(events)).toEqual(expectedRun);
    expect(server.requests.map((request) => request.path)).toEqual(['/v1/responses', '/v1/responses']);
    expect(server.requests[0]!.json.tools).toEqual([
      {
        type: 'function',
        name: 'current_time',
        description: 'Returns the current time as an ISO 8601 string',
        parameters: { type: 'object', properties: {}, required: [] },
        strict: false,
      },
    ]);
    expect(server.requests[1]!.json).toMatchObject({
      store: false,
      stream: true,
      input: [
        { role: 'user', content: question },
        { type: 'function_call', call_id: 'call_s04_current_time', name: 'current_time', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_s04_current_time', output: FIXED_NOW },
      ],
    });
    expect(server.requests[1]!.json).not.toHaveProperty('previous_response_id');
  });

  it('Anthropic: turn 2 sends the call and its result back in the Messages format', async () => {
    server.reply({ body: fixture('anthropic/s04-tool-use.sse') }, { body: fixture('anthropic/s04-answer.sse') });
    const events = await run(anthropicProvider({ model: 'claude-sonnet-4-5', baseURL: server.url, apiKey: 'sk-ant-test', cache: 'off' }));

    expect(summary(events)).toEqual(expectedRun);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1].json.messages).toEqual([
      { role: 'user', content: question },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01S04CurrentTime000001', name: 'current_time', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01S04CurrentTime000001', content: FIXED_NOW, is_error: false }] },
    ]);
  });

  it('an HTTP error on turn 2 ends the loop with reason error and the API\'s message', async () => {
    server.reply({ body: fixture('openai/s04-tool-call.sse') }, { status: 401, body: fixture('openai/error-401.json') });
    const events = await run(openAIChatProvider({ model: 'gpt-4o-mini', baseURL: `${server.url}/v1`, apiKey: 'sk-test' }));
    const last = events.at(-1);
    expect(last?.type === 'loop_end' && [last.reason, last.assistant.errorMessage]).toEqual([
      'error',
      expect.stringMatching(/^HTTP 401 from POST http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions: Incorrect API key provided/),
    ]);
  });

  it('aborting the loop mid-stream closes the connection, and the loop still ends cleanly', async () => {
    server.reply({ body: splitAfterEvents(fixture('anthropic/s04-answer.sse'), 4)[0], then: 'hang' });
    const controller = new AbortController();
    const provider = anthropicProvider({ model: 'claude-sonnet-4-5', baseURL: server.url, apiKey: 'sk-ant-test' });
    const events = await lastValueFrom(
      runEventedToolLoop({ provider, registry: registry(), messages: [{ role: 'user', content: question }], signal: controller.signal }).pipe(
        // abort from outside the event's delivery, as a user's click would
        tap((event) => event.type === 'text_delta' && setTimeout(() => controller.abort(), 0)),
        toArray(),
      ),
    );
    await server.requests[0].closed;
    expect(summary(events)).toEqual(['turn 1', 'text: 现在是 ', 'loop_end: aborted | user -> assistant']);
    const last = events.at(-1);
    expect(last?.type === 'loop_end' && last.assistant).toEqual({ role: 'assistant', content: '现在是 ', stopReason: 'aborted', errorMessage: 'aborted' });
  });
});
