import { EMPTY, Observable, Subject, Subscriber, asapScheduler, config, from, lastValueFrom, map, of, scheduled, take, tap, throwError, timeout, toArray } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import {
  AgentMessage,
  LoopEvent,
  LoopOptions,
  MAX_TURNS,
  Provider,
  ProviderEvent,
  ProviderInput,
  ToolRegistry,
  runEventedToolLoop,
  scriptedProvider,
  toolProgress,
} from '../../src/index.js';
import { draftTurn } from '../../src/loop/draft-turn.js';
import { checkOptions } from '../../src/loop/loop-options.js';
import { runTools } from '../../src/loop/run-tools.js';
import { streamReply } from '../../src/loop/stream-reply.js';
import { NO_USAGE } from '../../src/loop/usage.js';
import { answerTurn, call, callOf, collectSync, end, loopEndOf, only, start, text, tool, toolTurn } from '../support/events.js';

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
    case 'tool_start':
      return `start ${event.call.name}`;
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
  s: start,
  t: text('hi'),
  a: call('a', {}, 'a1'),
  b: call('b', {}, 'b1'),
  c: call('c', {}, 'c1'),
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
      const provider: Provider = () => scriptedProvider([turn++ % 2 === 0 ? toolTurn(call('echo', { text: 'x' }, 'c1')) : answerTurn('done')])({ messages: [], tools: [] });
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
      const provider = scriptedProvider([toolTurn(call('now', {}, 'c1')), answerTurn('done')]);
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
      const provider = scriptedProvider([toolTurn(call('now', {}, 'c1')), answerTurn('done')]);
      const registry = new ToolRegistry().register(tool('now', () => 'noon'));
      runEventedToolLoop({ provider, registry, messages: ask() }).subscribe((event) => {
        if (event.type === 'turn_end') (event.messages as AgentMessage[]).push({ role: 'user', content: 'injected' });
      });
      expect(provider.inputs[1]!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult']);
    });
  });

  describe('R2 one provider call per turn', () => {
    it('emits turn_start, then calls the provider once with the history so far and the specs', () => {
      const provider = scriptedProvider([toolTurn(call('now', {}, 'c1')), answerTurn('done')]);
      const registry = new ToolRegistry().register(tool('now', () => 'noon'));
      const events = collectSync(runEventedToolLoop({ provider, registry, messages: ask('time?') })).values;
      expect(events.map((e) => e.type)).toEqual([
        'turn_start', 'message_start', 'tool_call', 'tool_start', 'tool_result', 'message_end', 'turn_end',
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
        const slow = cold<string>('-----------(r|)', { r: 'R' });
        const registry = new ToolRegistry().register(tool('a', () => slow));
        const turn1 = cold<ProviderEvent>('-s-a---t-t-u|', ev);
        const turn2 = cold<ProviderEvent>('              -----s-(e|)', ev);
        const loop = runEventedToolLoop({ provider: turnsProvider([turn1, turn2]), registry, messages: ask() });
        expectObservable(loop.pipe(map(brief))).toBe('Ts-(aS)t-t-u--(rEU)s-(eFL|)', {
          T: 'turn_start 1', s: 'message_start', a: 'call a', S: 'start a', t: 'text hi', u: 'end toolUse', r: 'result a: R',
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
        const work = cold<string>('-----(r|)', { r: 'R' });
        const registry = new ToolRegistry().register(tool('a', () => work));
        const turn1 = cold<ProviderEvent>('-s-a---t-t-t-u|', ev);
        const loop = runEventedToolLoop({ provider: turnsProvider([turn1]), registry, messages: ask(), maxTurns: 1 });
        expectObservable(loop.pipe(map((e) => e.type))).toBe('Ts-(aS)trt-t-u(EL|)', {
          T: 'turn_start', s: 'message_start', a: 'tool_call', S: 'tool_start', t: 'text_delta', r: 'tool_result', u: 'message_end', E: 'turn_end', L: 'loop_end',
        });
        expectSubscriptions(work.subscriptions).toBe('---^----!');
      });
    });

    it('parallel: runs calls at once and emits results in completion order, history in call order (R4, R5)', () => {
      testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
        const slow = cold<string>('----------(r|)', { r: 'slow' });
        const fast = cold<string>('----(r|)', { r: 'fast' });
        const registry = new ToolRegistry().register(tool('a', () => slow)).register(tool('b', () => fast));
        const loop = runEventedToolLoop({ provider: turnsProvider([cold('-s-a---b----u|', ev)]), registry, messages: ask(), maxTurns: 1 });
        expectObservable(loop.pipe(map(brief))).toBe('Ts-(ax)(by)ru(REL|)', {
          T: 'turn_start 1', s: 'message_start', a: 'call a', x: 'start a', b: 'call b', y: 'start b', r: 'result b: fast', u: 'end toolUse',
          R: 'result a: slow', E: 'turn_end 1: user, assistant toolUse, toolResult a, toolResult b', L: 'loop_end maxTurns',
        });
        expectSubscriptions(slow.subscriptions).toBe('---^---------!');
        expectSubscriptions(fast.subscriptions).toBe('-------^---!');
      });
    });

    it('sequential: runs one call at a time, in call order', () => {
      testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
        const slow = cold<string>('--------(r|)', { r: 'slow' });
        const fast = cold<string>('----(r|)', { r: 'fast' });
        const registry = new ToolRegistry().register(tool('a', () => slow)).register(tool('b', () => fast));
        const provider = turnsProvider([cold('-s-a---b-u|', ev)]);
        const loop = runEventedToolLoop({ provider, registry, messages: ask(), maxTurns: 1, toolExecution: 'sequential' });
        // b waits for its slot: its tool_start comes in the frame of a's result (R23)
        expectObservable(loop.pipe(map(brief))).toBe('Ts-(ax)b-u-(Ry)(rEL|)', {
          T: 'turn_start 1', s: 'message_start', a: 'call a', x: 'start a', b: 'call b', u: 'end toolUse', R: 'result a: slow', y: 'start b',
          r: 'result b: fast', E: 'turn_end 1: user, assistant toolUse, toolResult a, toolResult b', L: 'loop_end maxTurns',
        });
        expectSubscriptions(slow.subscriptions).toBe('---^-------!');
        expectSubscriptions(fast.subscriptions).toBe('-----------^---!');
      });
    });

    it('maxConcurrency: at most that many tools at once; the next starts when one finishes', () => {
      testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
        const work = {
          a: cold<string>('------------(r|)', { r: 'A' }),
          b: cold<string>('------------(r|)', { r: 'B' }),
          c: cold<string>('------------(r|)', { r: 'C' }),
        };
        const registry = new ToolRegistry()
          .register(tool('a', () => work.a))
          .register(tool('b', () => work.b))
          .register(tool('c', () => work.c));
        const provider = turnsProvider([cold('-s-a---b---c-u|', ev)]);
        const loop = runEventedToolLoop({ provider, registry, messages: ask(), maxTurns: 1, maxConcurrency: 2 });
        // c waits for a slot: its tool_start comes in the frame of a's result (R23)
        expectObservable(loop.pipe(map(brief))).toBe('Ts-(ax)(by)c-u-(Az)B-------(CEL|)', {
          T: 'turn_start 1', s: 'message_start', a: 'call a', b: 'call b', c: 'call c', u: 'end toolUse',
          x: 'start a', y: 'start b', z: 'start c', A: 'result a: A', B: 'result b: B', C: 'result c: C',
          E: 'turn_end 1: user, assistant toolUse, toolResult a, toolResult b, toolResult c', L: 'loop_end maxTurns',
        });
        expectSubscriptions(work.a.subscriptions).toBe('---^-----------!');
        expectSubscriptions(work.b.subscriptions).toBe('-------^-----------!');
        expectSubscriptions(work.c.subscriptions).toBe('---------------^-----------!');
      });
    });
  });

  describe('R4 history is always provider-valid', () => {
    it('keeps the assistant message (joined text, calls in arrival order) and one result per call, in call order', async () => {
      const provider = scriptedProvider([
        [start, text('Let me '), text('check.'), call('slow', { n: 1 }, 'c1'), call('fast', {}, 'c2'), end('toolUse')],
        answerTurn('done'),
      ]);
      const registry = new ToolRegistry()
        .register(tool('slow', () => new Promise<string>((resolve) => setTimeout(() => resolve('slow result'), 20))))
        .register(tool('fast', async () => 'fast result'));
      const events = await lastValueFrom(runEventedToolLoop({ provider, registry, messages: ask('go') }).pipe(toArray()));
      expect(only(events, 'tool_result').map((e) => e.message.toolName)).toEqual(['fast', 'slow']);
      const turnEnd = only(events, 'turn_end')[0]!;
      const assistant = { role: 'assistant', content: 'Let me check.', stopReason: 'toolUse', toolCalls: [callOf('c1', 'slow', { n: 1 }), callOf('c2', 'fast')] };
      const results = [
        { role: 'toolResult', toolCallId: 'c1', toolName: 'slow', content: 'slow result', isError: false },
        { role: 'toolResult', toolCallId: 'c2', toolName: 'fast', content: 'fast result', isError: false },
      ];
      expect(turnEnd.assistant).toEqual(assistant);
      expect(turnEnd.toolResults).toEqual(results);
      expect(turnEnd.messages).toEqual([...ask('go'), assistant, ...results]);
      expect(provider.inputs[1]!.messages).toEqual(turnEnd.messages);
      expect(loopEndOf(events).messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'toolResult', 'assistant']);
    });

    it('an assistant message without calls has no toolCalls field', () => {
      const events = collectSync(runEventedToolLoop({ provider: scriptedProvider([answerTurn('hi')]), registry: new ToolRegistry(), messages: ask() })).values;
      expect(loopEndOf(events).assistant).toEqual({ role: 'assistant', content: 'hi', stopReason: 'stop' });
      expect('toolCalls' in loopEndOf(events).assistant).toBe(false);
    });
  });

  describe('R5 turn end', () => {
    it('comes after the provider has completed, even when the tools finished earlier', () => {
      testScheduler().run(({ cold, expectObservable }) => {
        const registry = new ToolRegistry().register(tool('a', () => cold('----(r|)', { r: 'R' })));
        const loop = runEventedToolLoop({ provider: turnsProvider([cold('-s-a----u---|', ev)]), registry, messages: ask(), maxTurns: 1 });
        expectObservable(loop.pipe(map((e) => e.type))).toBe('Ts-(aS)ru---(EL|)', {
          T: 'turn_start', s: 'message_start', a: 'tool_call', S: 'tool_start', r: 'tool_result', u: 'message_end', E: 'turn_end', L: 'loop_end',
        });
      });
    });
  });

  describe('R6 when to go on', () => {
    const run = (turns: ProviderEvent[][], registry: ToolRegistry, maxTurns?: number) => {
      const provider = scriptedProvider(turns);
      const events = collectSync(runEventedToolLoop({ provider, registry, messages: ask(), ...(maxTurns ? { maxTurns } : {}) })).values;
      return { events, calls: provider.inputs.length, end: loopEndOf(events) };
    };
    const registry = new ToolRegistry()
      .register(tool('echo', () => 'echoed'))
      .register(tool('finish', () => ({ content: 'finished', terminate: true })));

    it('stops when the stop reason is not toolUse', () => {
      for (const reason of ['stop', 'length', 'error'] as const) {
        const { calls, end: loopEnd } = run([[start, text('x'), end(reason)], answerTurn('never')], registry);
        expect([calls, loopEnd.reason]).toEqual([1, reason]);
      }
    });

    it('stops when toolUse came without any tool call', () => {
      const { calls, end: loopEnd } = run([[start, end('toolUse')], answerTurn('never')], registry);
      expect([calls, loopEnd.reason]).toEqual([1, 'toolUse']);
    });

    it('runs the calls of a turn that stopped with stop, keeps their results, and does not go on', () => {
      const { calls, end: loopEnd } = run([[start, call('echo', {}, 'c1'), end('stop')], answerTurn('never')], registry);
      expect(calls).toBe(1);
      expect(loopEnd.reason).toBe('stop');
      expect(loopEnd.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult']);
    });

    it('stops with terminated when every result of the turn asks to terminate', () => {
      const { calls, end: loopEnd } = run([toolTurn(call('finish', {}, 'c1'), call('finish', {}, 'c2')), answerTurn('never')], registry);
      expect([calls, loopEnd.reason]).toEqual([1, 'terminated']);
      expect(loopEnd.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'toolResult']);
    });

    it('goes on when only some results ask to terminate', () => {
      const { calls, end: loopEnd } = run([toolTurn(call('finish', {}, 'c1'), call('echo', {}, 'c2')), answerTurn('done')], registry);
      expect([calls, loopEnd.reason]).toEqual([2, 'stop']);
    });

    it('terminated wins when it coincides with the cap (R7)', () => {
      const { calls, end: loopEnd } = run([toolTurn(call('finish', {}, 'c1'))], registry, 1);
      expect([calls, loopEnd.reason]).toEqual([1, 'terminated']);
    });
  });

  describe('R7 exactly one end', () => {
    it('emits one loop_end, last, with the last turn_end messages, then completes', () => {
      const provider = scriptedProvider([toolTurn(call('echo', {}, 'c1')), answerTurn('done')]);
      const registry = new ToolRegistry().register(tool('echo', () => 'echoed'));
      const { values, completed } = collectSync(runEventedToolLoop({ provider, registry, messages: ask() }));
      expect(completed).toBe(true);
      expect(only(values, 'loop_end')).toHaveLength(1);
      const turnEnds = only(values, 'turn_end');
      expect(loopEndOf(values)).toEqual({
        type: 'loop_end',
        reason: 'stop',
        assistant: turnEnds[1]!.assistant,
        messages: turnEnds[1]!.messages,
        usage: turnEnds[1]!.usage,
      });
    });

    it('with the signal already aborted: no provider call, and an empty aborted assistant outside the history', () => {
      const provider = jest.fn(scriptedProvider([answerTurn('never')]));
      const controller = new AbortController();
      controller.abort();
      const { values, completed } = collectSync(
        runEventedToolLoop({ provider, registry: new ToolRegistry(), messages: ask('q'), signal: controller.signal }),
      );
      expect(provider).not.toHaveBeenCalled();
      expect(completed).toBe(true);
      expect(values).toEqual([
        {
          type: 'loop_end',
          reason: 'aborted',
          assistant: { role: 'assistant', content: '', stopReason: 'aborted', errorMessage: 'aborted' },
          messages: ask('q'),
          usage: { inputTokens: 0, outputTokens: 0 },
        },
      ]);
    });
  });

  describe('R8 the cap is exact', () => {
    it('subscribes the provider exactly maxTurns times, never once more', () => {
      testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
        const turn1 = cold<ProviderEvent>('-s-a----(u|)', ev);
        const turn2 = cold<ProviderEvent>('             -----s-a----(u|)', ev);
        const turn3 = cold<ProviderEvent>('-s-(e|)', ev);
        const registry = new ToolRegistry().register(tool('a', () => 'A'));
        const loop = runEventedToolLoop({ provider: turnsProvider([turn1, turn2, turn3]), registry, messages: ask(), maxTurns: 2 });
        expectObservable(loop.pipe(map((e) => e.type))).toBe('Ts-(aSr)(uET)s-(aSr)(uEL|)', {
          T: 'turn_start', s: 'message_start', a: 'tool_call', S: 'tool_start', r: 'tool_result', u: 'message_end', E: 'turn_end', L: 'loop_end',
        });
        expectSubscriptions(turn1.subscriptions).toBe('^-------!');
        expectSubscriptions(turn2.subscriptions).toBe('--------^-----------!');
        expectSubscriptions(turn3.subscriptions).toBe([]);
      });
    });

    it('with an always-asking provider, calls it exactly N times and ends with maxTurns', () => {
      for (const maxTurns of [1, 3, MAX_TURNS]) {
        let subscriptions = 0;
        const provider: Provider = () =>
          new Observable<ProviderEvent>((subscriber) => {
            subscriptions++;
            for (const event of toolTurn(call('echo', {}, `c${subscriptions}`))) subscriber.next(event);
            subscriber.complete();
          });
        const registry = new ToolRegistry().register(tool('echo', () => 'again'));
        const { values } = collectSync(runEventedToolLoop({ provider, registry, messages: ask(), ...(maxTurns === MAX_TURNS ? {} : { maxTurns }) }));
        expect(subscriptions).toBe(maxTurns);
        expect(loopEndOf(values).reason).toBe('maxTurns');
        expect(only(values, 'turn_end')).toHaveLength(maxTurns);
      }
    });

    it('MAX_TURNS is 8', () => {
      expect(MAX_TURNS).toBe(8);
    });

    it.each([0, -1, 1.5, NaN, Infinity, '3' as unknown as number])('throws a RangeError at call time for maxTurns %p', (maxTurns) => {
      expect(() => runEventedToolLoop({ provider: scriptedProvider([]), registry: new ToolRegistry(), messages: [], maxTurns })).toThrow(RangeError);
    });

    it.each([0, -2, 2.5, NaN])('throws a RangeError at call time for maxConcurrency %p', (maxConcurrency) => {
      expect(() => runEventedToolLoop({ provider: scriptedProvider([]), registry: new ToolRegistry(), messages: [], maxConcurrency })).toThrow(RangeError);
    });

    it('accepts maxConcurrency Infinity', () => {
      expect(() => runEventedToolLoop({ provider: scriptedProvider([]), registry: new ToolRegistry(), messages: [], maxConcurrency: Infinity })).not.toThrow();
    });
  });

  describe('R9 tool failures become results', () => {
    it('an unknown tool and a throwing tool become error results the model sees on its next turn', () => {
      const provider = scriptedProvider([toolTurn(call('nope', {}, 'c1'), call('boom', {}, 'c2')), answerTurn('sorry')]);
      const registry = new ToolRegistry().register(
        tool('boom', () => {
          throw new Error('kaput');
        }),
      );
      const { values, completed } = collectSync(runEventedToolLoop({ provider, registry, messages: ask() }));
      expect(completed).toBe(true);
      expect(provider.inputs[1]!.messages.slice(2)).toEqual([
        { role: 'toolResult', toolCallId: 'c1', toolName: 'nope', content: 'unknown tool: nope', isError: true },
        {
          role: 'toolResult',
          toolCallId: 'c2',
          toolName: 'boom',
          content: 'error: kaput',
          isError: true,
          details: { error: { name: 'Error', message: 'kaput', stack: expect.stringContaining('Error: kaput') } }, // R25
        },
      ]);
      expect(loopEndOf(values).reason).toBe('stop');
    });

    it('an Observable tool that errors after progress: every value as an update, then an error result', () => {
      testScheduler().run(({ cold, expectObservable }) => {
        const registry = new ToolRegistry().register(tool('a', () => cold('-p---q-#', { p: '10%', q: '50%' }, new Error('lost'))));
        const loop = runEventedToolLoop({ provider: turnsProvider([cold('-s-a----------(u|)', ev)]), registry, messages: ask(), maxTurns: 1 });
        expectObservable(loop.pipe(map(brief))).toBe('Ts-(aS)-p-(qR)(uEL|)', {
          T: 'turn_start 1', s: 'message_start', a: 'call a', S: 'start a', p: 'update a1: 10%', q: 'update a1: 50%', R: 'result a: error: lost', u: 'end toolUse',
          E: 'turn_end 1: user, assistant toolUse, toolResult a', L: 'loop_end maxTurns',
        });
      });
    });
  });

  describe('R14 toolProgress: progress at once', () => {
    it('a toolProgress value is a tool_update the moment it is emitted, with the tool name and details; plain values still lag one behind', () => {
      testScheduler().run(({ cold, expectObservable }) => {
        const values = { p: toolProgress('waiting for approval', { step: 1 }), a: 'approved', r: 'done' };
        const registry = new ToolRegistry().register(tool('a', () => cold('----p---a-(r|)', values)));
        const loop = runEventedToolLoop({ provider: turnsProvider([cold('-s-a----(u|)', ev)]), registry, messages: ask(), maxTurns: 1 });
        expectObservable(loop.pipe(map(brief))).toBe('Ts-(aS)pu----(qREL|)', {
          T: 'turn_start 1', s: 'message_start', a: 'call a', S: 'start a', p: 'update a1: waiting for approval', u: 'end toolUse', q: 'update a1: approved',
          R: 'result a: done', E: 'turn_end 1: user, assistant toolUse, toolResult a', L: 'loop_end maxTurns',
        });
      });
    });

    it('tool_update carries toolName and the progress details', () => {
      const registry = new ToolRegistry().register(tool('dl', () => of(toolProgress('30%', { bytes: 3 }), 'saved')));
      const { values } = collectSync(runEventedToolLoop({ provider: scriptedProvider([toolTurn(call('dl', {}, 'c9'))]), registry, messages: ask(), maxTurns: 1 }));
      expect(only(values, 'tool_update')).toEqual([{ type: 'tool_update', toolCallId: 'c9', toolName: 'dl', content: '30%', details: { bytes: 3 } }]);
    });

    it('an Observable with only progress values ends as error: tool produced no result', () => {
      const registry = new ToolRegistry().register(tool('p', () => of(toolProgress('1'), toolProgress('2'))));
      const { values } = collectSync(runEventedToolLoop({ provider: scriptedProvider([toolTurn(call('p', {}, 'c1'))]), registry, messages: ask(), maxTurns: 1 }));
      expect(only(values, 'tool_update').map((u) => u.content)).toEqual(['1', '2']);
      expect(only(values, 'tool_result')[0]!.message).toMatchObject({ content: 'error: tool produced no result', isError: true });
    });
  });

  describe('R26 maxToolOutputChars', () => {
    it('cuts a longer result content, the library\'s own texts included, and says by how much; details stay whole', () => {
      const registry = new ToolRegistry()
        .register(tool('big', () => ({ content: 'abcdefgh', details: { all: 'abcdefgh' } })))
        .register(tool('small', () => 'abcd'))
        .register(tool('exact', () => 'abcde'));
      const provider = scriptedProvider([toolTurn(call('big', {}, 'c1'), call('small', {}, 'c2'), call('nope', {}, 'c3'), call('exact', {}, 'c4'))]);
      const { values } = collectSync(runEventedToolLoop({ provider, registry, messages: ask(), maxTurns: 1, maxToolOutputChars: 5 }));
      expect(only(values, 'tool_result').map((r) => [r.message.content, r.message.details])).toEqual([
        ['abcde\n[truncated: 3 more characters]', { all: 'abcdefgh' }],
        ['abcd', undefined],
        ['unkno\n[truncated: 13 more characters]', undefined],
        ['abcde', undefined],
      ]);
      expect(loopEndOf(values).messages.slice(2).map((m) => m.content)).toEqual(only(values, 'tool_result').map((r) => r.message.content));
    });

    it('leaves tool_update contents whole', () => {
      const registry = new ToolRegistry().register(tool('dl', () => of(toolProgress('0123456789'), 'done')));
      const { values } = collectSync(runEventedToolLoop({ provider: scriptedProvider([toolTurn(call('dl', {}, 'c1'))]), registry, messages: ask(), maxTurns: 1, maxToolOutputChars: 3 }));
      expect(only(values, 'tool_update')[0]!.content).toBe('0123456789');
      expect(only(values, 'tool_result')[0]!.message.content).toBe('don\n[truncated: 1 more characters]');
    });

    it('says "1 more characters" for one, and refuses a bad limit at call time', () => {
      const registry = new ToolRegistry().register(tool('six', () => 'abcdef'));
      const { values } = collectSync(runEventedToolLoop({ provider: scriptedProvider([toolTurn(call('six', {}, 'c1'))]), registry, messages: ask(), maxTurns: 1, maxToolOutputChars: 5 }));
      expect(only(values, 'tool_result')[0]!.message.content).toBe('abcde\n[truncated: 1 more characters]');
      for (const bad of [0, 2.5, '5']) {
        expect(() => runEventedToolLoop({ provider: scriptedProvider([]), registry, messages: [], maxToolOutputChars: bad as number })).toThrow(RangeError);
      }
    });
  });

  describe('R27 usage', () => {
    it('turn_end and loop_end carry running totals of message_end.usage; zeros where no provider reported any', () => {
      const registry = new ToolRegistry().register(tool('t', () => 'ok'));
      const provider = scriptedProvider([
        [start, call('t', {}, 'c1'), end('toolUse', { usage: { inputTokens: 10, outputTokens: 3, cacheReadTokens: 4 } })],
        [start, call('t', {}, 'c2'), end('toolUse')],
        [start, text('done'), end('stop', { usage: { inputTokens: 20, outputTokens: 5, cacheWriteTokens: 1 } })],
      ]);
      const { values } = collectSync(runEventedToolLoop({ provider, registry, messages: ask() }));
      expect(only(values, 'turn_end').map((e) => e.usage)).toEqual([
        { inputTokens: 10, outputTokens: 3, cacheReadTokens: 4 },
        { inputTokens: 10, outputTokens: 3, cacheReadTokens: 4 },
        { inputTokens: 30, outputTokens: 8, cacheReadTokens: 4, cacheWriteTokens: 1 },
      ]);
      expect(loopEndOf(values).usage).toEqual({ inputTokens: 30, outputTokens: 8, cacheReadTokens: 4, cacheWriteTokens: 1 });
      const none = collectSync(runEventedToolLoop({ provider: scriptedProvider([answerTurn('hi')]), registry, messages: ask() })).values;
      expect(loopEndOf(none).usage).toEqual({ inputTokens: 0, outputTokens: 0 });
    });
  });

  describe('R28 duplicate call ids', () => {
    it('a repeated id does not run: kept as ID_dup2, ID_dup3, answered by an error; the tool_call event as sent', () => {
      const runs: string[] = [];
      const registry = new ToolRegistry().register(tool('t', (input: Record<string, string>) => (runs.push(input.n!), `ran ${input.n}`)));
      const provider = scriptedProvider([toolTurn(call('t', { n: '1' }, 'x'), call('t', { n: '2' }, 'x'), call('t', { n: '3' }, 'x'), call('t', { n: '4' }, 'y'))]);
      const { values } = collectSync(runEventedToolLoop({ provider, registry, messages: ask(), maxTurns: 1 }));
      expect(runs).toEqual(['1', '4']);
      expect(only(values, 'tool_call').map((e) => e.call.id)).toEqual(['x', 'x', 'x', 'y']);
      const [assistant, ...results] = loopEndOf(values).messages.slice(1);
      expect(assistant).toMatchObject({ toolCalls: [{ id: 'x' }, { id: 'x_dup2' }, { id: 'x_dup3' }, { id: 'y' }] });
      expect(results.map((r) => [r.role === 'toolResult' && r.toolCallId, r.content])).toEqual([
        ['x', 'ran 1'],
        ['x_dup2', 'error: duplicate tool call id: x'],
        ['x_dup3', 'error: duplicate tool call id: x'],
        ['y', 'ran 4'],
      ]);
      expect(only(values, 'tool_result').find((r) => r.message.toolCallId === 'x_dup2')!.message.isError).toBe(true);
    });
  });

  describe('R23 tool_start', () => {
    /** tool_call, tool_start and tool_result as `kind id`, other events left out. */
    const toolLines = (events: readonly LoopEvent[]) =>
      events.flatMap((e) =>
        e.type === 'tool_call' ? [`call ${e.call.id}`] : e.type === 'tool_start' ? [`start ${e.call.id}`] : e.type === 'tool_result' ? [`result ${e.message.toolCallId}`] : [],
      );

    it('R23: a call that can start at once starts right after its tool_call, with the call as sent; the handler runs after the consumer heard of it', () => {
      const seen: LoopEvent[] = [];
      const heardBefore: string[] = [];
      const registry = new ToolRegistry().register(
        tool('echo', (input: Record<string, string>, { call: c }) => {
          heardBefore.push(seen.map((e) => e.type).join(' '));
          expect(seen[seen.length - 1]).toEqual({ type: 'tool_start', call: c });
          return input.text!;
        }, { text: 't' }),
      );
      const provider = scriptedProvider([toolTurn(call('echo', { text: 'x' }, 'c1')), answerTurn('done')]);
      runEventedToolLoop({ provider, registry, messages: ask() }).subscribe((event) => seen.push(event));
      expect(heardBefore).toEqual(['turn_start message_start tool_call tool_start']);
      const started = only(seen, 'tool_start');
      expect(started).toEqual([{ type: 'tool_start', call: callOf('c1', 'echo', { text: 'x' }) }]);
      expect(started[0]!.call).toBe(only(seen, 'tool_call')[0]!.call); // the call as the provider sent it, and as the history keeps it
      expect(started[0]!.call).toBe(only(seen, 'turn_end')[0]!.assistant.toolCalls![0]);
      expect(seen.map((e) => e.type).slice(0, 6)).toEqual(['turn_start', 'message_start', 'tool_call', 'tool_start', 'tool_result', 'message_end']);
    });

    it('R23: no tool_start for a call that never runs: an unknown tool, an invalid input (R17), a duplicate id (R28)', () => {
      const runs: string[] = [];
      const registry = new ToolRegistry()
        .register(tool('t', (_input, { call: c }) => (runs.push(c.id), 'ran')))
        .register(tool('needs', () => 'never', { path: 'a path' }));
      const provider = scriptedProvider([
        toolTurn(call('t', {}, 'x'), call('t', {}, 'x'), call('nope', {}, 'n'), call('needs', {}, 'm'), call('needs', null as unknown as Record<string, unknown>, 'o'), call('t', {}, 'y')),
      ]);
      const { values } = collectSync(runEventedToolLoop({ provider, registry, messages: ask(), maxTurns: 1 }));
      expect(runs).toEqual(['x', 'y']);
      expect(toolLines(values)).toEqual([
        'call x', 'start x', 'result x',
        'call x', 'result x_dup2',
        'call n', 'result n',
        'call m', 'result m',
        'call o', 'result o',
        'call y', 'start y', 'result y',
      ]);
    });

    it.each([
      ['toolExecution: sequential', { toolExecution: 'sequential' as const }],
      ['maxConcurrency: 1', { maxConcurrency: 1 }],
    ])('R23: under %s each tool_start comes after the previous tool_result, in the same frame', (_label, options) => {
      const scheduler = testScheduler();
      scheduler.run(({ cold, flush }) => {
        // durations that would finish in reverse order if the calls ran at once
        const registry = new ToolRegistry()
          .register(tool('a', () => cold('------(r|)', { r: 'A' })))
          .register(tool('b', () => cold('----(r|)', { r: 'B' })))
          .register(tool('c', () => cold('--(r|)', { r: 'C' })));
        const provider = turnsProvider([cold('-s-abc-u|', ev)]);
        const events: { frame: number; line: string }[] = [];
        runEventedToolLoop({ provider, registry, messages: ask(), maxTurns: 1, ...options }).subscribe((event) => {
          const frame = scheduler.now();
          const [line] = toolLines([event]);
          if (line !== undefined && !line.startsWith('call')) events.push({ frame, line });
        });
        flush();
        expect(events).toEqual([
          { frame: 3, line: 'start a1' },
          { frame: 9, line: 'result a1' },
          { frame: 9, line: 'start b1' },
          { frame: 13, line: 'result b1' },
          { frame: 13, line: 'start c1' },
          { frame: 15, line: 'result c1' },
        ]);
      });
    });

    it('R23, R22: the calls that turn 0 resumes get their tool_start; the answered ones run again never', () => {
      const registry = new ToolRegistry().register(tool('weather', () => 'sunny')).register(tool('clock', () => '12:00'));
      const messages: AgentMessage[] = [
        { role: 'user', content: 'check' },
        { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [callOf('c1', 'weather'), callOf('c2', 'clock'), callOf('c3', 'weather')] },
        { role: 'toolResult', toolCallId: 'c2', toolName: 'clock', content: '11:00', isError: false },
      ];
      const { values } = collectSync(runEventedToolLoop({ provider: scriptedProvider([answerTurn('ok')]), registry, messages }));
      const turn0 = values.slice(0, values.findIndex((e) => e.type === 'turn_end') + 1);
      expect(turn0.map((e) => (e.type === 'tool_start' ? `tool_start ${e.call.id}` : e.type === 'tool_result' ? `tool_result ${e.message.toolCallId}` : e.type))).toEqual([
        'turn_start', 'tool_start c1', 'tool_result c1', 'tool_start c3', 'tool_result c3', 'turn_end',
      ]);
      expect(only(values, 'tool_start').map((e) => e.call)).toEqual([callOf('c1', 'weather'), callOf('c3', 'weather')]);
    });
  });

  describe('R10 provider failures end the loop cleanly', () => {
    it('a provider error mid-stream keeps the text and lets started tools finish', () => {
      testScheduler().run(({ cold, expectObservable }) => {
        const work = cold<string>('------(r|)', { r: 'R' });
        const registry = new ToolRegistry().register(tool('a', () => work));
        const provider = turnsProvider([cold('-s-t-a-#', ev, new Error('connection reset')), cold('-s-e|', ev)]);
        const loop = runEventedToolLoop({ provider, registry, messages: ask() });
        expectObservable(loop.pipe(map(brief))).toBe('Ts-t-(aS)--(rEL|)', {
          T: 'turn_start 1', s: 'message_start', t: 'text hi', a: 'call a', S: 'start a', r: 'result a: R',
          E: 'turn_end 1: user, assistant error, toolResult a', L: 'loop_end error',
        });
      });
    });

    it('the assistant message says what happened', () => {
      const provider: Provider = () => new Observable<ProviderEvent>((s) => {
        s.next(start);
        s.next(text('partial'));
        s.error(new Error('connection reset'));
      });
      const { values, completed } = collectSync(runEventedToolLoop({ provider, registry: new ToolRegistry(), messages: ask() }));
      expect(completed).toBe(true);
      expect(loopEndOf(values)).toMatchObject({
        reason: 'error',
        assistant: { role: 'assistant', content: 'partial', stopReason: 'error', errorMessage: 'provider error: connection reset' },
      });
    });

    it.each([
      ['completes without message_end', [start, text('half')], 'provider completed without message_end', 'half'],
      ['sends an event before message_start', [text('early'), start, end('stop')], 'provider sent text_delta before message_start', ''],
      ['sends an event after message_end', [start, text('a'), end('stop'), text('late')], 'provider sent text_delta after message_end', 'a'],
      ['sends a second message_start', [start, text('a'), start, end('stop')], 'provider sent a second message_start', 'a'],
      ['sends an unknown event type', [start, { type: 'reasoning' } as unknown as ProviderEvent, end('stop')], 'provider sent an unknown event type: "reasoning"', ''],
    ])('a provider that %s ends the turn with an error', (_label, events, errorMessage, content) => {
      const { values, completed } = collectSync(runEventedToolLoop({ provider: () => of(...events), registry: new ToolRegistry(), messages: ask() }));
      expect(completed).toBe(true);
      expect(loopEndOf(values)).toMatchObject({ reason: 'error', assistant: { content, stopReason: 'error', errorMessage } });
      expect(only(values, 'turn_end')).toHaveLength(1);
    });

    it('R10: a provider function that throws ends the loop with an error', () => {
      const throwing: Provider = () => {
        throw new Error('no key');
      };
      const { values, completed } = collectSync(runEventedToolLoop({ provider: throwing, registry: new ToolRegistry(), messages: ask() }));
      expect(completed).toBe(true);
      expect(loopEndOf(values)).toMatchObject({ reason: 'error', assistant: { stopReason: 'error', errorMessage: 'provider error: no key' } });
    });

    it('a provider message_end with stop reason error keeps its errorMessage', () => {
      const provider = scriptedProvider([[start, end('error', { errorMessage: 'overloaded' })]]);
      const { values } = collectSync(runEventedToolLoop({ provider, registry: new ToolRegistry(), messages: ask() }));
      expect(loopEndOf(values).assistant).toEqual({ role: 'assistant', content: '', stopReason: 'error', errorMessage: 'overloaded' });
    });
  });

  describe('R20 exactly: nothing the caller passed escapes the loop', () => {
    // rxjs hands an error that nobody can receive to onUnhandledError (by default: thrown in a timeout, which kills Node)
    let unhandled: unknown[];
    beforeEach(() => {
      unhandled = [];
      config.onUnhandledError = (error) => unhandled.push(error);
    });
    afterEach(() => {
      config.onUnhandledError = null;
      expect(unhandled).toEqual([]);
    });
    const answer = answerTurn('done');
    const loopOf = (options: Partial<LoopOptions>) => collectSync(runEventedToolLoop({ provider: scriptedProvider([answer]), registry: new ToolRegistry(), messages: ask(), ...options }));

    it('R20: options and the messages array are copied at call time: changing them afterwards changes nothing', () => {
      const messages: AgentMessage[] = ask('first');
      const provider = scriptedProvider([answer]);
      const options = { provider, registry: new ToolRegistry(), messages, maxTurns: 1 };
      const loop = runEventedToolLoop(options);
      messages.push({ role: 'user', content: 'later' });
      messages[0] = { role: 'user', content: 'replaced' };
      Object.assign(options, { provider: () => EMPTY, maxTurns: 'x', messages: 'nonsense' });
      const { values, completed } = collectSync(loop);
      expect(completed).toBe(true);
      expect(provider.inputs[0]!.messages).toEqual(ask('first'));
      expect(loopEndOf(values)).toMatchObject({ reason: 'stop', messages: [...ask('first'), { role: 'assistant', content: 'done' }] });
    });

    it('R20: a registry whose getSpecs throws ends the turn with error, named', () => {
      const registry = { get: () => undefined, getSpecs: () => { throw new Error('specs broke'); } } as unknown as ToolRegistry;
      const { values, completed } = loopOf({ registry });
      expect(completed).toBe(true);
      expect(values.map((e) => e.type)).toEqual(['turn_start', 'turn_end', 'loop_end']);
      expect(loopEndOf(values)).toMatchObject({ reason: 'error', assistant: { stopReason: 'error', errorMessage: 'registry.getSpecs failed: specs broke' } });
    });

    it('R20: a registry whose getSpecs returns no array ends the turn with error, named', () => {
      const registry = { get: () => undefined, getSpecs: () => 3 } as unknown as ToolRegistry;
      expect(loopEndOf(loopOf({ registry }).values).assistant.errorMessage).toBe('registry.getSpecs returned 3, a number, not an array');
    });

    it('R20: a registry whose get throws answers the call with an error naming it, and the loop goes on', () => {
      const registry = { get: () => { throw new Error('lookup broke'); }, getSpecs: () => [] } as unknown as ToolRegistry;
      const { values, completed } = loopOf({ registry, provider: scriptedProvider([toolTurn(call('a', {}, 'c1')), answer]) });
      expect(completed).toBe(true);
      expect(only(values, 'tool_result').map((e) => [e.message.content, e.message.isError])).toEqual([['error: registry.get failed: lookup broke', true]]);
      expect(loopEndOf(values).reason).toBe('stop');
    });

    it.each([
      ['undefined', undefined, 'provider returned undefined, not an Observable'],
      ['null', null, 'provider returned null, not an Observable'],
      ['a number', 3, 'provider returned 3, a number, not an Observable'],
      ['an array of events', [start, end('stop')], 'provider returned [{"type":"message_start"},{"type":"message_end","stopReas..., an array, not an Observable'],
      ['a Promise', Promise.resolve(), 'provider returned {}, a Promise, not an Observable'],
    ])('R20: a provider that returns %s ends the turn with error, named', (_label, value, errorMessage) => {
      const { values, completed } = loopOf({ provider: (() => value) as unknown as Provider });
      expect(completed).toBe(true);
      expect(loopEndOf(values)).toMatchObject({ reason: 'error', assistant: { content: '', stopReason: 'error', errorMessage } });
    });

    it('R20: a provider whose Observable errors synchronously ends the turn with error, named', () => {
      const { values } = loopOf({ provider: () => throwError(() => new Error('refused at once')) });
      expect(loopEndOf(values)).toMatchObject({ reason: 'error', assistant: { errorMessage: 'provider error: refused at once' } });
    });

    it('R20: a tool_call whose input throws when read ends the turn with error, named; the tools already asked for finish', () => {
      const hostile = { id: 'c2', name: 'a', get input(): Record<string, unknown> { throw new Error('input unreadable'); } };
      const registry = new ToolRegistry().register(tool('a', () => 'A'));
      const provider: Provider = () => of(start, call('a', {}, 'c1'), { type: 'tool_call' as const, call: hostile }, end('toolUse'));
      const { values, completed } = loopOf({ provider, registry });
      expect(completed).toBe(true);
      expect(only(values, 'tool_call').map((e) => e.call.id)).toEqual(['c1']); // the broken event is not passed on
      expect(only(values, 'tool_result').map((e) => e.message.content)).toEqual(['A']);
      expect(loopEndOf(values)).toMatchObject({ reason: 'error', assistant: { stopReason: 'error', errorMessage: 'provider sent an event that could not be read: input unreadable' } });
      expect(loopEndOf(values).assistant.toolCalls!.map((c) => c.id)).toEqual(['c1']);
    });

    it('R20: an event whose type throws when read ends the turn with error, named', () => {
      const hostile = { get type(): string { throw new Error('type unreadable'); } } as unknown as ProviderEvent;
      const { values } = loopOf({ provider: () => of(start, text('kept'), hostile, end('stop')) });
      expect(loopEndOf(values)).toMatchObject({ reason: 'error', assistant: { content: 'kept', errorMessage: 'provider sent an event that could not be read: type unreadable' } });
    });

    it('R20: an event whose type answers at first and throws on a later read, whichever phase reads it, ends the turn with error, named; nothing escapes', async () => {
      // each phase of the turn reads an event's type again; a getter may throw at any of those reads, also when
      // the provider emits from a scheduled action, where nothing would catch what escapes
      for (let at = 1; at <= 8; at++) {
        let reads = 0;
        let armed = true; // the loop's reads only, not this spec's own
        const late = { get type(): 'text_delta' { if (armed && reads++ === at) throw new Error(`type unreadable at read ${at}`); return 'text_delta'; }, text: 'late' } as ProviderEvent;
        const provider: Provider = () => scheduled([start, text('kept'), late, end('stop')], asapScheduler);
        const events = await lastValueFrom(runEventedToolLoop({ provider, registry: new ToolRegistry(), messages: ask() }).pipe(toArray(), timeout(2_000)));
        armed = false;
        const ends = events.filter((event) => event.type === 'loop_end');
        expect({ at, ends: ends.length, last: events.at(-1)?.type }).toEqual({ at, ends: 1, last: 'loop_end' });
        const { reason, assistant } = ends[0] as Extract<LoopEvent, { type: 'loop_end' }>;
        // read fewer times than `at`, it is an ordinary text_delta; else the provider's failure, named
        // (R10: the text read so far is kept — 'late' too, when the loop had read it before a later phase failed)
        if (reason === 'error') expect(assistant).toMatchObject({ content: expect.stringMatching(/^kept(late)?$/), errorMessage: `provider sent an event that could not be read: type unreadable at read ${at}` });
        else expect({ reason, content: assistant.content }).toEqual({ reason: 'stop', content: 'keptlate' });
      }
    });

    it('R20: a provider event whose field throws when the consumer reads it (a Subscriber of its own, which nothing wraps) ends the turn as the provider\'s failure; the turn still ends', async () => {
      const late = text('late');
      const events: LoopEvent[] = [];
      let thrown = 0;
      // what a consumer's read of a hostile getter does: a throw inside the delivery of the event, up into the loop
      class Reader extends Subscriber<LoopEvent> {
        protected override _next(event: LoopEvent): void {
          if (event === late && thrown++ === 0) throw new Error('late unreadable');
          events.push(event);
        }
      }
      const provider: Provider = () => scheduled([start, text('kept'), late, end('stop')], asapScheduler);
      const done = new Promise<void>((resolve) => {
        const reader = new Reader({ next: () => undefined, error: () => undefined, complete: () => resolve() });
        runEventedToolLoop({ provider, registry: new ToolRegistry(), messages: ask() }).subscribe(reader);
      });
      await lastValueFrom(from(done).pipe(timeout(2_000)));
      expect(thrown).toBe(1);
      expect(events.map((event) => event.type)).toEqual(['turn_start', 'message_start', 'text_delta', 'turn_end', 'loop_end']);
      expect(loopEndOf(events)).toMatchObject({ reason: 'error', assistant: { content: 'keptlate', errorMessage: 'provider sent an event that could not be read: late unreadable' } });
    });

    it('R20: a tool whose schema getter throws answers its call with an error naming it', () => {
      const broken = { ...tool('a', () => 'never'), input: undefined, inputSchema: { type: 'object' as const } };
      const registry = new ToolRegistry().register(broken);
      Object.defineProperty(broken, 'schema', { get() { throw new Error('schema unreadable'); } });
      const { values, completed } = loopOf({ registry, provider: scriptedProvider([toolTurn(call('a', {}, 'c1')), answer]) });
      expect(completed).toBe(true);
      expect(only(values, 'tool_start')).toEqual([]); // no handler ran
      expect(only(values, 'tool_result').map((e) => [e.message.content, e.message.isError])).toEqual([['error: schema unreadable', true]]);
      expect(loopEndOf(values).reason).toBe('stop');
    });

    it('R20: prepareTurn answering with a value whose fields throw when read ends the turn with error, named', () => {
      const hostile = { get messages(): never { throw new Error('unreadable'); }, tools: [] };
      const { values } = loopOf({ prepareTurn: () => hostile as unknown as ProviderInput });
      expect(loopEndOf(values)).toMatchObject({ reason: 'error', assistant: { errorMessage: 'prepareTurn failed: unreadable' } });
    });
  });

  describe('R11 cancellation loses nothing', () => {
    it('unsubscribing mid-tool tears down the provider call and the running tool', () => {
      let signal: AbortSignal | undefined;
      testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
        const work = cold<string>('--------(r|)', { r: 'R' });
        const registry = new ToolRegistry().register(
          tool('a', (_input, context) => {
            signal = context.signal;
            return work;
          }),
        );
        const turn1 = cold<ProviderEvent>('-s-a---t-t-t-u|', ev);
        const loop = runEventedToolLoop({ provider: turnsProvider([turn1]), registry, messages: ask() });
        expectObservable(loop.pipe(map((e) => e.type)), '^-------!').toBe('Ts-(aS)t-', {
          T: 'turn_start', s: 'message_start', a: 'tool_call', S: 'tool_start', t: 'text_delta',
        });
        expectSubscriptions(turn1.subscriptions).toBe('^-------!');
        expectSubscriptions(work.subscriptions).toBe('---^----!');
      });
      expect(signal?.aborted).toBe(true);
    });

    it('options.signal mid-tool: aborted turn_end and loop_end, error: aborted for every call without a result', async () => {
      const controller = new AbortController();
      const signals: AbortSignal[] = [];
      const provider = scriptedProvider([toolTurn(call('quick', {}, 'c1'), call('hang', {}, 'c2'), call('hang', {}, 'c3')), answerTurn('never')]);
      const registry = new ToolRegistry()
        .register(tool('quick', () => 'fine'))
        .register(
          tool('hang', (_input, context) => {
            signals.push(context.signal);
            return new Promise<string>(() => undefined);
          }),
        );
      const done = lastValueFrom(runEventedToolLoop({ provider, registry, messages: ask(), signal: controller.signal }).pipe(toArray()));
      await new Promise((resolve) => setTimeout(resolve, 5));
      controller.abort();
      const events = await done;

      expect(provider.inputs).toHaveLength(1);
      expect(signals.map((s) => s.aborted)).toEqual([true, true]);
      expect(only(events, 'tool_result').map((e) => e.message.content)).toEqual(['fine', 'error: aborted', 'error: aborted']);
      const turnEnd = only(events, 'turn_end')[0]!;
      expect(turnEnd.assistant).toMatchObject({ stopReason: 'aborted', errorMessage: 'aborted' });
      expect(turnEnd.toolResults.map((r) => [r.toolCallId, r.content, r.isError])).toEqual([
        ['c1', 'fine', false],
        ['c2', 'error: aborted', true],
        ['c3', 'error: aborted', true],
      ]);
      expect(loopEndOf(events)).toMatchObject({ reason: 'aborted', messages: turnEnd.messages });
    });

    it('options.signal mid-stream tears down the provider and keeps the text so far', () => {
      const controller = new AbortController();
      const stream = new Subject<ProviderEvent>();
      const run = collectSync(
        runEventedToolLoop({ provider: () => stream, registry: new ToolRegistry(), messages: ask(), signal: controller.signal }),
      );
      stream.next(start);
      stream.next(text('half an'));
      expect(stream.observed).toBe(true);
      expect(run.completed).toBe(false);
      controller.abort();
      expect(stream.observed).toBe(false);
      expect(run.completed).toBe(true);
      expect(loopEndOf(run.values)).toMatchObject({
        reason: 'aborted',
        assistant: { content: 'half an', stopReason: 'aborted' },
      });
    });

    it('options.signal between turns: no further provider call', () => {
      const controller = new AbortController();
      const provider = scriptedProvider([toolTurn(call('echo', {}, 'c1')), answerTurn('never')]);
      const registry = new ToolRegistry().register(tool('echo', () => 'x'));
      const events: LoopEvent[] = [];
      runEventedToolLoop({ provider, registry, messages: ask(), signal: controller.signal }).subscribe((event) => {
        events.push(event);
        if (event.type === 'turn_end') controller.abort();
      });
      expect(provider.inputs).toHaveLength(1);
      const turnEnd = only(events, 'turn_end')[0]!;
      expect(loopEndOf(events)).toEqual({
        type: 'loop_end',
        reason: 'aborted',
        assistant: { role: 'assistant', content: '', stopReason: 'aborted', errorMessage: 'aborted' },
        messages: turnEnd.messages,
        usage: turnEnd.usage,
      });
    });

    it('an abort from inside an event\'s delivery lets that event arrive first', () => {
      const controller = new AbortController();
      const provider: Provider = () => new Observable<ProviderEvent>((s) => {
        s.next(start);
        s.next(text('hi'));
        s.next(text('never sent'));
      });
      const seen: string[] = [];
      runEventedToolLoop({ provider, registry: new ToolRegistry(), messages: ask(), signal: controller.signal })
        .pipe(tap((event) => event.type === 'text_delta' && controller.abort()))
        .subscribe({ next: (event) => seen.push(event.type), complete: () => seen.push('complete') });
      expect(seen).toEqual(['turn_start', 'message_start', 'text_delta', 'turn_end', 'loop_end', 'complete']);
    });

    it('removes its abort listener when the loop ends', () => {
      const controller = new AbortController();
      const add = jest.spyOn(controller.signal, 'addEventListener');
      const remove = jest.spyOn(controller.signal, 'removeEventListener');
      collectSync(runEventedToolLoop({ provider: scriptedProvider([answerTurn('ok')]), registry: new ToolRegistry(), messages: ask(), signal: controller.signal }));
      expect(add).toHaveBeenCalledTimes(1);
      expect(remove).toHaveBeenCalledTimes(1);
    });

    it('take(n) downstream unsubscribes everything', () => {
      const stream = new Subject<ProviderEvent>();
      const events = collectSync(runEventedToolLoop({ provider: () => stream, registry: new ToolRegistry(), messages: ask() }).pipe(take(2))).values;
      expect(events.map((e) => e.type)).toEqual(['turn_start']);
      stream.next(start);
      expect(stream.observed).toBe(false);
    });
  });

  describe('R12 stack-safe', () => {
    it('10,000 synchronous turns complete before subscribe() returns', () => {
      const turns = 10_000;
      let subscriptions = 0;
      const provider: Provider = () =>
        new Observable<ProviderEvent>((subscriber) => {
          subscriptions++;
          const events = subscriptions < turns ? toolTurn(call('echo', { text: 'x' }, `c${subscriptions}`)) : answerTurn('done');
          for (const event of events) subscriber.next(event);
          subscriber.complete();
        });
      const registry = new ToolRegistry().register(tool('echo', (input: Record<string, string>) => input.text!, { text: 'what' }));
      let end: LoopEvent | undefined;
      let completed = false;
      runEventedToolLoop({ provider, registry, messages: ask(), maxTurns: turns }).subscribe({
        next: (event) => {
          if (event.type === 'loop_end') end = event;
        },
        complete: () => (completed = true),
      });
      expect(completed).toBe(true);
      expect(subscriptions).toBe(turns);
      expect(end).toMatchObject({ type: 'loop_end', reason: 'stop' });
      if (end?.type === 'loop_end') expect(end.messages).toHaveLength(1 + 2 * (turns - 1) + 1);
    });

    it('100,000 synchronous provider events in one turn', () => {
      const deltas = 100_000;
      const provider: Provider = () =>
        new Observable<ProviderEvent>((subscriber) => {
          subscriber.next(start);
          for (let i = 0; i < deltas; i++) subscriber.next(text('x'));
          subscriber.next(end('stop'));
          subscriber.complete();
        });
      const { values, completed } = collectSync(runEventedToolLoop({ provider, registry: new ToolRegistry(), messages: ask() }));
      expect(completed).toBe(true);
      expect(loopEndOf(values).assistant.content).toHaveLength(deltas);
    });
  });

  describe('R16 tool timeout', () => {
    it('R25: the loop\'s own deadline is no failure of the tool\'s code: the result carries no details', () => {
      testScheduler().run(({ cold, flush }) => {
        const registry = new ToolRegistry().register(tool('a', () => cold('-----(r|)', { r: 'late' })));
        const events: LoopEvent[] = [];
        runEventedToolLoop({ provider: turnsProvider([cold('-s-a-(u|)', ev)]), registry, messages: ask(), maxTurns: 1, toolTimeoutMs: 2 }).subscribe((e) => events.push(e));
        flush();
        expect(only(events, 'tool_result')[0]!.message).toEqual({ role: 'toolResult', toolCallId: 'a1', toolName: 'a', content: 'error: tool timed out after 2 ms', isError: true });
      });
    });

    it('tears down a tool still running after toolTimeoutMs, counted from its start', () => {
      let signal: AbortSignal | undefined;
      testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
        const first = cold<string>('-----(r|)', { r: 'R' });
        const never = cold<string>('-');
        const registry = new ToolRegistry()
          .register(tool('a', () => first))
          .register(
            tool('b', (_input, context) => {
              signal = context.signal;
              return never;
            }),
          );
        const provider = turnsProvider([cold('-s-a---b----(u|)', ev)]);
        const loop = runEventedToolLoop({ provider, registry, messages: ask(), maxTurns: 1, toolExecution: 'sequential', toolTimeoutMs: 10 });
        // b's 10 frames count from its tool_start, in the frame of a's result (R23)
        expectObservable(loop.pipe(map(brief))).toBe('Ts-(ax)b(ry)u-----(REL|)', {
          T: 'turn_start 1', s: 'message_start', a: 'call a', x: 'start a', b: 'call b', r: 'result a: R', y: 'start b', u: 'end toolUse',
          R: 'result b: error: tool timed out after 10 ms', E: 'turn_end 1: user, assistant toolUse, toolResult a, toolResult b',
          L: 'loop_end maxTurns',
        });
        expectSubscriptions(never.subscriptions).toBe('--------^---------!');
      });
      expect(signal?.aborted).toBe(true);
    });

    it('a tool that answers at the very deadline keeps its answer', () => {
      testScheduler().run(({ cold, expectObservable }) => {
        const registry = new ToolRegistry().register(tool('a', () => cold('----(r|)', { r: 'in time' })));
        const loop = runEventedToolLoop({ provider: turnsProvider([cold('-s-a-----(u|)', ev)]), registry, messages: ask(), maxTurns: 1, toolTimeoutMs: 4 });
        expectObservable(loop.pipe(map(brief))).toBe('Ts-(aS)r-(uEL|)', {
          T: 'turn_start 1', s: 'message_start', a: 'call a', S: 'start a', r: 'result a: in time', u: 'end toolUse',
          E: 'turn_end 1: user, assistant toolUse, toolResult a', L: 'loop_end maxTurns',
        });
      });
    });

    it('leaves no timer behind once the tool has finished', async () => {
      jest.useFakeTimers();
      try {
        const registry = new ToolRegistry().register(tool('a', async () => 'done'));
        const provider = scriptedProvider([toolTurn(call('a', {}, 'c1'))]);
        const done = lastValueFrom(runEventedToolLoop({ provider, registry, messages: ask(), maxTurns: 1, toolTimeoutMs: 60_000 }));
        await jest.advanceTimersByTimeAsync(0);
        await expect(done).resolves.toMatchObject({ type: 'loop_end', reason: 'maxTurns' });
        expect(jest.getTimerCount()).toBe(0);
      } finally {
        jest.useRealTimers();
      }
    });

    // jest's fake timers, like Node, run a timer set past 2^31 - 1 ms after 1 ms: the bug this pins
    it('R16: a toolTimeoutMs of 2^31 ms or more never fires early (an accepted value means what it says)', async () => {
      jest.useFakeTimers();
      try {
        const registry = new ToolRegistry().register(tool('a', () => new Promise<string>((resolve) => setTimeout(() => resolve('in time'), 10_000))));
        const provider = scriptedProvider([toolTurn(call('a', {}, 'c1'))]);
        const done = lastValueFrom(runEventedToolLoop({ provider, registry, messages: ask(), maxTurns: 1, toolTimeoutMs: 2 ** 31 }).pipe(toArray()));
        await jest.advanceTimersByTimeAsync(10_000);
        const events = await done;
        expect(only(events, 'tool_result').map((event) => event.message.content)).toEqual(['in time']);
        expect(jest.getTimerCount()).toBe(0);
      } finally {
        jest.useRealTimers();
      }
    });

    it('R16: a toolTimeoutMs past 2^31 ms fires when it is due, not before', async () => {
      jest.useFakeTimers();
      try {
        const ms = 2 ** 31 + 1000;
        let signal: AbortSignal | undefined;
        const registry = new ToolRegistry().register(tool('a', (_input, context) => ((signal = context.signal), new Promise<string>(() => {}))));
        const provider = scriptedProvider([toolTurn(call('a', {}, 'c1'))]);
        const events: LoopEvent[] = [];
        runEventedToolLoop({ provider, registry, messages: ask(), maxTurns: 1, toolTimeoutMs: ms }).subscribe((event) => events.push(event));
        await jest.advanceTimersByTimeAsync(ms - 1);
        expect(only(events, 'tool_result')).toEqual([]);
        expect(signal?.aborted).toBe(false);
        await jest.advanceTimersByTimeAsync(1);
        expect(only(events, 'tool_result').map((event) => event.message.content)).toEqual([`error: tool timed out after ${ms} ms`]);
        expect(loopEndOf(events).reason).toBe('maxTurns');
        expect(signal?.aborted).toBe(true);
      } finally {
        jest.useRealTimers();
      }
    });

    it.each([0, -5, 1.5, NaN])('throws a RangeError at call time for toolTimeoutMs %p', (toolTimeoutMs) => {
      expect(() => runEventedToolLoop({ provider: scriptedProvider([]), registry: new ToolRegistry(), messages: [], toolTimeoutMs })).toThrow(RangeError);
    });
  });
});

