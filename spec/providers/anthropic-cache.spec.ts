/**
 * P19: `anthropicProvider`'s prompt-cache breakpoints — where `cache: 'auto'` (the default) puts them, that
 * `'off'` puts none — and the cache reads and writes of a run in `usage` (R27) and on the chat spans (O2). The bodies
 * type-checked against the official SDK: anthropic-cache-types.spec.ts.
 */
import { ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS, ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS } from '@opentelemetry/semantic-conventions/incubating';
import { lastValueFrom, toArray } from 'rxjs';
import { type LoopEvent, ToolRegistry, anthropicProvider, runEventedToolLoop } from 'rx-tool-loop';
import { traceLoop } from 'rx-tool-loop/otel';
import { withCacheBreakpoints } from '../../src/providers/anthropic-cache.js';
import { anthropicRequest } from '../../src/providers/anthropic.js';
import { memoryTracer, spanNamed } from '../otel/memory-tracer.js';
import { history, timeSpec, weatherSpec } from './conversation';
import { LoopbackServer, fixture } from './loopback-server';
import { breakpoints } from './cache-breakpoints';

const EPHEMERAL = { type: 'ephemeral' };

let server: LoopbackServer;
beforeAll(async () => {
  server = await LoopbackServer.start();
});
afterAll(() => server.stop());
beforeEach(() => server.reset());

/** An s04 reply of the fixtures with the cache counts a real second turn reports. */
function withCounts(name: string, read: number, write: number): string {
  return fixture(name)
    .toString('utf8')
    .replace('"cache_creation_input_tokens":0,"cache_read_input_tokens":0', `"cache_creation_input_tokens":${write},"cache_read_input_tokens":${read}`);
}

describe('anthropicProvider: prompt caching (P19)', () => {
  it('P19: cache auto (the default) marks the last tool, the system prompt and the last block of the last message — 3 of the API\'s 4 breakpoints', async () => {
    server.reply({ body: fixture('anthropic/text.sse') });
    const provider = anthropicProvider({ model: 'claude-sonnet-4-5', baseURL: server.url, apiKey: 'sk-ant-test', system: 'Be brief.' });
    await lastValueFrom(provider({ messages: history, tools: [weatherSpec, timeSpec] }).pipe(toArray()));
    const body = server.requests[0]!.json as { system: unknown; tools: object[]; messages: { role: string; content: unknown }[] };
    expect(breakpoints(body)).toEqual(['system.0', 'messages.6.content.0', 'tools.1']);
    expect(body.system).toEqual([{ type: 'text', text: 'Be brief.', cache_control: EPHEMERAL }]);
    expect(body.tools[1]).toEqual({ name: 'current_time', description: timeSpec.description, input_schema: { type: 'object', properties: {}, required: [] }, cache_control: EPHEMERAL });
    expect(body.messages[6]).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_3', content: '2026-01-01T00:00:00Z', is_error: false, cache_control: EPHEMERAL }] });
  });

  it('P19: cache off sends no breakpoint, and the body is what it was before P19', async () => {
    server.reply({ body: fixture('anthropic/text.sse') });
    const provider = anthropicProvider({ model: 'claude-sonnet-4-5', baseURL: server.url, apiKey: 'sk-ant-test', system: 'Be brief.', cache: 'off' });
    await lastValueFrom(provider({ messages: history, tools: [weatherSpec] }).pipe(toArray()));
    expect(breakpoints(server.requests[0]!.json)).toEqual([]);
    expect(server.requests[0]!.json).toEqual(anthropicRequest('claude-sonnet-4-5', 4096, 'Be brief.', { messages: history, tools: [weatherSpec] }));
  });

  it('P19: a prompt of plain text becomes a text block to carry its mark; no tools and no system, no marks for them; a thinking block or an empty text is never marked', () => {
    expect(withCacheBreakpoints({ messages: [{ role: 'user', content: 'Hi' }] })).toEqual({
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: EPHEMERAL }] }],
    });
    const thinkingLast = { messages: [{ role: 'assistant', content: [{ type: 'text', text: 'a' }, { type: 'thinking', thinking: 't', signature: 's' }] }] };
    expect(withCacheBreakpoints(thinkingLast)).toEqual(thinkingLast);
    expect(withCacheBreakpoints({ messages: [{ role: 'user', content: '' }] })).toEqual({ messages: [{ role: 'user', content: '' }] });
    expect(withCacheBreakpoints({ messages: [] })).toEqual({ messages: [] });
  });

  it('P19: marking copies — the body it was given, and its blocks, are unchanged', () => {
    const tools = [{ name: 'a', description: 'a', input_schema: { type: 'object' } }];
    const messages = [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }];
    const body = { system: 'S', tools, messages };
    const before = JSON.stringify(body);
    withCacheBreakpoints(body);
    expect(JSON.stringify(body)).toBe(before);
  });

  it('P19: a cache that is neither auto nor off is a TypeError when the provider is made', () => {
    expect(() => anthropicProvider({ model: 'm', cache: 'on' as never })).toThrow(new TypeError('anthropicProvider: cache must be \'auto\' or \'off\' (got "on", a string)'));
  });

  it('P19: a two-turn run — the second request marks its own last message (the results), the first turn\'s write and the second\'s read are in usage (R27) and on the chat spans (O2)', async () => {
    server.reply({ body: withCounts('anthropic/s04-tool-use.sse', 0, 1800) }, { body: withCounts('anthropic/s04-answer.sse', 1800, 0) });
    const { tracer, finished } = memoryTracer();
    const registry = new ToolRegistry().register({ name: 'current_time', description: timeSpec.description, input: {}, handler: () => '2026-01-01T00:00:00Z' });
    const provider = anthropicProvider({ model: 'claude-sonnet-4-5', baseURL: server.url, apiKey: 'sk-ant-test', system: 'A long system prompt.' });
    const events: LoopEvent[] = await lastValueFrom(
      runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: '现在几点？' }] }).pipe(traceLoop({ tracer, provider }), toArray()),
    );
    expect(server.requests.map((request) => breakpoints(request.json))).toEqual([
      ['system.0', 'messages.0.content.0', 'tools.0'],
      ['system.0', 'messages.2.content.0', 'tools.0'],
    ]);
    const last = events[events.length - 1] as Extract<LoopEvent, { type: 'loop_end' }>;
    expect(last.usage).toMatchObject({ cacheReadTokens: 1800, cacheWriteTokens: 1800 });
    expect(spanNamed(finished(), 'chat claude-sonnet-4-5', 0).attributes).toMatchObject({ [ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS]: 1800, [ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: 0 });
    expect(spanNamed(finished(), 'chat claude-sonnet-4-5', 1).attributes).toMatchObject({ [ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS]: 0, [ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: 1800 });
  });
});
