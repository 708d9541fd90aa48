import type { AgentMessage, ToolCall } from 'rx-tool-loop';
import { assertValidHistory } from 'rx-tool-loop/testing';

const user: AgentMessage = { role: 'user', content: 'go' };
const asks = (...ids: string[]): AgentMessage => ({
  role: 'assistant',
  content: '',
  stopReason: 'toolUse',
  toolCalls: ids.map((id): ToolCall => ({ id, name: `t${id}`, input: {} })),
});
const result = (id: string): AgentMessage => ({ role: 'toolResult', toolCallId: id, toolName: `t${id}`, content: 'ok', isError: false });
const answer: AgentMessage = { role: 'assistant', content: 'done', stopReason: 'stop' };

describe('assertValidHistory', () => {
  it.each<[string, AgentMessage[]]>([
    ['empty', []],
    ['no calls', [user, answer]],
    ['calls answered in call order', [user, asks('1', '2'), result('1'), result('2'), answer]],
    ['two rounds', [user, asks('1'), result('1'), asks('2'), result('2')]],
  ])('accepts %s', (_, messages) => {
    expect(() => assertValidHistory(messages)).not.toThrow();
  });

  it.each<[string, AgentMessage[], string]>([
    ['a call without a result', [user, asks('1', '2'), result('1'), answer], 'messages[1]: the call 2 (t2) has no result right after its assistant message'],
    ['a call without a result at the end', [user, asks('1')], 'messages[1]: the call 1 (t1) has no result right after its assistant message'],
    ['a result that answers no call', [user, result('9')], 'messages[1]: the result for 9 (t9) answers no call of the assistant message before it'],
    ['a result of another call', [user, asks('1'), result('9')], 'messages[2]: the result for 9 (t9) answers no call of the assistant message before it'],
    ['a duplicate result', [user, asks('1'), result('1'), result('1')], 'messages[3]: a second result for 1'],
    ['a result that names another tool than its call', [user, asks('1'), { role: 'toolResult', toolCallId: '1', toolName: 'other', content: 'ok', isError: false }], 'messages[2]: the result for 1 names the tool other, its call t1'],
    ['results out of call order', [user, asks('1', '2'), result('2'), result('1')], 'messages[2]: the result for 2 comes before the one for 1: results must be in call order'],
  ])('refuses %s, naming the index', (_, messages, problem) => {
    expect(() => assertValidHistory(messages)).toThrow(new Error(`assertValidHistory: ${problem}`));
  });
});
