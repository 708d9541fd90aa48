/**
 * "Decided where version 3 was silent": the library's choices that the brief made rules in version 4, each pinned
 * here by a spec named for it. (The MCP ones — `syncTools` removes only the tools it added, `maxTotalTimeoutMs` has
 * no default — are in spec/mcp; S3's last line in spec/sessions; O1's spans in spec/otel.)
 */
import { lastValueFrom, toArray } from 'rxjs';
import type { AgentMessage, LoopEvent, LoopEventOf, ProviderEvent } from '../src/index.js';
import { ToolRegistry, agentTool, initialViewModel, reduceViewModel, runEventedToolLoop, scriptedProvider } from '../src/index.js';
import { describeEvent } from '../src/testing/index.js';
import { redact } from '../src/providers/http/error-text.js';
import { OpenAIResponsesTranslator } from '../src/providers/openai-responses-translator.js';

const ask: AgentMessage[] = [{ role: 'user', content: 'go' }];
const usage = { inputTokens: 0, outputTokens: 0 };

/** An outer loop that calls the agent tool `researcher` once, whose inner loop is `inner`. */
async function outerRun(inner: () => ReturnType<typeof runEventedToolLoop>): Promise<LoopEvent[]> {
  const registry = new ToolRegistry().register(agentTool({ name: 'researcher', description: 'researches', input: { q: 'what' }, agent: inner }));
  const provider = scriptedProvider([
    [{ type: 'message_start' }, { type: 'tool_call', call: { id: 'r1', name: 'researcher', input: { q: 'x' } } }, { type: 'message_end', stopReason: 'toolUse' }],
    [{ type: 'message_start' }, { type: 'text_delta', text: 'done' }, { type: 'message_end', stopReason: 'stop' }],
  ]);
  return lastValueFrom(runEventedToolLoop({ provider, registry, messages: ask }).pipe(toArray()));
}

describe('decided where version 3 was silent', () => {
  it('decided A1: an inner event without text of its own — message_end too — carries describeEvent’s line, not the text so far', async () => {
    const inner = () =>
      runEventedToolLoop({
        provider: scriptedProvider([[{ type: 'message_start' }, { type: 'text_delta', text: 'Found it.' }, { type: 'message_end', stopReason: 'stop' }]]),
        registry: new ToolRegistry(),
        messages: ask,
      });
    const updates = (await outerRun(inner)).filter((e): e is LoopEventOf<'tool_update'> => e.type === 'tool_update');
    const byType = new Map(updates.map((u) => [u.event!.type, u]));
    expect(byType.get('text_delta')!.content).toBe('Found it.'); // the inner text so far
    for (const type of ['turn_start', 'message_start', 'message_end', 'turn_end', 'loop_end'] as const) {
      const update = byType.get(type)!;
      expect(update.content).toBe(describeEvent(update.event!));
    }
    expect(byType.get('message_end')!.content).not.toBe('Found it.');
  });

  it('decided A2: an inner loop_end that is no success, without an errorMessage, gives `error: sub-agent NAME ended with REASON`', async () => {
    const ended: ProviderEvent[] = [{ type: 'message_start' }, { type: 'message_end', stopReason: 'error' }];
    const events = await outerRun(() => runEventedToolLoop({ provider: scriptedProvider([ended]), registry: new ToolRegistry(), messages: ask }));
    const result = events.find((e): e is LoopEventOf<'tool_result'> => e.type === 'tool_result')!;
    expect(result.message).toMatchObject({ isError: true, content: 'error: sub-agent researcher ended with error' });
  });

  it('decided C4: after a turn’s last tool_result the status stays `tools` until the next turn_start or loop_end', async () => {
    const registry = new ToolRegistry().register({ name: 'clock', description: 'the time', input: {}, handler: async () => '12:00' });
    const provider = scriptedProvider([
      [{ type: 'message_start' }, { type: 'tool_call', call: { id: 'c', name: 'clock', input: {} } }, { type: 'message_end', stopReason: 'toolUse' }],
      [{ type: 'message_start' }, { type: 'text_delta', text: 'noon' }, { type: 'message_end', stopReason: 'stop' }],
    ]);
    const events = await lastValueFrom(runEventedToolLoop({ provider, registry, messages: ask }).pipe(toArray()));
    let state = initialViewModel;
    const seen: string[] = [];
    for (const event of events) {
      state = reduceViewModel(state, event);
      seen.push(`${event.type}:${state.status}`);
    }
    const last = seen.indexOf('tool_result:tools');
    expect(last).toBeGreaterThan(-1);
    // the result comes after the reply's message_end (a Promise settles later): `tools` until turn 2 starts
    expect(seen.slice(last)).toEqual(['tool_result:tools', 'turn_end:tools', 'turn_start:streaming', 'message_start:streaming', 'text_delta:streaming', 'message_end:streaming', 'turn_end:streaming', 'loop_end:done']);
    const aborted = reduceViewModel(reduceViewModel({ ...initialViewModel, status: 'tools' }, { type: 'turn_end', turn: 1, assistant: { role: 'assistant', content: '', stopReason: 'toolUse' }, toolResults: [], messages: [], usage }), { type: 'loop_end', reason: 'aborted', assistant: { role: 'assistant', content: '', stopReason: 'aborted' }, messages: [], usage });
    expect(aborted.status).toBe('aborted');
  });

  it('decided P2: a hyphen ends a word — a key beside a hyphen is redacted, a key inside a word is not', () => {
    const key = 'sk-test-12345678';
    expect(redact(`key-${key}-rejected`, [key])).toBe('key-[redacted]-rejected');
    expect(redact(`x${key}`, [key])).toBe(`x${key}`);
    expect(redact(`${key}_2`, [key])).toBe(`${key}_2`);
  });

  it('decided P14: a server that sends neither item ids nor output_index has its calls told apart by the order of response.output_item.added', () => {
    const ev = (type: string, fields: object = {}) => ({ event: type, data: JSON.stringify({ type, ...fields }) });
    const call = (callId: string, name: string) => ({ type: 'function_call', call_id: callId, name, arguments: '' });
    const stream = new OpenAIResponsesTranslator();
    const events = [
      ev('response.output_item.added', { item: call('call_a', 'first') }),
      ev('response.function_call_arguments.delta', { delta: '{"a":' }),
      ev('response.function_call_arguments.delta', { delta: '1}' }),
      ev('response.output_item.added', { item: call('call_b', 'second') }),
      ev('response.function_call_arguments.delta', { delta: '{"b":2}' }),
      ev('response.completed', { response: { status: 'completed' } }),
    ].flatMap((event) => stream.next(event));
    const calls = events.flatMap((e) => (e.type === 'tool_call' ? [e.call] : []));
    expect(calls).toEqual([
      { id: 'call_a', name: 'first', input: { a: 1 } },
      { id: 'call_b', name: 'second', input: { b: 2 } },
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'message_end', stopReason: 'toolUse' });
  });
});