describe('provider events of version 2 through the loop (P9, P10)', () => {
  it('re-emits reasoning and argument deltas as they come; the reasoning blocks of message_end stay on the assistant message', () => {
    const blocks = [{ type: 'thinking', thinking: 'the user wants the time', signature: 'sig' }];
    const provider = scriptedProvider([
      [
        start,
        { type: 'reasoning_delta', text: 'the user wants the time' },
        { type: 'tool_call_delta', index: 0, id: 'c1', name: 'now', argumentsDelta: '{}' },
        call('now', {}, 'c1'),
        { type: 'message_end', stopReason: 'toolUse', reasoning: blocks },
      ],
      answerTurn('noon'),
    ]);
    const registry = new ToolRegistry().register(tool('now', () => 'noon'));
    const events = collectSync(runEventedToolLoop({ provider, registry, messages: ask() })).values;
    expect(events.slice(1, 5).map((event) => event.type)).toEqual(['message_start', 'reasoning_delta', 'tool_call_delta', 'tool_call']);
    const end = loopEndOf(events);
    expect(end.messages[1]).toEqual({ role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [{ id: 'c1', name: 'now', input: {} }], reasoning: blocks });
    // the reasoning is not text: the assistant's content stays what the text deltas said
    expect(end.assistant).toEqual({ role: 'assistant', content: 'noon', stopReason: 'stop' });
    // and it goes back to the provider as part of the history (the provider decides how to send it)
    expect(provider.inputs[1]!.messages[1]).toMatchObject({ reasoning: blocks });
  });

  it('R21: an assistant message whose reasoning is not an array is refused at call time', () => {
    const messages = [...ask(), { role: 'assistant', content: '', stopReason: 'stop', reasoning: 'x' }] as AgentMessage[];
    expect(() => runEventedToolLoop({ provider: scriptedProvider([]), registry: new ToolRegistry(), messages })).toThrow(
      new TypeError('runEventedToolLoop: messages[1].reasoning must be an array (got "x", a string)'),
    );
  });
});

