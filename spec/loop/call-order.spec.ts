import { AgentMessage, ToolRegistry, runEventedToolLoop, scriptedProvider } from '../../src/index.js';
import { inCallOrder } from '../../src/loop/call-order.js';
import { assertValidHistory } from '../../src/testing/index.js';
import { answerTurn, collectSync, loopEndOf, only, tool } from '../support/events.js';

const user: AgentMessage = { role: 'user', content: 'go' };
const asks = (...ids: string[]): AgentMessage => ({ role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: ids.map((id) => ({ id, name: 'read', input: {} })) });
const result = (id: string): AgentMessage => ({ role: 'toolResult', toolCallId: id, toolName: 'read', content: `read ${id}`, isError: false });
const answer: AgentMessage = { role: 'assistant', content: 'done', stopReason: 'stop' };
const ids = (messages: readonly AgentMessage[]) => messages.map((m) => (m.role === 'toolResult' ? m.toolCallId : m.role));

describe('R4 a saved history with results out of call order (left open in version 2, now decided)', () => {
  it('R4: inCallOrder puts each turn\'s results in call order, in a copy', () => {
    const saved = [user, asks('a', 'b', 'c'), result('c'), result('a'), result('b'), answer, { role: 'user', content: 'more' } as AgentMessage, asks('d', 'e'), result('e'), result('d')];
    const before = saved.slice();
    const ordered = inCallOrder(saved);
    expect(ids(ordered)).toEqual(['user', 'assistant', 'a', 'b', 'c', 'assistant', 'user', 'assistant', 'd', 'e']);
    expect(saved).toEqual(before); // never mutated (R1)
    expect(ordered).not.toBe(saved);
    assertValidHistory(ordered);
  });

  it('R4: a history already in call order comes back equal; a partial turn keeps the results it has, in call order', () => {
    const inOrder = [user, asks('a', 'b'), result('a'), result('b'), answer];
    expect(inCallOrder(inOrder)).toEqual(inOrder);
    expect(ids(inCallOrder([user, asks('a', 'b', 'c'), result('c'), result('a')]))).toEqual(['user', 'assistant', 'a', 'c']);
  });

  it('R4: the loop accepts such a history and hands it out in call order', () => {
    const saved = [user, asks('a', 'b'), result('b'), result('a'), answer, { role: 'user', content: 'again' } as AgentMessage];
    const provider = scriptedProvider([answerTurn('ok')]);
    const { values, completed } = collectSync(runEventedToolLoop({ provider, registry: new ToolRegistry(), messages: saved }));
    expect(completed).toBe(true);
    expect(ids(provider.inputs[0]!.messages)).toEqual(['user', 'assistant', 'a', 'b', 'assistant', 'user']);
    expect(ids(loopEndOf(values).messages)).toEqual(['user', 'assistant', 'a', 'b', 'assistant', 'user', 'assistant']);
    assertValidHistory(loopEndOf(values).messages);
  });

  it('R4, R22: a saved run with results out of order resumes with every result in call order', () => {
    const runs: string[] = [];
    const registry = new ToolRegistry().register(tool('read', (_input, { call }) => (runs.push(call.id), `read ${call.id}`)));
    const saved = [user, asks('a', 'b', 'c'), result('c'), result('a')];
    const { values } = collectSync(runEventedToolLoop({ provider: scriptedProvider([answerTurn('ok')]), registry, messages: saved }));
    expect(runs).toEqual(['b']);
    expect(ids(only(values, 'turn_end')[0]!.messages)).toEqual(['user', 'assistant', 'a', 'b', 'c']);
    expect(ids(only(values, 'tool_result')[0]!.messages)).toEqual(['user', 'assistant', 'a', 'b', 'c']); // R29 too
  });
});
