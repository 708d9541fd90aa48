import { lastValueFrom, toArray } from 'rxjs';
import { AgentMessage, ToolRegistry, runEventedToolLoop, scriptedProvider } from '../../src/index.js';
import { checkMessages } from '../../src/loop/check-messages.js';
import { answerTurn, call, loopEndOf, tool, toolTurn } from '../support/events.js';

const user = (content = 'hi'): AgentMessage => ({ role: 'user', content });
const system = (content = 'Be brief.'): AgentMessage => ({ role: 'system', content });
const asks = (...ids: string[]): AgentMessage => ({
  role: 'assistant',
  content: '',
  stopReason: 'toolUse',
  toolCalls: ids.map((id) => ({ id, name: 'read', input: {} })),
});
const answer = (content = 'done'): AgentMessage => ({ role: 'assistant', content, stopReason: 'stop' });
const result = (toolCallId: string, extra: object = {}): AgentMessage =>
  ({ role: 'toolResult', toolCallId, toolName: 'read', content: 'x', isError: false, ...extra }) as AgentMessage;

/** Calls the loop with `messages` (never subscribed: the check runs at call time). */
const loopWith = (messages: readonly unknown[]) => () =>
  runEventedToolLoop({ provider: scriptedProvider([answerTurn('ok')]), registry: new ToolRegistry(), messages: messages as AgentMessage[] });

