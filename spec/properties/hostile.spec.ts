/**
 * Hostile input, end to end through the loop (R17, R12): Object.prototype names as tool names,
 * inputs that are not plain objects, 10 MB payloads, extra fields on events, 100,000 synchronous
 * provider events. (spec/tool-registry.spec.ts covers the registry on its own.)
 */
import { Observable, lastValueFrom, toArray } from 'rxjs';
import {
  AgentMessage,
  LoopEvent,
  Provider,
  ProviderEvent,
  ToolCall,
  ToolRegistry,
  runEventedToolLoop,
  scriptedProvider,
} from '../../src/index.js';
import { answerTurn, call, callOf, end, loopEndOf, only, start, text, tool, toolTurn } from '../support/events.js';
import { providerValidity } from './support/checks.js';

const ask = (): AgentMessage[] => [{ role: 'user', content: 'q' }];
const HOSTILE = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'prototype'];

/** Runs a loop to its end synchronously; fails if it errors or does not end. */
function runSync(options: Parameters<typeof runEventedToolLoop>[0]): LoopEvent[] {
  const events: LoopEvent[] = [];
  let completed = false;
  runEventedToolLoop(options).subscribe({
    next: (event) => events.push(event),
    error: (error: unknown) => {
      throw new Error(`the loop errored: ${String(error)}`);
    },
    complete: () => (completed = true),
  });
  expect(completed).toBe(true);
  expect(providerValidity(loopEndOf(events).messages)).toBeUndefined();
  return events;
}

function resultsOf(events: LoopEvent[]) {
  return only(events, 'turn_end').flatMap((e) => e.toolResults.map((r) => ({ id: r.toolCallId, content: r.content, isError: r.isError })));
}

