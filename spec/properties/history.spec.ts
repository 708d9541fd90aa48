/**
 * The property suite's own history check (support/history.ts) against histories written by hand: it takes
 * what R4, R21 and R22 take and refuses what they refuse, so the oracle is not the code it checks.
 */
import type { AgentMessage } from '../../src/index.js';
import { historyProblem, jsonProblem } from './support/history.js';

const user: AgentMessage = { role: 'user', content: 'go' };
type Assistant = Extract<AgentMessage, { role: 'assistant' }>;
const asks = (...ids: string[]): Assistant => ({
  role: 'assistant',
  content: '',
  stopReason: 'toolUse',
  toolCalls: ids.map((id) => ({ id, name: 'tool', input: {} })),
});
const result = (id: string): AgentMessage => ({ role: 'toolResult', toolCallId: id, toolName: 'tool', content: 'ok', isError: false });
const answer: AgentMessage = { role: 'assistant', content: 'done', stopReason: 'stop' };

describe('the oracle\'s history check', () => {
  it('R4: takes a history whose calls are answered right after them, once each, in call order', () => {
    expect(historyProblem([])).toBeUndefined();
    expect(historyProblem([{ role: 'system', content: 'Be brief.' }, user, asks('a', 'b'), result('a'), result('b'), answer, user])).toBeUndefined();
  });

  it.each<[string, AgentMessage[], string]>([
    ['results out of call order', [user, asks('a', 'b'), result('b'), result('a')], 'call a of messages[1] comes first'],
    ['a second result for a call', [user, asks('a'), result('a'), result('a')], 'messages[3] answers a'],
    ['a result that answers no call', [user, asks('a'), result('x')], 'no call of messages[1]'],
    ['a result with no assistant before it', [user, result('a')], 'no assistant message with calls'],
    ['a result after a user message', [user, asks('a'), user, result('a')], 'messages[2] (user) comes before the result of call a'],
    ['a call left unanswered before the next assistant', [user, asks('a', 'b'), result('a'), answer], 'messages[3] (assistant) comes before the result of call b'],
    ['a call unanswered at the end', [user, asks('a')], 'the history ends before the result of call a'],
    ['two calls with one id', [user, asks('a', 'a'), result('a'), result('a')], 'an earlier call\'s of the same message'],
    ['a role no API knows', [{ role: 'tool', content: 'x' } as never], 'messages[0].role is "tool"'],
  ])('R4: refuses %s', (_, messages, problem) => {
    expect(historyProblem(messages)).toContain(problem);
  });

  it('R22, R29: with `waiting`, the last assistant may still wait for some results, those there in call order', () => {
    expect(historyProblem([user, asks('a', 'b', 'c')], { waiting: true })).toBeUndefined();
    expect(historyProblem([user, asks('a', 'b', 'c'), result('b')], { waiting: true })).toBeUndefined();
    expect(historyProblem([user, asks('a', 'b', 'c'), result('a'), result('c')], { waiting: true })).toBeUndefined();
    expect(historyProblem([user, asks('a', 'b', 'c'), result('c'), result('a')], { waiting: true })).toContain('messages[3] answers a');
    // only the last: an earlier assistant's calls are all answered before the next message
    expect(historyProblem([user, asks('a', 'b'), result('b'), answer], { waiting: true })).toContain('messages[3] (assistant) comes before the result of a call');
  });

  it('R21: with `fields`, what the APIs take: string contents, boolean isError, names the APIs accept, JSON-object inputs', () => {
    const good = [user, asks('a'), result('a')];
    expect(historyProblem(good, { fields: true })).toBeUndefined();
    expect(historyProblem([{ role: 'user', content: 3 } as never], { fields: true })).toContain('messages[0].content is not a string');
    expect(historyProblem([user, asks('a'), { ...result('a'), isError: 'no' } as never], { fields: true })).toContain('messages[2].isError is not a boolean');
    expect(historyProblem([user, { ...asks('a'), toolCalls: [{ id: 'a', name: 'a tool', input: {} }] }, result('a')], { fields: true })).toContain('toolCalls[0].name "a tool"');
    expect(historyProblem([user, { ...asks('a'), toolCalls: [{ id: 'a', name: 'tool', input: [] as never }] }, result('a')], { fields: true })).toContain('toolCalls[0].input is not a JSON object');
    // without `fields` (a provider's history may carry a hostile model's input as it came, R17)
    expect(historyProblem([user, { ...asks('a'), toolCalls: [{ id: 'a', name: 'tool', input: null as never }] }, result('a')])).toBeUndefined();
  });

  it('R21: a history survives JSON when JSON gives it back: jsonProblem names the first part it would change', () => {
    expect(jsonProblem([user, asks('a'), result('a'), { ...answer, usage: undefined } as never])).toBeUndefined();
    expect(jsonProblem([{ ...result('a'), details: { at: new Date(0) } }])).toBe('messages[0].details.at is not a plain object');
    expect(jsonProblem([{ ...result('a'), details: { n: NaN } }])).toBe('messages[0].details.n is NaN');
    expect(jsonProblem([{ ...result('a'), details: [1, undefined] }])).toBe('messages[0].details[1] is undefined');
    expect(jsonProblem([{ ...result('a'), details: { f: () => 1 } }])).toBe('messages[0].details.f is a function');
    expect(jsonProblem([{ ...result('a'), details: { n: BigInt(1) } }])).toBe('messages[0].details.n is a bigint');
  });
});
