import { Observable, Subject, finalize, map } from 'rxjs';
import { createLimiter, limited } from '../../src/index.js';
import type { ProviderEvent } from '../../src/index.js';

// `limited`'s call is the provider's subscriber without being an rxjs Subscriber (L6): what a Subscriber does
// for a provider (its teardowns run once, an operator chain's inner subscribers unsubscribed, nothing after
// the end) is pinned here.
const start: ProviderEvent = { type: 'message_start' };
const stop: ProviderEvent = { type: 'message_end', stopReason: 'stop' };
const input = { messages: [{ role: 'user' as const, content: 'go' }], tools: [] };

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
});
