import { Observable, map, of } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { LoopEvent, LoopEventOf, ProviderEvent, ToolResultMessage } from '../../src/index.js';
import { runTools } from '../../src/loop/run-tools.js';
import { streamReply } from '../../src/loop/stream-reply.js';
import { draftTurn } from '../../src/loop/draft-turn.js';
import { Reply } from '../../src/loop/reply.js';
import { type TurnPart, outcomeOf } from '../../src/loop/turn-parts.js';
import { callOf, end, start } from '../support/events.js';
import { request, settings } from './turn-support.js';

const scheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const result = (id: string, content: string): ToolResultMessage => ({ role: 'toolResult', toolCallId: id, toolName: id, content, isError: false });

/** A turn's parts as streamReply and runTools make them, over a reply that `text` and `end` write. */
function turnParts(reply: Reply) {
  const begin: TurnPart = { type: 'begin', request: request(), reply };
  const text = (delta: string): TurnPart => {
    const part = { type: 'text_delta' as const, text: delta };
    reply.record(part);
    return part;
  };
  const end = (): TurnPart => {
    const part = { type: 'message_end' as const, stopReason: 'toolUse' as const };
    reply.record(part);
    return part;
  };
  const call = (index: number, id: string): TurnPart => ({ type: 'call', index, call: callOf(id, id), event: { type: 'tool_call', call: callOf(id, id) } });
  const settled = (index: number, id: string, content: string): TurnPart => ({ type: 'settled', index, message: result(id, content), terminate: false });
  return { begin, text, end, call, settled };
}

/** A short line per event; the history as its roles. */
function line(event: LoopEvent): string {
  switch (event.type) {
    case 'turn_start':
      return `turn_start ${event.turn}`;
    case 'tool_call':
      return `tool_call ${event.call.id}`;
    case 'tool_result':
      return `tool_result ${event.message.toolCallId}: ${event.message.content} (${event.messages.map((m) => m.role).join(', ')})`;
    case 'turn_end':
      return `turn_end ${event.turn}: ${event.messages.map((m) => (m.role === 'toolResult' ? m.toolCallId : m.role)).join(', ')}`;
    default:
      return event.type;
  }
}

describe('draftTurn (R30: the turn’s last phase)', () => {
  it('R30, R18, R4, R29: the loop’s events from the parts; each result with the history so far; the turn ends with its turn_end, the history in call order', () => {
    scheduler().run(({ hot, expectObservable }) => {
      const reply = new Reply();
      const p = turnParts(reply);
      // b = begin, c/d = calls, e = message_end, s/r = the results of d, then c: they finish out of call order
      const parts = hot<TurnPart>('b-c-d-e-s-r|', { b: p.begin, c: p.call(0, 'c'), d: p.call(1, 'd'), e: p.end(), s: p.settled(1, 'd', 'D'), r: p.settled(0, 'c', 'C') });
      expectObservable(parts.pipe(draftTurn(settings()), map(line))).toBe('T-c-d-e-s-r(E|)', {
        T: 'turn_start 1',
        c: 'tool_call c',
        d: 'tool_call d',
        e: 'message_end',
        s: 'tool_result d: D (user, assistant, toolResult)',
        r: 'tool_result c: C (user, assistant, toolResult, toolResult)',
        E: 'turn_end 1: user, assistant, c, d', // R4: call order, whatever order they finished in
      });
    });
  });

  it('R30: turn_end carries the turn’s outcome on the value itself, where no copy, JSON or equality sees it', () => {
    const reply = new Reply();
    const p = turnParts(reply);
    const events: LoopEvent[] = [];
    of(p.begin, p.text('ok'), p.end()).pipe(draftTurn(settings())).subscribe((event) => events.push(event));
    const turnEnd = events[events.length - 1] as LoopEventOf<'turn_end'>;
    const outcome = outcomeOf(turnEnd)!;
    expect(outcome).toMatchObject({ turn: 1, stopReason: 'toolUse', results: 0, terminated: false });
    expect(outcome.history).toEqual(turnEnd.messages);
    expect(outcome.history).not.toBe(turnEnd.messages); // the loop's own array, which no consumer holds
    expect(Object.keys(turnEnd)).toEqual(['type', 'turn', 'assistant', 'toolResults', 'messages', 'usage']);
    expect(Reflect.ownKeys(turnEnd)).toEqual(Object.keys(turnEnd)); // no hidden key, not even a symbol
    expect(Object.getPrototypeOf(turnEnd)).toBe(Object.prototype); // a plain object
    expect(outcomeOf({ ...turnEnd })).toBeUndefined(); // a copy is only the event
    expect(outcomeOf(structuredClone(turnEnd))).toBeUndefined();
    expect(structuredClone(turnEnd)).toStrictEqual({ ...turnEnd });
    expect(turnEnd).toStrictEqual({ ...turnEnd });
    expect(JSON.parse(JSON.stringify(turnEnd))).toEqual({ ...turnEnd });
  });

  it('R30, R11: the signal ends the turn: the phases before it are unsubscribed, and a call without a result is answered error: aborted', () => {
    scheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const controller = new AbortController();
      const p = turnParts(new Reply());
      const parts = hot<TurnPart>('b-c-----', { b: p.begin, c: p.call(0, 'c') });
      hot('----a').subscribe(() => controller.abort());
      expectObservable(parts.pipe(draftTurn(settings({ signal: controller.signal })), map(line))).toBe('T-c-(RE|)', {
        T: 'turn_start 1',
        c: 'tool_call c',
        R: 'tool_result c: error: aborted (user, assistant, toolResult)',
        E: 'turn_end 1: user, assistant, c',
      });
      expectSubscriptions(parts.subscriptions).toBe('^---!');
    });
  });

  it('R30, R11: an abort while an event is delivered ends the turn after that delivery, not inside it', () => {
    const controller = new AbortController();
    const p = turnParts(new Reply());
    const seen: string[] = [];
    new Observable<TurnPart>((subscriber) => {
      subscriber.next(p.begin);
      subscriber.next(p.text('a'));
    })
      .pipe(draftTurn(settings({ signal: controller.signal })))
      .subscribe((event) => {
        seen.push(`${line(event)} in`);
        if (event.type === 'text_delta') controller.abort();
        seen.push(`${line(event)} out`);
      });
    expect(seen).toEqual(['turn_start 1 in', 'turn_start 1 out', 'text_delta in', 'text_delta out', 'turn_end 1: user, assistant in', 'turn_end 1: user, assistant out']);
  });

  it('R30, R11: the three phases composed, on a signal already aborted as the turn starts: no provider call, turn_start then turn_end aborted', () => {
    const controller = new AbortController();
    controller.abort();
    const provider = jest.fn((): Observable<ProviderEvent> => of<ProviderEvent[]>(start, end('stop')));
    const loop = settings({ provider, signal: controller.signal });
    const events: LoopEvent[] = [];
    streamReply(request(), loop).pipe(runTools(loop), draftTurn(loop)).subscribe((event) => events.push(event));
    expect(provider).not.toHaveBeenCalled();
    expect(events.map((event) => event.type)).toEqual(['turn_start', 'turn_end']);
    expect((events[1] as LoopEventOf<'turn_end'>).assistant.stopReason).toBe('aborted');
  });
});
