import { Observable, from, map, of, takeWhile } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { ProviderEvent, ToolRegistry } from '../../src/index.js';
import { streamReply } from '../../src/loop/stream-reply.js';
import type { Reply } from '../../src/loop/reply.js';
import type { TurnPart } from '../../src/loop/turn-parts.js';
import { call, end, start, text, tool } from '../support/events.js';
import { partLine, request, settings } from './turn-support.js';

const scheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

/** The reply the `begin` part hands on (what draftTurn reads). */
function replyOf(parts: TurnPart[]): Reply {
  const begin = parts[0];
  if (begin?.type !== 'begin') throw new Error('the first part is not begin');
  return begin.reply;
}

function collect(parts$: Observable<TurnPart>): TurnPart[] {
  const parts: TurnPart[] = [];
  parts$.subscribe((part) => parts.push(part));
  return parts;
}

describe('streamReply (R30: the turn’s first phase)', () => {
  it('R30, R2: begin, then the provider’s events as they come, each tool_call as a call with its slot (R28)', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const provider = cold<ProviderEvent>('-s-t-c-e|', { s: start, t: text('hi'), c: call('search', {}, 'c1'), e: end('toolUse') });
      const loop = settings({ provider: () => provider });
      expectObservable(streamReply(request(), loop).pipe(map(partLine))).toBe('bs-t-c-e|', {
        b: 'begin 1',
        s: 'message_start',
        t: 'text hi',
        c: 'call 0 c1',
        e: 'message_end toolUse',
      });
      expectSubscriptions(provider.subscriptions).toBe('^-------!');
    });
  });

  it('R30, R10: a provider that errors ends the reply with failed, never an error; the reply says why', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const provider = cold<ProviderEvent>('-s-#', { s: start }, new Error('boom'));
      const reply$ = streamReply(request(), settings({ provider: () => provider }));
      expectObservable(reply$.pipe(map(partLine))).toBe('bs-(f|)', { b: 'begin 1', s: 'message_start', f: 'failed' });
    });
    const parts = collect(streamReply(request(), settings({ provider: () => new Observable<ProviderEvent>((s) => s.error(new Error('boom'))) })));
    expect(replyOf(parts)).toMatchObject({ ended: true, stopReason: 'error', errorMessage: 'provider error: boom' });
  });

  it('R30, R10: a broken event order ends the reply at the first broken event and closes the provider', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const provider = cold<ProviderEvent>('-s-s-t-e|', { s: start, t: text('late'), e: end('stop') });
      expectObservable(streamReply(request(), settings({ provider: () => provider })).pipe(map(partLine))).toBe('bs-(f|)', {
        b: 'begin 1',
        s: 'message_start',
        f: 'failed',
      });
      expectSubscriptions(provider.subscriptions).toBe('^--!');
    });
  });

  it('R30, R10, R20: a text_delta is checked and recorded on one read of its text: a getter that answers otherwise later changes neither', () => {
    let reads = 0;
    const changing = {
      type: 'text_delta' as const,
      get text(): string {
        reads++;
        return reads === 1 ? 'hi' : (42 as unknown as string);
      },
    };
    const parts = collect(streamReply(request(), settings({ provider: () => from<ProviderEvent[]>([start, changing, end('stop')]) })));
    expect(reads).toBe(1);
    expect(parts[2]).toBe(changing); // passed on as the provider sent it
    expect(parts.map((part) => part.type)).toEqual(['begin', 'message_start', 'text_delta', 'message_end']);
    expect(replyOf(parts)).toMatchObject({ ended: true, stopReason: 'stop' });
    expect(replyOf(parts).text.toString()).toBe('hi');
    // text that is no string, or a getter that throws, ends the reply (R10), named
    const bad = collect(streamReply(request(), settings({ provider: () => from<ProviderEvent[]>([start, { type: 'text_delta', text: 7 as unknown as string }, end('stop')]) })));
    expect(replyOf(bad)).toMatchObject({ stopReason: 'error', errorMessage: 'provider sent a text_delta whose text is not a string' });
    const throwing = { type: 'text_delta' as const, get text(): string { throw new Error('no text'); } };
    const thrown = collect(streamReply(request(), settings({ provider: () => from<ProviderEvent[]>([start, throwing, end('stop')]) })));
    expect(replyOf(thrown)).toMatchObject({ stopReason: 'error', errorMessage: 'provider sent an event that could not be read: no text' });
  });

  it('R30, R20: a provider that returns no Observable, or a registry whose getSpecs throws, is a failed reply, named', () => {
    const none = collect(streamReply(request(), settings({ provider: (() => undefined) as never })));
    expect(none.map(partLine)).toEqual(['begin 1', 'failed']);
    expect(replyOf(none).errorMessage).toBe('provider returned undefined, not an Observable');
    const registry = new ToolRegistry();
    registry.getSpecs = () => {
      throw new Error('no specs');
    };
    const broken = collect(streamReply(request(), settings({ registry, provider: () => of(start, end('stop')) })));
    expect(replyOf(broken).errorMessage).toBe('registry.getSpecs failed: no specs');
  });

  it('R30, R17: the provider is asked with a copy of the history and the registry’s specs', () => {
    const history = [{ role: 'user' as const, content: 'hi' }];
    const provider = jest.fn(() => of(start, end('stop')));
    const registry = new ToolRegistry().register(tool('search', () => 'found'));
    collect(streamReply(request(1, history), settings({ registry, provider })));
    const [input] = provider.mock.calls[0] as unknown as [{ messages: unknown[]; tools: { name: string }[] }];
    expect(input.messages).toEqual(history);
    expect(input.messages).not.toBe(history);
    expect(input.tools.map((spec) => spec.name)).toEqual(['search']);
  });

  it('R30, H6: with prepareTurn, waiting until it answers, asked when it has, and the provider sees its answer', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const prepared = cold('----(p|)', { p: { messages: [{ role: 'user' as const, content: 'short' }], tools: [] } });
      const provider = jest.fn(() => cold<ProviderEvent>('-s-e|', { s: start, e: end('stop') }));
      const loop = settings({ provider, prepareTurn: () => prepared });
      expectObservable(streamReply(request(), loop).pipe(map(partLine))).toBe('(bw)as-e|', {
        b: 'begin 1',
        w: 'waiting',
        a: 'asked',
        s: 'message_start',
        e: 'message_end stop',
      });
    });
  });

  it('R30, C3: unsubscribing on an event of a synchronous provider closes it at once', () => {
    let sentAfter = 0;
    const provider = () =>
      new Observable<ProviderEvent>((subscriber) => {
        subscriber.next(start);
        subscriber.next(text('a'));
        if (!subscriber.closed) sentAfter++;
        subscriber.next(end('stop'));
        subscriber.complete();
      });
    const seen: string[] = [];
    streamReply(request(), settings({ provider }))
      .pipe(
        takeWhile((part) => part.type !== 'message_start', true), // leaves inside the provider's subscribe
      )
      .subscribe((part) => seen.push(partLine(part)));
    expect(seen).toEqual(['begin 1', 'message_start']);
    expect(sentAfter).toBe(0);
  });
});
