import { EMPTY, NEVER, Observable, Subject, lastValueFrom, map, of, take, toArray } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import {
  AgentMessage,
  LoopEvent,
  MAX_TURNS,
  Provider,
  ProviderEvent,
  ToolRegistry,
  runEventedToolLoop,
  scriptedProvider,
} from '../src/index.js';
import { answerTurn, call, callOf, collectSync, end, loopEndOf, only, start, text, tool, toolTurn } from './support/events.js';

const ask = (content = 'hi'): AgentMessage[] => [{ role: 'user', content }];
const testScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

/** Loop events as short strings, so that marble expectations stay readable. */
function brief(event: LoopEvent): string {
  switch (event.type) {
    case 'turn_start':
      return `turn_start ${event.turn}`;
    case 'text_delta':
      return `text ${event.text}`;
    case 'tool_call':
      return `call ${event.call.name}`;
    case 'tool_update':
      return `update ${event.toolCallId}: ${event.content}`;
    case 'tool_result':
      return `result ${event.message.toolName}: ${event.message.content}`;
    case 'message_end':
      return `end ${event.stopReason}`;
    case 'turn_end':
      return `turn_end ${event.turn}: ${event.messages.map(describeMessage).join(', ')}`;
    case 'loop_end':
      return `loop_end ${event.reason}`;
    default:
      return event.type;
  }
}

function describeMessage(message: AgentMessage): string {
  if (message.role === 'toolResult') return `toolResult ${message.toolName}`;
  if (message.role === 'assistant') return `assistant ${message.stopReason}`;
  return 'user';
}

const ev = {
  s: start(),
  t: text('hi'),
  a: call('a1', 'a'),
  b: call('b1', 'b'),
  c: call('c1', 'c'),
  u: end('toolUse'),
  e: end('stop'),
};

/** A provider whose n-th subscription is `turns[n - 1]`. */
function turnsProvider(turns: Observable<ProviderEvent>[]): Provider {
  let n = 0;
  return () => turns[n++] ?? EMPTY;
}

