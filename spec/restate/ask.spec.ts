/** D2 on an engine in memory: one `ask` reads the history, runs one durable loop and writes the history once. */
import { ToolRegistry, scriptedProvider } from '../../src/index.js';
import type { AgentMessage } from '../../src/index.js';
import { askConversation } from '../../src/restate/ask.js';
import { call, end, start, text, tool } from '../support/events.js';
import { MemoryJournal } from './support/memory-journal.js';

/** A Restate ObjectContext's part that `ask` uses: state in a Map (writes counted), steps in a memory journal. */
function objectContext(key: string, state = new Map<string, unknown>()) {
  const journal = new MemoryJournal();
  const writes: { name: string; value: unknown }[] = [];
  return {
    writes,
    state,
    key,
    run: journal.run.bind(journal),
    awakeable: journal.awakeable.bind(journal),
    get: async <T>(name: string) => (state.has(name) ? (structuredClone(state.get(name)) as T) : null),
    set: <T>(name: string, value: T) => {
      writes.push({ name, value });
      state.set(name, structuredClone(value));
    },
  };
}

const registry = () => new ToolRegistry().register(tool('step', ({ n }) => `step ${n}`, { n: 'which' }));
const threeTurns = () =>
  scriptedProvider([
    [start, call('step', { n: '1' }, 'c1'), end('toolUse')],
    [start, call('step', { n: '2' }, 'c2'), end('toolUse')],
    [start, text('all '), text('done'), end('stop')],
  ]);

describe('askConversation', () => {
  it('D2: ask appends the prompt to the history in state and writes the history once, at loop_end, however many turns the loop takes', async () => {
    const ctx = objectContext('k1');
    const answer = await askConversation(ctx, () => ({ provider: threeTurns(), registry: registry() }), 'go');
    expect(answer).toEqual({ reason: 'stop', assistant: { role: 'assistant', content: 'all done', stopReason: 'stop' }, usage: { inputTokens: 0, outputTokens: 0 } });
    expect(ctx.writes).toHaveLength(1);
    const messages = ctx.writes[0]!.value as AgentMessage[];
    expect(ctx.writes[0]!.name).toBe('messages');
    expect(messages.map((m) => `${m.role} ${m.content}`)).toEqual(['user go', 'assistant ', 'toolResult step 1', 'assistant ', 'toolResult step 2', 'assistant all done']);
  });

  it('D2, C1: the next ask starts from the saved history; setup gets the conversation key', async () => {
    const state = new Map<string, unknown>();
    const keys: string[] = [];
    const setup = (key: string) => (keys.push(key), { provider: scriptedProvider([(input) => [start, text(`seen ${input.messages.length}`), end('stop')]]), registry: registry() });
    await askConversation(objectContext('k2', state), setup, 'one');
    const second = await askConversation(objectContext('k2', state), setup, { role: 'user', content: 'two' });
    expect(second.assistant.content).toBe('seen 3');
    expect((state.get('messages') as AgentMessage[]).map((m) => m.content)).toEqual(['one', 'seen 1', 'two', 'seen 3']);
    expect(keys).toEqual(['k2', 'k2']);
  });

  it('D2: a prompt that is neither a string nor a user message is refused, naming it, and nothing is written', async () => {
    const ctx = objectContext('k3');
    await expect(askConversation(ctx, () => ({ provider: threeTurns(), registry: registry() }), { role: 'assistant', content: 'x' })).rejects.toThrow(
      "ask: the prompt must be a string or { role: 'user', content: string } (got {\"role\":\"assistant\",\"content\":\"x\"}, an object)",
    );
    expect(ctx.writes).toEqual([]);
  });
});