describe('R21 messages are checked', () => {
  describe('a history the APIs would reject throws a TypeError naming messages[N], at call time', () => {
    const call0 = (extra: object) => ({ role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [{ id: 'c1', name: 'read', input: {}, ...extra }] });
    it.each<[string, readonly unknown[], string]>([
      ['a message that is not an object', [user(), 'hi'], 'messages[1] must be an object (got "hi", a string)'],
      ['a hole', [undefined], 'messages[0] must be an object (got undefined)'],
      ['null', [null], 'messages[0] must be an object (got null)'],
      ['an unknown role', [{ role: 'bot', content: 'hi' }], `messages[0] has an unknown role, not 'system', 'user', 'assistant' or 'toolResult' (got "bot", a string)`],
      ['no role', [{ content: 'hi' }], `messages[0] has an unknown role, not 'system', 'user', 'assistant' or 'toolResult' (got undefined)`],
      ['a user content that is not a string', [{ role: 'user', content: 3 }], 'messages[0].content must be a string (got 3, a number)'],
      ['a system content that is not a string', [{ role: 'system', content: null }], 'messages[0].content must be a string (got null)'],
      [
        'an assistant content that is not a string',
        [user(), { role: 'assistant', content: [{ type: 'text', text: 'hi' }], stopReason: 'stop' }],
        'messages[1].content must be a string (got [{"type":"text","text":"hi"}], an array)',
      ],
      ['a result content that is not a string', [asks('c1'), result('c1', { content: { ok: true } })], 'messages[1].content must be a string (got {"ok":true}, an object)'],
      [
        'toolCalls that are not an array',
        [{ role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: { id: 'c1' } }],
        'messages[0].toolCalls must be an array (got {"id":"c1"}, an object)',
      ],
      ['a call that is not an object', [{ role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: ['read'] }], 'messages[0].toolCalls[0] must be an object (got "read", a string)'],
      ['a call without a string id', [call0({ id: 7 })], 'messages[0].toolCalls[0].id must be a string (got 7, a number)'],
      ['a call without a name', [call0({ name: undefined })], 'messages[0].toolCalls[0].name is a tool name that the APIs reject: it must match ^[a-zA-Z0-9_-]{1,64}$ (got undefined)'],
      ['a call whose name has a space', [call0({ name: 'get weather' })], 'messages[0].toolCalls[0].name is a tool name that the APIs reject: it must match ^[a-zA-Z0-9_-]{1,64}$ (got "get weather", a string)'],
      ['a call whose name has a dot', [call0({ name: 'multi_tool_use.parallel' })], 'messages[0].toolCalls[0].name is a tool name that the APIs reject: it must match ^[a-zA-Z0-9_-]{1,64}$ (got "multi_tool_use.parallel", a string)'],
      ['a call whose name is empty', [call0({ name: '' })], 'messages[0].toolCalls[0].name is a tool name that the APIs reject: it must match ^[a-zA-Z0-9_-]{1,64}$ (got "", a string)'],
      ['a call whose name is 65 characters long', [call0({ name: 'a'.repeat(65) })], `messages[0].toolCalls[0].name is a tool name that the APIs reject: it must match ^[a-zA-Z0-9_-]{1,64}$ (got "${'a'.repeat(56)}..., a string)`],
      ['a call whose input is null', [call0({ input: null })], 'messages[0].toolCalls[0].input must be an object (got null)'],
      ['a call whose input is an array', [call0({ input: ['a'] })], 'messages[0].toolCalls[0].input must be an object (got ["a"], an array)'],
      ['a call whose input is a JSON string', [call0({ input: '{}' })], 'messages[0].toolCalls[0].input must be an object (got "{}", a string)'],
      ['two calls of one message with one id', [asks('c1', 'c1')], 'messages[0].toolCalls[1].id repeats the id of an earlier call of the same message (got "c1", a string)'],
      ['a result whose toolCallId is not a string', [asks('c1'), result('c1', { toolCallId: 1 })], 'messages[1].toolCallId must be a string (got 1, a number)'],
      ['a result whose toolName the APIs reject', [asks('c1'), result('c1', { toolName: 'read file' })], 'messages[1].toolName is a tool name that the APIs reject: it must match ^[a-zA-Z0-9_-]{1,64}$ (got "read file", a string)'],
      ['a result without toolName', [asks('c1'), result('c1', { toolName: undefined })], 'messages[1].toolName is a tool name that the APIs reject: it must match ^[a-zA-Z0-9_-]{1,64}$ (got undefined)'],
      ['a result whose isError is not a boolean', [asks('c1'), result('c1', { isError: 'no' })], 'messages[1].isError must be a boolean (got "no", a string)'],
      ['a result first', [result('c1')], 'messages[0] is a tool result whose toolCallId answers no earlier call (got "c1", a string)'],
      ['a result that answers no earlier call', [user(), asks('c1'), result('c9')], 'messages[2] is a tool result whose toolCallId answers no earlier call (got "c9", a string)'],
      ['a result before its call', [user(), result('c1'), asks('c1')], 'messages[1] is a tool result whose toolCallId answers no earlier call (got "c1", a string)'],
      ['a second result for one call', [asks('c1', 'c2'), result('c1'), result('c1')], 'messages[2] is a second result for a call of messages[0] (got "c1", a string)'],
      [
        'a result after a user message',
        [asks('c1'), result('c1'), user(), result('c1')],
        'messages[3] is a tool result for a call of messages[0] that does not follow it: a result must come after the assistant message whose call it answers, with only other results between them (got "c1", a string)',
      ],
      [
        "a result for an older assistant message's call",
        [asks('c1'), result('c1'), asks('c2'), result('c1')],
        'messages[3] is a tool result for a call of messages[0] that does not follow it: a result must come after the assistant message whose call it answers, with only other results between them (got "c1", a string)',
      ],
      [
        'a tool call left without a result before the last assistant message',
        [user(), asks('c1', 'c2'), result('c1'), answer()],
        'messages[1] has a tool call left without a result: "c2" (read) gets none before messages[3], an assistant message; only the last assistant message may still wait for results',
      ],
      [
        'a tool call left without a result before a user message',
        [user(), asks('c1'), user('go on')],
        'messages[1] has a tool call left without a result: "c1" (read) gets none before messages[2], a user message; only the last assistant message may still wait for results',
      ],
      [
        'a tool call left without a result before a system message',
        [user(), asks('c1'), system()],
        'messages[1] has a tool call left without a result: "c1" (read) gets none before messages[2], a system message; only the last assistant message may still wait for results',
      ],
    ])('%s', (_, messages, message) => {
      expect(loopWith(messages)).toThrow(TypeError);
      expect(loopWith(messages)).toThrow(`runEventedToolLoop: ${message}`);
    });

    it('the first broken message is the one named', () => {
      expect(loopWith([user(), { role: 'user', content: 1 }, { role: 'bot' }])).toThrow(/^runEventedToolLoop: messages\[1\]\.content/);
    });

    it('other callers name themselves', () => {
      expect(() => checkMessages([7], 'conversation')).toThrow(new TypeError('conversation: messages[0] must be an object (got 7, a number)'));
    });
  });

  describe('accepted histories', () => {
    it.each<[string, readonly AgentMessage[]]>([
      ['an empty history (a provider with a system prompt can start from nothing)', []],
      ['a system message first', [system(), user()]],
      ['system messages anywhere a user message may stand', [system(), user(), answer(), system('Now in French.'), user()]],
      ['only a system message', [system()]],
      ['a whole tool round', [user(), asks('c1', 'c2'), result('c1'), result('c2'), answer()]],
      ['results out of call order', [user(), asks('c1', 'c2'), result('c2'), result('c1'), answer()]],
      ['an assistant message with an empty toolCalls', [user(), { role: 'assistant', content: 'hm', stopReason: 'stop', toolCalls: [] }, user()]],
      ['one id reused by calls of different turns', [user(), asks('read'), result('read'), asks('read'), result('read'), answer()]],
      ['the names of R17 and names of 64 characters', [{ role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: ['__proto__', 'constructor', 'toString', 'a'.repeat(64), 'A-z_0-9'].map((name, i) => ({ id: `c${i}`, name, input: {} })) }]],
      // saved while tools ran, or paused for approval: the loop resumes it
      ['a resumable tail: the last assistant message has calls without results', [user(), asks('c1', 'c2')]],
      ['a resumable tail: only results of some of its calls follow it', [user(), asks('c1', 'c2', 'c3'), result('c2')]],
      ['a resumable tail after whole rounds', [user(), asks('c1'), result('c1'), asks('c2', 'c3'), result('c3')]],
    ])('%s', (_, messages) => {
      expect(loopWith(messages)).not.toThrow();
      expect(() => checkMessages(messages)).not.toThrow();
    });

    it('a system message is carried like any message and reaches the provider', async () => {
      const provider = scriptedProvider([answerTurn('ok')]);
      const messages: AgentMessage[] = [system(), user()];
      const end = loopEndOf(await lastValueFrom(runEventedToolLoop({ provider, registry: new ToolRegistry(), messages }).pipe(toArray())));
      expect(provider.inputs[0]!.messages).toEqual(messages);
      expect(end.messages).toEqual([...messages, { role: 'assistant', content: 'ok', stopReason: 'stop' }]);
    });

    it("a real loop_end history survives a JSON round trip and starts a new loop", async () => {
      const registry = new ToolRegistry()
        .register(tool('read', () => ({ content: 'text', details: { bytes: 4 } })))
        .register(tool('fail', () => Promise.reject(new Error('boom'))));
      const provider = scriptedProvider([toolTurn(call('read', {}, 'c1'), call('fail', {}, 'c2'), call('missing', {}, 'c3')), answerTurn('done')]);
      const first = loopEndOf(await lastValueFrom(runEventedToolLoop({ provider, registry, messages: [system(), user()] }).pipe(toArray())));
      expect(first.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'toolResult', 'toolResult', 'toolResult', 'assistant']);
      const saved = JSON.parse(JSON.stringify(first.messages)) as AgentMessage[];
      expect(saved).toEqual(first.messages);
      const next = runEventedToolLoop({ provider: scriptedProvider([answerTurn('again')]), registry, messages: [...saved, user('more')] });
      expect(loopEndOf(await lastValueFrom(next.pipe(toArray()))).reason).toBe('stop');
    });

    it('an aborted run (every call answered by error: aborted) is accepted again', async () => {
      const controller = new AbortController();
      const registry = new ToolRegistry().register(tool('wait', () => new Promise<string>(() => undefined)));
      const run = runEventedToolLoop({ provider: scriptedProvider([toolTurn(call('wait', {}, 'c1'))]), registry, messages: [user()], signal: controller.signal });
      const events = lastValueFrom(run.pipe(toArray()));
      controller.abort();
      const end = loopEndOf(await events);
      expect(end.reason).toBe('aborted');
      expect(loopWith(JSON.parse(JSON.stringify(end.messages)) as AgentMessage[])).not.toThrow();
    });

    it('checks a long history in linear time', () => {
      const rounds = 50_000;
      const messages: AgentMessage[] = [user()];
      for (let i = 0; i < rounds; i++) messages.push(asks(`a${i}`, `b${i}`), result(`a${i}`), result(`b${i}`));
      const started = performance.now();
      checkMessages(messages);
      expect(performance.now() - started).toBeLessThan(2000); // 200,001 messages: about 50 ms; a quadratic check takes minutes
    });
  });
});