describe('runEventedToolLoop', () => {
  describe('R1 cold and pure', () => {
    it('does nothing before subscribe', () => {
      const provider = jest.fn(scriptedProvider([answerTurn('ok')]));
      const loop = runEventedToolLoop({ provider, registry: new ToolRegistry(), messages: ask() });
      expect(provider).not.toHaveBeenCalled();
      collectSync(loop);
      expect(provider).toHaveBeenCalledTimes(1);
    });

    it('runs an independent loop for each subscription', () => {
      let turn = 0;
      const provider: Provider = () => scriptedProvider([turn++ % 2 === 0 ? toolTurn(call('c1', 'echo', { text: 'x' })) : answerTurn('done')])({ messages: [], tools: [] });
      const registry = new ToolRegistry().register(tool('echo', (input: Record<string, string>) => input.text!, { text: 't' }));
      const loop = runEventedToolLoop({ provider, registry, messages: ask() });
      const first = loopEndOf(collectSync(loop).values);
      const second = loopEndOf(collectSync(loop).values);
      expect(second).toEqual(first);
      expect(second.messages).not.toBe(first.messages);
      expect(first.messages).toHaveLength(4);
    });

    it('never mutates the caller messages and hands out a new array every time', () => {
      const messages: AgentMessage[] = [{ role: 'user', content: 'q' }];
      const snapshot = structuredClone(messages);
      Object.freeze(messages[0]);
      const provider = scriptedProvider([toolTurn(call('c1', 'now')), answerTurn('done')]);
      const registry = new ToolRegistry().register(tool('now', () => 'noon'));
      const events = collectSync(runEventedToolLoop({ provider, registry, messages: Object.freeze(messages) as AgentMessage[] })).values;
      expect(messages).toEqual(snapshot);

      const handedOut = [
        ...provider.inputs.map((input) => input.messages),
        ...only(events, 'turn_end').map((e) => e.messages),
        loopEndOf(events).messages,
      ];
      expect(new Set([messages, ...handedOut]).size).toBe(handedOut.length + 1);
    });

    it('a consumer that edits a handed-out history does not change what the model sees next', () => {
      const provider = scriptedProvider([toolTurn(call('c1', 'now')), answerTurn('done')]);
      const registry = new ToolRegistry().register(tool('now', () => 'noon'));
      runEventedToolLoop({ provider, registry, messages: ask() }).subscribe((event) => {
        if (event.type === 'turn_end') (event.messages as AgentMessage[]).push({ role: 'user', content: 'injected' });
      });
      expect(provider.inputs[1]!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult']);
    });
  });

  describe('R2 one provider call per turn', () => {
    it('emits turn_start, then calls the provider once with the history so far and the specs', () => {
      const provider = scriptedProvider([toolTurn(call('c1', 'now')), answerTurn('done')]);
      const registry = new ToolRegistry().register(tool('now', () => 'noon'));
      const events = collectSync(runEventedToolLoop({ provider, registry, messages: ask('time?') })).values;
      expect(events.map((e) => e.type)).toEqual([
        'turn_start', 'message_start', 'tool_call', 'tool_result', 'message_end', 'turn_end',
        'turn_start', 'message_start', 'text_delta', 'message_end', 'turn_end', 'loop_end',
      ]);
      expect(provider.inputs).toHaveLength(2);
      expect(provider.inputs[0]).toEqual({ messages: ask('time?'), tools: [{ name: 'now', description: 'the now tool', input: {} }] });
      expect(provider.inputs[1]!.messages).toEqual([
        ...ask('time?'),
        { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [callOf('c1', 'now')] },
        { role: 'toolResult', toolCallId: 'c1', toolName: 'now', content: 'noon', isError: false },
      ]);
    });

    it('re-emits each provider event as it arrives, never held back by a running tool', () => {
      testScheduler().run(({ cold, expectObservable }) => {
        const slow = cold<string>('---------(r|)', { r: 'R' });
        const registry = new ToolRegistry().register(tool('a', () => slow));
        const turn1 = cold<ProviderEvent>('-s-a-t-t-u|', ev);
        const turn2 = cold<ProviderEvent>('            -----s-(e|)', ev);
        const loop = runEventedToolLoop({ provider: turnsProvider([turn1, turn2]), registry, messages: ask() });
        expectObservable(loop.pipe(map(brief))).toBe('Ts-a-t-t-u--(rEU)s-(eFL|)', {
          T: 'turn_start 1', s: 'message_start', a: 'call a', t: 'text hi', u: 'end toolUse', r: 'result a: R',
          E: 'turn_end 1: user, assistant toolUse, toolResult a', U: 'turn_start 2', e: 'end stop',
          F: 'turn_end 2: user, assistant toolUse, toolResult a, assistant stop', L: 'loop_end stop',
        });
      });
    });

    it('passes the provider\'s own event objects through', () => {
      const events = collectSync(runEventedToolLoop({ provider: () => of(ev.s, ev.t, ev.e), registry: new ToolRegistry(), messages: ask() })).values;
      expect(events[1]).toBe(ev.s);
      expect(events[2]).toBe(ev.t);
      expect(events[3]).toBe(ev.e);
    });
  });

  describe('R3 tools start when asked', () => {
    it('starts a tool at its tool_call while the provider keeps streaming', () => {
      testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
        const work = cold<string>('---(r|)', { r: 'R' });
        const registry = new ToolRegistry().register(tool('a', () => work));
        const turn1 = cold<ProviderEvent>('-s-a-t-t-t-u|', ev);
        const loop = runEventedToolLoop({ provider: turnsProvider([turn1]), registry, messages: ask(), maxTurns: 1 });
        expectObservable(loop.pipe(map((e) => e.type))).toBe('Ts-a-trt-t-u(EL|)', {
          T: 'turn_start', s: 'message_start', a: 'tool_call', t: 'text_delta', r: 'tool_result', u: 'message_end', E: 'turn_end', L: 'loop_end',
        });
        expectSubscriptions(work.subscriptions).toBe('---^--!');
      });
    });
  });
});