describe('R17 hostile input, through the loop', () => {
  describe('tool names from Object.prototype', () => {
    it.each(HOSTILE)('%s is an unknown tool when nobody registered it', (name) => {
      const provider = scriptedProvider([toolTurn(call(name, {}, 'c1')), answerTurn('ok')]);
      const events = runSync({ provider, registry: new ToolRegistry().register(tool('real', () => 'r')), messages: ask() });
      expect(resultsOf(events)).toEqual([{ id: 'c1', content: `unknown tool: ${name}`, isError: true }]);
      expect(loopEndOf(events).reason).toBe('stop');
    });

    it('each of them can be registered as a real tool, and runs', () => {
      const registry = new ToolRegistry();
      for (const name of HOSTILE) registry.register(tool(name, (input: Record<string, string>) => `${name} ran with ${input.x}`, { x: 'an x' }));
      expect(registry.getSpecs().map((s) => s.name)).toEqual(HOSTILE);
      const provider = scriptedProvider([toolTurn(...HOSTILE.map((name, i) => call(name, { x: String(i) }, `c${i}`))), answerTurn('ok')]);
      const events = runSync({ provider, registry, messages: ask() });
      expect(resultsOf(events)).toEqual(HOSTILE.map((name, i) => ({ id: `c${i}`, content: `${name} ran with ${i}`, isError: false })));
      // and the registry's own methods still work
      expect(registry.get('toString')?.name).toBe('toString');
      expect(new ToolRegistry().get('toString')).toBeUndefined();
    });

    it('a call naming a registered tool does not reach an Object.prototype handler', () => {
      const provider = scriptedProvider([toolTurn(call('constructor', {}, 'c1'), call('__proto__', {}, 'c2')), answerTurn('ok')]);
      const events = runSync({ provider, registry: new ToolRegistry(), messages: ask() });
      expect(resultsOf(events).map((r) => r.content)).toEqual(['unknown tool: constructor', 'unknown tool: __proto__']);
    });
  });

  describe('input that is not a plain object', () => {
    it.each<[string, unknown]>([
      ['null', null],
      ['an array', ['a']],
      ['a string', '{"x":"1"}'],
      ['a number', 7],
      ['undefined', undefined],
      ['a Date', new Date(0)],
      ['a Map', new Map([['x', '1']])],
    ])('input %s: an error result starting with "error: invalid input", and the handler does not run', (_label, input) => {
      const handler = jest.fn(() => 'ran');
      const registry = new ToolRegistry().register(tool('t', handler));
      const provider = scriptedProvider([[start, { type: 'tool_call', call: { id: 'c1', name: 't', input } as unknown as ToolCall }, end('toolUse')], answerTurn('ok')]);
      const events = runSync({ provider, registry, messages: ask() });
      const [result] = resultsOf(events);
      expect(result?.content).toMatch(/^error: invalid input/);
      expect(result?.isError).toBe(true);
      expect(handler).not.toHaveBeenCalled();
      expect(loopEndOf(events).reason).toBe('stop'); // the model saw the error and answered
    });

    it('plain objects that look odd are fine: no prototype, an own __proto__ key (as JSON.parse makes it)', () => {
      const seen: unknown[] = [];
      const registry = new ToolRegistry().register(tool('t', (input) => (seen.push(input), 'ran'), { x: 'an x' }));
      const nullProto = Object.assign(Object.create(null), { x: '1' });
      const protoKey = JSON.parse('{"__proto__": {"polluted": true}, "x": "2"}');
      const provider = (input: { messages: readonly AgentMessage[] }) =>
        new Observable<ProviderEvent>((s) => {
          if (input.messages.length > 1) return s.next(start), s.next(end('stop')), s.complete();
          s.next(start);
          s.next({ type: 'tool_call', call: { id: 'c1', name: 't', input: nullProto } });
          s.next({ type: 'tool_call', call: { id: 'c2', name: 't', input: protoKey } });
          s.next(end('toolUse'));
          s.complete();
        });
      const events = runSync({ provider, registry, messages: ask() });
      expect(resultsOf(events).map((r) => r.content)).toEqual(['ran', 'ran']);
      expect(seen).toEqual([nullProto, protoKey]);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('a listed input that is missing or undefined: error: missing input, the handler does not run', () => {
      const handler = jest.fn(() => 'ran');
      const registry = new ToolRegistry().register(tool('t', handler, { path: 'a path' }));
      const provider = scriptedProvider([toolTurn(call('t', {}, 'c1'), call('t', { path: undefined }, 'c2'), call('t', { hasOwnProperty: 'x' }, 'c3')), answerTurn('ok')]);
      const events = runSync({ provider, registry, messages: ask() });
      expect(resultsOf(events).map((r) => r.content)).toEqual(['error: missing input: path', 'error: missing input: path', 'error: missing input: path']);
      expect(handler).not.toHaveBeenCalled();
    });
  });

  describe('large payloads', () => {
    const TEN_MB = 10 * 1024 * 1024;

    it('a 10 MB tool output reaches the history and the next provider call', () => {
      const big = 'x'.repeat(TEN_MB);
      const provider = scriptedProvider([toolTurn(call('dump', {}, 'c1')), answerTurn('read it')]);
      const events = runSync({ provider, registry: new ToolRegistry().register(tool('dump', () => big)), messages: ask() });
      const result = loopEndOf(events).messages[2];
      expect(result?.role).toBe('toolResult');
      expect(result?.content.length).toBe(TEN_MB);
      expect(provider.inputs[1]!.messages[2]!.content.length).toBe(TEN_MB);
    });

    it('a 10 MB text stream (10,240 deltas of 1 KB, and one delta of 10 MB) becomes the assistant text', () => {
      const kb = 'y'.repeat(1024);
      const provider: Provider = () =>
        new Observable<ProviderEvent>((s) => {
          s.next(start);
          for (let i = 0; i < 10_240; i++) s.next(text(kb));
          s.next(text('z'.repeat(TEN_MB)));
          s.next(end('stop'));
          s.complete();
        });
      const events = runSync({ provider, registry: new ToolRegistry(), messages: ask() });
      expect(loopEndOf(events).assistant.content.length).toBe(2 * TEN_MB);
    });

    it('a 10 MB tool output from a Promise and from an Observable with progress', async () => {
      const big = 'p'.repeat(TEN_MB);
      const registry = new ToolRegistry()
        .register(tool('promise', async () => big))
        .register(tool('stream', () => new Observable<string>((s) => (s.next(big), s.next(big + '!'), s.complete()))));
      const provider = scriptedProvider([toolTurn(call('promise', {}, 'c1'), call('stream', {}, 'c2')), answerTurn('ok')]);
      const events = await lastValueFrom(runEventedToolLoop({ provider, registry, messages: ask() }).pipe(toArray()));
      expect(resultsOf(events).map((r) => r.content.length)).toEqual([TEN_MB, TEN_MB + 1]);
      expect(only(events, 'tool_update').map((u) => u.content.length)).toEqual([TEN_MB]);
    });
  });

  describe('extra fields on events', () => {
    it('are ignored: the loop passes the events through and builds the same history', () => {
      const extra = { id: 'evt_1', index: 3, usage: { tokens: 12 }, type_hint: 'x' };
      const events = runSync({
        provider: scriptedProvider([
          [
            { ...start, ...extra } as ProviderEvent,
            { ...text('hel'), ...extra } as ProviderEvent,
            { type: 'tool_call', call: { ...callOf('c1', 'echo', { v: 'x' }), extra: true }, ...extra } as ProviderEvent,
            { ...text('lo'), ...extra } as ProviderEvent,
            { ...end('toolUse'), ...extra } as ProviderEvent,
          ],
          [{ ...start, ...extra } as ProviderEvent, { ...end('stop'), ...extra } as ProviderEvent],
        ]),
        registry: new ToolRegistry().register(tool('echo', (input: Record<string, string>) => input.v!)),
        messages: ask(),
      });
      const turnEnd = only(events, 'turn_end')[0]!;
      expect(turnEnd.assistant).toMatchObject({ content: 'hello', stopReason: 'toolUse' });
      expect(turnEnd.toolResults).toEqual([{ role: 'toolResult', toolCallId: 'c1', toolName: 'echo', content: 'x', isError: false }]);
      expect(loopEndOf(events).reason).toBe('stop');
    });
  });

  // With calls queued behind an asynchronous tool (sequential mode, maxConcurrency) the queue overflows
  // the stack: defect D3 in spec/properties/defects.spec.ts.
  describe('100,000 synchronous provider events (R12, R17)', () => {
    const N = 100_000;

    it('text deltas', () => {
      const provider: Provider = () =>
        new Observable<ProviderEvent>((s) => {
          s.next(start);
          for (let i = 0; i < N; i++) s.next(text('x'));
          s.next(end('stop'));
          s.complete();
        });
      expect(loopEndOf(runSync({ provider, registry: new ToolRegistry(), messages: ask() })).assistant.content).toHaveLength(N);
    });

    it.each(['parallel', 'sequential'] as const)('%s: tool calls with synchronous tools', (toolExecution) => {
      const provider: Provider = ({ messages }) =>
        new Observable<ProviderEvent>((s) => {
          s.next(start);
          if (messages.length === 1) for (let i = 0; i < N; i++) s.next(call('echo', {}, `c${i}`));
          s.next(end(messages.length === 1 ? 'toolUse' : 'stop'));
          s.complete();
        });
      const events = runSync({ provider, registry: new ToolRegistry().register(tool('echo', () => 'e')), messages: ask(), toolExecution });
      expect(loopEndOf(events).messages).toHaveLength(1 + 1 + N + 1);
    });
  });
});