describe('R21 a call input that JSON cannot write is refused (left open in version 2, now decided)', () => {
  const withInput = (input: unknown): AgentMessage[] =>
    [user(), { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [{ id: 'c1', name: 'read', input }] }, result('c1'), answer()] as AgentMessage[];

  it('R21: a cyclic call input is refused at call time, naming the message', () => {
    const cyclic: Record<string, unknown> = { path: 'a' };
    cyclic.self = cyclic;
    expect(loopWith(withInput(cyclic))).toThrow(TypeError);
    expect(loopWith(withInput(cyclic))).toThrow(/^runEventedToolLoop: messages\[1\]\.toolCalls\[0\]\.input does not survive JSON\.stringify: Converting circular structure to JSON/);
  });

  it('R21: a BigInt in a call input is refused at call time, naming the message', () => {
    expect(loopWith(withInput({ size: 10n }))).toThrow(
      new TypeError('runEventedToolLoop: messages[1].toolCalls[0].input does not survive JSON.stringify: Do not know how to serialize a BigInt'),
    );
  });

  it('R21: an input whose toJSON throws is refused too; a plain one passes', () => {
    expect(loopWith(withInput({ toJSON: () => { throw new Error('no JSON'); } }))).toThrow(/input does not survive JSON\.stringify: no JSON$/);
    expect(loopWith(withInput({ path: 'a', deep: { list: [1, 'two', null] } }))).not.toThrow();
  });
});
