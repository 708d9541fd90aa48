import { Observable, type Observer, Subject, Subscriber, finalize, firstValueFrom, map, toArray } from 'rxjs';
import { createLimiter, limited } from '../../src/index.js';
import type { ProviderEvent } from '../../src/index.js';

// `limited`'s call is the provider's subscriber without being an rxjs Subscriber (L6): what a Subscriber does
// for a provider (its teardowns run once, an operator chain's inner subscribers unsubscribed, nothing after
// the end) is pinned here.
const start: ProviderEvent = { type: 'message_start' };
const stop: ProviderEvent = { type: 'message_end', stopReason: 'stop' };
const input = { messages: [{ role: 'user' as const, content: 'go' }], tools: [] };
const subscriberOf = (observer: Partial<Observer<ProviderEvent>>) =>
  new Subscriber<ProviderEvent>({ next: () => undefined, error: () => undefined, complete: () => undefined, ...observer });

describe('limited: the call as the provider subscriber (L2)', () => {
  it('L2: a running call unsubscribed tears its provider down once (through an operator chain) and frees its slot', () => {
    const limiter = createLimiter({ maxConcurrent: 1 });
    const events = new Subject<ProviderEvent>();
    let teardowns = 0;
    let finalized = 0;
    const first = limited(
      () =>
        new Observable<ProviderEvent>((subscriber) => {
          const inner = events.subscribe(subscriber);
          return () => {
            teardowns++;
            inner.unsubscribe();
          };
        }).pipe(
          map((event) => event),
          finalize(() => finalized++),
        ),
      limiter,
    )(input);
    const seen: ProviderEvent[] = [];
    const running = first.subscribe((event) => seen.push(event));
    events.next(start);
    let secondStarted = false;
    limited(() => new Observable<ProviderEvent>(() => void (secondStarted = true)), limiter)(input).subscribe();
    expect(secondStarted).toBe(false);
    running.unsubscribe();
    running.unsubscribe();
    expect([teardowns, finalized, secondStarted]).toEqual([1, 1, true]);
    events.next(stop);
    expect(seen).toEqual([start]);
    expect(events.observed).toBe(false);
  });

  it('L2: nothing a provider sends after its end reaches the consumer, and its teardown runs at the end', () => {
    const limiter = createLimiter({ maxConcurrent: 1 });
    let teardowns = 0;
    const seen: string[] = [];
    limited(
      () =>
        new Observable<ProviderEvent>((subscriber) => {
          subscriber.next(start);
          subscriber.next(stop);
          subscriber.complete();
          subscriber.next(start); // a misbehaving source: dropped
          subscriber.error(new Error('late'));
          return () => teardowns++;
        }),
      limiter,
    )(input).subscribe({ next: (event) => seen.push(event.type), error: () => seen.push('error'), complete: () => seen.push('complete') });
    expect(seen).toEqual(['message_start', 'message_end', 'complete']);
    expect(teardowns).toBe(1);
    expect(limiter.state).toEqual({ waiting: 0, running: 0, tokens: 0 });
  });

  it('L2: an error ends the call: the consumer hears it, the slot is free, the teardown runs', () => {
    const limiter = createLimiter({ maxConcurrent: 1 });
    let teardowns = 0;
    const errors: unknown[] = [];
    const source = new Subject<ProviderEvent>();
    limited(() => new Observable<ProviderEvent>((subscriber) => (source.subscribe(subscriber), () => teardowns++)), limiter)(input).subscribe({
      error: (error) => errors.push(error),
    });
    expect(limiter.state.running).toBe(1);
    source.error(new Error('boom'));
    expect([errors, teardowns, limiter.state.running]).toEqual([[new Error('boom')], 1, 0]);
  });

  // the loop subscribes a limited call with its own Subscriber, which takes a shorter path than rxjs's `subscribe`
  // (L6); every other way in goes through rxjs's: both are pinned to the same events and the same slot
  it('L2: a limited call heard by a Subscriber, an observer, a function, the three-callback form or an operator chain sees the same', async () => {
    const limiter = createLimiter({ maxConcurrent: 1 });
    const model = limited(() => new Observable<ProviderEvent>((subscriber) => (subscriber.next(start), subscriber.next(stop), subscriber.complete())), limiter);
    const heard: Record<string, string[]> = { subscriber: [], observer: [], function: [], callbacks: [] };
    const subscriber = subscriberOf({ next: (event) => heard.subscriber!.push(event.type), complete: () => heard.subscriber!.push('complete') });
    expect(model(input).subscribe(subscriber)).toBe(subscriber);
    model(input).subscribe({ next: (event) => heard.observer!.push(event.type), complete: () => heard.observer!.push('complete') });
    model(input).subscribe((event) => heard.function!.push(event.type));
    heard.function!.push('complete');
    model(input).subscribe((event) => heard.callbacks!.push(event.type), undefined, () => heard.callbacks!.push('complete'));
    const piped = await firstValueFrom(model(input).pipe(map((event) => event.type), toArray()));
    const expected = ['message_start', 'message_end', 'complete'];
    expect({ ...heard, piped: [...piped, 'complete'] }).toEqual({ subscriber: expected, observer: expected, function: expected, callbacks: expected, piped: expected });
    expect(limiter.state).toEqual({ waiting: 0, running: 0, tokens: 0 });
  });

  it('L2: a Subscriber that leaves a waiting call takes it out of the queue, and one that errors on the way is told', () => {
    const limiter = createLimiter({ maxConcurrent: 1 });
    let release: () => void = () => undefined;
    limited(() => new Observable<ProviderEvent>((subscriber) => void (release = () => subscriber.complete())), limiter)(input).subscribe();
    let called = 0;
    const waiting = subscriberOf({});
    limited(() => (called++, new Observable<ProviderEvent>()), limiter)(input).subscribe(waiting);
    expect(limiter.state).toEqual({ waiting: 1, running: 1, tokens: 0 });
    waiting.unsubscribe();
    expect(limiter.state).toEqual({ waiting: 0, running: 1, tokens: 0 });
    release();
    expect([called, limiter.state.running]).toEqual([0, 0]);
    const errors: unknown[] = [];
    limited(() => {
      throw new Error('no model');
    }, limiter)(input).subscribe(subscriberOf({ error: (error: unknown) => errors.push(error) }));
    expect([errors, limiter.state.running]).toEqual([[new Error('no model')], 0]);
  });
});
