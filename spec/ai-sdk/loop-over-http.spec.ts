/**
 * P18 for real: the AI SDK's own provider packages, pointed at a loopback server that speaks each API's wire
 * (Chat Completions and Responses for `@ai-sdk/openai`, `streamGenerateContent?alt=sse` for `@ai-sdk/google`),
 * drive a two-turn tool run through `runEventedToolLoop`; unsubscribing aborts the request the server sees.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { lastValueFrom, toArray } from 'rxjs';
import { type LoopEvent, type Provider, ToolRegistry, runEventedToolLoop } from 'rx-tool-loop';
import { languageModelProvider } from '../../src/ai-sdk/index.js';
import { LoopbackServer, fixture } from '../providers/loopback-server';

const FIXED_NOW = '2026-01-01T00:00:00Z';
const question = '现在几点？';
const sse = { 'content-type': 'text/event-stream' };

let server: LoopbackServer;
beforeAll(async () => {
  server = await LoopbackServer.start();
});
afterAll(() => server.stop());
beforeEach(() => server.reset());

function run(provider: Provider): Promise<LoopEvent[]> {
  const registry = new ToolRegistry().register({ name: 'current_time', description: 'Returns the current time as an ISO 8601 string', input: {}, handler: () => FIXED_NOW });
  return lastValueFrom(runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: question }] }).pipe(toArray()));
}

/** The run as lines: what a reader of the transcript checks. */
function summary(events: LoopEvent[]): string[] {
  return events.flatMap((event) => {
    switch (event.type) {
      case 'turn_start':
        return [`turn ${event.turn}`];
      case 'tool_call':
        return [`tool_call: ${event.call.name} ${JSON.stringify(event.call.input)}`];
      case 'tool_result':
        return [`tool_result: ${event.message.content}`];
      case 'message_end':
        return [`message_end: ${event.stopReason}`];
      case 'loop_end':
        return [`loop_end: ${event.reason}: ${event.assistant.content}`];
      default:
        return [];
    }
  });
}

const transcript = [
  'turn 1',
  'tool_call: current_time {}',
  `tool_result: ${FIXED_NOW}`,
  'message_end: toolUse',
  'turn 2',
  'message_end: stop',
  `loop_end: stop: 现在是 ${FIXED_NOW}。`,
];

