import { Observable, map, of } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { LoopEvent, ProviderEvent, ToolRegistry } from '../../src/index.js';
import type { LoopSettings } from '../../src/loop/loop-options.js';
import { runTurn } from '../../src/loop/run-turn.js';
import type { TurnOutcome } from '../../src/loop/turn-draft.js';
import { call, end, start, text, tool } from '../support/events.js';

function settings(provider: LoopSettings['provider'], options: Partial<LoopSettings> = {}): LoopSettings {
  return {
    provider,
    registry: new ToolRegistry(),
    messages: [],
    maxTurns: 8,
    concurrency: Infinity,
    toolTimeoutMs: Infinity,
    maxToolOutputChars: Infinity,
    signal: undefined,
    ...options,
  };
}

function play(loop: LoopSettings): LoopEvent[] {
  const events: LoopEvent[] = [];
  runTurn(1, [{ role: 'user', content: 'hi' }], loop).subscribe((event) => events.push(event));
  return events;
}

describe('runTurn', () => {
  it('is an Observable of the turn: events as they come, turn_end last, then complete (R18)', () => {
    new TestScheduler((actual, expected) => expect(actual).toEqual(expected)).run(({ cold, expectObservable }) => {
      const provider = cold('-s-c-----e|', { s: start, c: call('slow', {}, 'c1'), e: end('toolUse') });
      const slow = cold('       ----(r|)', { r: 'done' });
      const registry = new ToolRegistry().register(tool('slow', () => slow));
      const turn = runTurn(1, [{ role: 'user', content: 'hi' }], settings(() => provider, { registry }));
      expectObservable(turn.pipe(map(line))).toBe('Ts-(cS)r-e(E|)', {
        T: 'turn_start 1',
        s: 'message_start',
        c: 'tool_call slow',
        S: 'tool_start slow', // R23: in the frame of its tool_call, right after it
        r: 'tool_result slow: done',
        e: 'message_end',
        E: 'turn_end 1: user, assistant, toolResult',
      });
    });
  });

  it('stops listening to a synchronous provider at its first broken event', () => {
    let emittedAfter = 0;
    const provider = () =>
      new Observable<ProviderEvent>((subscriber) => {
        subscriber.next(start);
        subscriber.next(start); // a second message_start: the turn ends here
        subscriber.next(text('late'));
        emittedAfter++;
        subscriber.next(end('stop'));
        subscriber.complete();
      });
    const events = play(settings(provider));
    expect(events.map((e) => e.type)).toEqual(['turn_start', 'message_start', 'turn_end']);
    expect(lastTurnEnd(events).assistant).toMatchObject({ content: '', stopReason: 'error', errorMessage: 'provider sent a second message_start' });
    expect(emittedAfter).toBe(1); // the provider went on; nothing it sent after the fault was taken
  });

  it('does not call the provider when the signal is already aborted as the turn starts', () => {
    const controller = new AbortController();
    controller.abort();
    const provider = jest.fn(() => of(start, end('stop')));
    const events = play(settings(provider, { signal: controller.signal }));
    expect(provider).not.toHaveBeenCalled();
    expect(events.map((e) => e.type)).toEqual(['turn_start', 'turn_end']);
    expect(lastTurnEnd(events).assistant.stopReason).toBe('aborted');
  });

  it('reports its outcome to the loop before its turn_end goes out; the event itself is the public one', () => {
    const reported: TurnOutcome[] = [];
    const seenAtTurnEnd: number[] = [];
    const events: LoopEvent[] = [];
    runTurn(1, [{ role: 'user', content: 'hi' }], settings(() => of(start, text('ok'), end('stop'))), undefined, undefined, (outcome) =>
      reported.push(outcome),
    ).subscribe((event) => {
      events.push(event);
      if (event.type === 'turn_end') seenAtTurnEnd.push(reported.length);
    });
    const turnEnd = lastTurnEnd(events);
    expect(seenAtTurnEnd).toEqual([1]);
    expect(reported[0]!.history).toEqual(turnEnd.messages);
    expect(reported[0]!.history).not.toBe(turnEnd.messages); // the loop's own array, which no consumer holds
    expect(Object.keys(turnEnd)).toEqual(['type', 'turn', 'assistant', 'toolResults', 'messages', 'usage']);
    expect(structuredClone(turnEnd)).toStrictEqual({ ...turnEnd });
  });
});

function lastTurnEnd(events: LoopEvent[]): Extract<LoopEvent, { type: 'turn_end' }> {
  const last = events[events.length - 1];
  if (last?.type !== 'turn_end') throw new Error(`the last event is ${last?.type}, not turn_end`);
  return last;
}

/** A short line per event; the history as its roles. */
function line(event: LoopEvent): string {
  switch (event.type) {
    case 'turn_start':
      return `turn_start ${event.turn}`;
    case 'tool_call':
      return `tool_call ${event.call.name}`;
    case 'tool_start':
      return `tool_start ${event.call.name}`;
    case 'tool_result':
      return `tool_result ${event.message.toolName}: ${event.message.content}`;
    case 'turn_end':
      return `turn_end ${event.turn}: ${event.messages.map((m) => m.role).join(', ')}`;
    default:
      return event.type;
  }
}
