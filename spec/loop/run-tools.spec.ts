import { NEVER, Observable, map, of, takeWhile } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { ToolRegistry } from '../../src/index.js';
import { runTools } from '../../src/loop/run-tools.js';
import type { CallPart, TurnPart } from '../../src/loop/turn-parts.js';
import { callOf, tool } from '../support/events.js';
import { partLine, request, settings } from './turn-support.js';

const scheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const begin = (): TurnPart => ({ type: 'begin', request: request(), reply: undefined as never });
const messageEnd: TurnPart = { type: 'message_end', stopReason: 'toolUse' };
const callPart = (index: number, id: string, duplicateOf?: string): CallPart =>
  duplicateOf === undefined ? { type: 'call', index, call: callOf(id, id) } : { type: 'call', index, call: callOf(`${id}_dup2`, id), duplicateOf };

function registryOf(work: Record<string, Observable<string>>): ToolRegistry {
  const registry = new ToolRegistry();
  for (const [name, observable] of Object.entries(work)) registry.register(tool(name, () => observable));
  return registry;
}

function collect(parts$: Observable<TurnPart>): string[] {
  const lines: string[] = [];
  parts$.pipe(map(partLine)).subscribe((line) => lines.push(line));
  return lines;
}

describe('runTools (R30: the turn’s second phase)', () => {
  it('R30, R3: every part passes; each call starts its tool as it passes; a result is settled; it completes once its source and every tool have', () => {
    scheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const work = { a: cold<string>('----(a|)'), b: cold<string>('-----(b|)') };
      const parts = hot<TurnPart>('b-A-------B-------e|', { b: begin(), A: callPart(0, 'a'), B: callPart(1, 'b'), e: messageEnd });
      const lines = {
        b: 'begin 1',
        A: 'call 0 a',
        S: 'tool_start a',
        r: 'settled 0: a',
        B: 'call 1 b',
        T: 'tool_start b',
        s: 'settled 1: b',
        e: 'message_end toolUse',
      };
      expectObservable(parts.pipe(runTools(settings({ registry: registryOf(work) })), map(partLine))).toBe('b-(AS)r---(BT)-s--e|', lines);
      expectSubscriptions(work.a.subscriptions).toBe('--^---!');
      expectSubscriptions(work.b.subscriptions).toBe('----------^----!');
    });
  });

  it('R30, R3: concurrency 1 runs waiting calls first in, first out', () => {
    scheduler().run(({ cold, expectSubscriptions, flush }) => {
      const work = { a: cold<string>('--(a|)'), b: cold<string>('--(b|)'), c: cold<string>('--(c|)') };
      const parts = of(begin(), callPart(0, 'a'), callPart(1, 'b'), callPart(2, 'c'), messageEnd);
      const lines = collect(parts.pipe(runTools(settings({ registry: registryOf(work), concurrency: 1 }))));
      flush();
      expectSubscriptions(work.a.subscriptions).toBe('^-!');
      expectSubscriptions(work.b.subscriptions).toBe('--^-!');
      expectSubscriptions(work.c.subscriptions).toBe('----^-!');
      expect(lines.filter((line) => line.startsWith('settled'))).toEqual(['settled 0: a', 'settled 1: b', 'settled 2: c']);
    });
  });

  it('R30, R11: unsubscribing tears the running tools down and drops the waiting ones', () => {
    scheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const work = { a: cold<string>('-----(a|)'), b: cold<string>('-----(b|)') };
      const parts = hot<TurnPart>('(bAB)', { b: begin(), A: callPart(0, 'a'), B: callPart(1, 'b') });
      expectObservable(parts.pipe(runTools(settings({ registry: registryOf(work), concurrency: 1 })), map(partLine)), '^-!').toBe('(bASB)', {
        b: 'begin 1',
        A: 'call 0 a',
        S: 'tool_start a',
        B: 'call 1 b',
      });
      expectSubscriptions(work.a.subscriptions).toBe('^-!');
      expectSubscriptions(work.b.subscriptions).toBe([]);
    });
  });

  it('R30, R28: a repeated id never runs: it is settled at once, naming the id', () => {
    const handler = jest.fn(() => 'ran');
    const registry = new ToolRegistry().register(tool('a', handler));
    const lines = collect(of(begin(), callPart(0, 'a'), callPart(1, 'a', 'a'), messageEnd).pipe(runTools(settings({ registry }))));
    expect(lines).toEqual(['begin 1', 'call 0 a', 'tool_start a', 'settled 0: ran', 'call 1 a_dup2 (dup of a)', 'settled 1: error: duplicate tool call id: a', 'message_end toolUse']);
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('R30, R26: a result is cut to maxToolOutputChars before it is settled', () => {
    const registry = new ToolRegistry().register(tool('a', () => 'x'.repeat(50)));
    const lines = collect(of(begin(), callPart(0, 'a'), messageEnd).pipe(runTools(settings({ registry, maxToolOutputChars: 10 }))));
    expect(lines[3]).toMatch(/^settled 0: x{10}/);
    expect(lines[3]!.length).toBeLessThan('settled 0: '.length + 50);
  });

  it('R30, R23, C3: a consumer that leaves on a tool_start means that tool’s handler never runs', () => {
    const handler = jest.fn(() => NEVER);
    const registry = new ToolRegistry().register(tool('a', handler));
    const lines = collect(
      of(begin(), callPart(0, 'a'), messageEnd).pipe(
        runTools(settings({ registry })),
        takeWhile((part) => part.type !== 'tool_start', true),
      ),
    );
    expect(lines).toEqual(['begin 1', 'call 0 a', 'tool_start a']);
    expect(handler).not.toHaveBeenCalled();
  });
});