describe('languageModelProvider over HTTP (the AI SDK provider packages against a loopback server)', () => {
  it('P18: @ai-sdk/openai chat — two turns through runEventedToolLoop; the second request carries the call and its result as Chat Completions messages', async () => {
    server.reply({ headers: sse, body: fixture('openai/s04-tool-call.sse') }, { headers: sse, body: fixture('openai/s04-answer.sse') });
    const model = createOpenAI({ baseURL: `${server.url}/v1`, apiKey: 'sk-loopback-key' }).chat('gpt-test');
    const events = await run(languageModelProvider(model));
    expect(summary(events)).toEqual(transcript);
    expect(server.requests.map((request) => [request.path, request.headers.authorization, request.json.model, request.json.stream])).toEqual([
      ['/v1/chat/completions', 'Bearer sk-loopback-key', 'gpt-test', true],
      ['/v1/chat/completions', 'Bearer sk-loopback-key', 'gpt-test', true],
    ]);
    expect(server.requests[0]!.json.tools).toEqual([
      { type: 'function', function: { name: 'current_time', description: 'Returns the current time as an ISO 8601 string', parameters: { type: 'object', properties: {}, required: [] } } },
    ]);
    expect(server.requests[1]!.json.messages).toEqual([
      { role: 'user', content: question },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_s04_current_time', type: 'function', function: { name: 'current_time', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_s04_current_time', content: FIXED_NOW },
    ]);
    const ends = events.filter((event) => event.type === 'message_end');
    expect(ends[0]).toMatchObject({ usage: { inputTokens: 61, outputTokens: 18, cacheReadTokens: 0 } });
  }, 30_000);

  it('P18: @ai-sdk/openai responses — two turns; the call goes back as a function_call item and its result as function_call_output', async () => {
    server.reply({ headers: sse, body: fixture('openai-responses/s04-tool-call.sse') }, { headers: sse, body: fixture('openai-responses/s04-answer.sse') });
    const model = createOpenAI({ baseURL: `${server.url}/v1`, apiKey: 'sk-loopback-key' }).responses('gpt-test');
    const events = await run(languageModelProvider(model, { providerOptions: { openai: { store: false } } }));
    expect(summary(events)).toEqual(transcript);
    expect(server.requests.map((request) => [request.path, request.json.store])).toEqual([
      ['/v1/responses', false],
      ['/v1/responses', false],
    ]);
    expect(server.requests[1]!.json.input).toEqual([
      { role: 'user', content: [{ type: 'input_text', text: question }] },
      expect.objectContaining({ type: 'function_call', call_id: 'call_s04_current_time', name: 'current_time', arguments: '{}' }),
      { type: 'function_call_output', call_id: 'call_s04_current_time', output: FIXED_NOW },
    ]);
  }, 30_000);

  it('P18: @ai-sdk/google — two turns on streamGenerateContent?alt=sse; the thought signatures go back on their parts (P10), the cached tokens are cacheReadTokens (R27)', async () => {
    server.reply({ headers: sse, body: fixture('ai-sdk/google-tool-call.sse') }, { headers: sse, body: fixture('ai-sdk/google-answer.sse') });
    const model = createGoogleGenerativeAI({ baseURL: `${server.url}/v1beta`, apiKey: 'g-loopback-key' })('gemini-test');
    const events = await run(languageModelProvider(model));
    expect(summary(events)).toEqual([
      'turn 1',
      'tool_call: current_time {}',
      `tool_result: ${FIXED_NOW}`,
      'message_end: toolUse',
      'turn 2',
      'message_end: stop',
      `loop_end: stop: 现在是 ${FIXED_NOW}。`,
    ]);
    expect(server.requests.map((request) => [request.path, request.headers['x-goog-api-key']])).toEqual([
      ['/v1beta/models/gemini-test:streamGenerateContent?alt=sse', 'g-loopback-key'],
      ['/v1beta/models/gemini-test:streamGenerateContent?alt=sse', 'g-loopback-key'],
    ]);
    const contents = server.requests[1]!.json.contents as { role: string; parts: Record<string, unknown>[] }[];
    expect(contents[1]).toEqual({
      role: 'model',
      parts: [
        { text: 'Let me look.', thoughtSignature: 'c2lnLXRleHQtMDAx' },
        { functionCall: { name: 'current_time', args: {}, id: expect.any(String) }, thoughtSignature: 'c2lnLWNhbGwtMDAy' },
      ],
    });
    expect(contents[2]).toMatchObject({ role: 'user', parts: [{ functionResponse: { name: 'current_time' } }] });
    const ends = events.filter((event) => event.type === 'message_end');
    expect(ends[0]).toMatchObject({ usage: { inputTokens: 2100, cacheReadTokens: 2048 } });
  }, 30_000);

  it('P18: unsubscribing mid-reply aborts the request: the server sees its connection close', async () => {
    const first = 'data: {"candidates": [{"content": {"parts": [{"text": "Thinking"}],"role": "model"},"index": 0}]}\r\n\r\n';
    server.reply({ headers: sse, body: first, then: 'hang' });
    const model = createGoogleGenerativeAI({ baseURL: `${server.url}/v1beta`, apiKey: 'g-loopback-key' })('gemini-test');
    const seen: string[] = [];
    await new Promise<void>((resolve) => {
      const subscription = languageModelProvider(model)({ messages: [{ role: 'user', content: 'Hi' }], tools: [] }).subscribe((event) => {
        seen.push(event.type);
        if (event.type === 'text_delta') {
          subscription.unsubscribe();
          resolve();
        }
      });
    });
    await server.requests[0]!.closed; // resolves only when the connection closes: the abort reached the server
    expect(seen).toEqual(['message_start', 'text_delta']);
  }, 30_000);
});