describe('R33: one path', () => {
  it('R33, R30: a turn of the loop is its phases as a spec pipes them: streamReply → runTools → draftTurn give the very events of the loop’s turn 1', () => {
    const registry = () => new ToolRegistry().register(tool('echo', (input) => `echo ${String(input.text)}`, { text: 'what' }));
    const script = () => scriptedProvider([toolTurn(text('a'), call('echo', { text: 'x' }, 'c1'), call('echo', { text: 'y' }, 'c2')), answerTurn('done')]);
    const messages = [{ role: 'user' as const, content: 'go' }];
    const loopEvents = collectSync(runEventedToolLoop({ provider: script(), registry: registry(), messages })).values;
    const turn1 = loopEvents.slice(0, loopEvents.findIndex((event) => event.type === 'turn_end') + 1);
    const settings = checkOptions({ provider: script(), registry: registry(), messages });
    const phases = collectSync(streamReply({ turn: 1, history: messages.slice(), usage: NO_USAGE }, settings).pipe(runTools(settings), draftTurn(settings))).values;
    expect(turn1.map((event) => event.type)).toEqual(['turn_start', 'message_start', 'text_delta', 'tool_call', 'tool_start', 'tool_result', 'tool_call', 'tool_start', 'tool_result', 'message_end', 'turn_end']);
    expect(phases).toEqual(turn1);
  });
});
