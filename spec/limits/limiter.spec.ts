import { Observable, of } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { createLimiter, limited } from '../../src/index.js';
import type { LimiterState, Provider, ProviderEvent } from '../../src/index.js';

const start: ProviderEvent = { type: 'message_start' };
const stop: ProviderEvent = { type: 'message_end', stopReason: 'stop' };
const values = { s: start, d: stop };
const input = { messages: [{ role: 'user' as const, content: 'go' }], tools: [] };

function scheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

/** A provider whose n-th call plays `lines[n]`. */
function calls(lines: Observable<ProviderEvent>[]): Provider {
  let n = 0;
  return () => lines[n++]!;
}

/** `source`, subscribed at `frame`. */
function at<T>(frame: number, source: Observable<T>, cold: TestScheduler['createColdObservable']): Observable<T> {
  return new Observable<T>((subscriber) => {
    const inner = cold(`${'-'.repeat(frame)}(x|)`, { x: 0 }).subscribe({ complete: () => subscriber.add(source.subscribe(subscriber)) });
    return inner;
  });
}

describe('createLimiter and limited (L2)', () => {
  it('L2: with maxConcurrent 1, calls wait unsubscribed from their provider and start in their order as each ends', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a = cold('-s-d|', values);
      const b = cold('-s-d|', values);
      const c = cold('-s-d|', values);
      const limiter = createLimiter({ maxConcurrent: 1 });
      const provider = limited(calls([a, b, c]), limiter);
      expectObservable(provider(input)).toBe('-s-d|', values);
      expectObservable(provider(input)).toBe('----s-d|', values);
      expectObservable(provider(input)).toBe('-------s-d|', values);
      expectSubscriptions(a.subscriptions).toBe('^---!');
      expectSubscriptions(b.subscriptions).toBe('---^---!');
      expectSubscriptions(c.subscriptions).toBe('------^---!');
    });
  });

  it('L2: a higher priority goes first; FIFO within a priority', () => {
    const order: string[] = [];
    const limiter = createLimiter({ maxConcurrent: 1 });
    let release: () => void = () => undefined;
    const slow: Provider = () =>
      new Observable<ProviderEvent>((subscriber) => {
        release = () => subscriber.complete();
      });
    const named = (name: string): Provider => () => new Observable<ProviderEvent>((subscriber) => (order.push(name), subscriber.complete()));
    limited(slow, limiter).call(null, input).subscribe();
    limited(named('low 1'), limiter).call(null, input).subscribe();
    limited(named('high 1'), limiter, { priority: 2 }).call(null, input).subscribe();
    limited(named('low 2'), limiter).call(null, input).subscribe();
    limited(named('high 2'), limiter, { priority: 2 }).call(null, input).subscribe();
    expect(order).toEqual([]);
    release();
    expect(order).toEqual(['high 1', 'high 2', 'low 1', 'low 2']);
  });

  it('L2: unsubscribing while waiting leaves the queue: the provider is never called, the next call moves up, and state$ says how many wait', () => {
    const testing = scheduler();
    testing.run(({ cold, expectObservable, expectSubscriptions }) => {
      const a = cold('-s-d|', values);
      const c = cold('-s-d|', values);
      let called = 0;
      const limiter = createLimiter({ maxConcurrent: 1 });
      const states: [number, LimiterState][] = [];
      limiter.state$.subscribe((state) => states.push([testing.now(), state]));
      const leaving: Provider = () => (called++, cold('-s-d|', values));
      expectObservable(limited(() => a, limiter)(input)).toBe('-s-d|', values);
      expectObservable(limited(leaving, limiter)(input), '--!').toBe('--', values);
      expectObservable(limited(() => c, limiter)(input)).toBe('----s-d|', values);
      expectSubscriptions(c.subscriptions).toBe('---^---!');
      testing.schedule(() => {
        expect(states).toEqual([
          [0, { waiting: 0, running: 0, tokens: 0 }],
          [0, { waiting: 0, running: 1, tokens: 0 }],
          [0, { waiting: 1, running: 1, tokens: 0 }],
          [0, { waiting: 2, running: 1, tokens: 0 }],
          [2, { waiting: 1, running: 1, tokens: 0 }], // the second left
          [3, { waiting: 0, running: 1, tokens: 0 }], // a ended, c started
          [6, { waiting: 0, running: 0, tokens: 0 }],
        ]);
        expect(called).toBe(0);
      }, 20);
    });
  });

  it('L2: requestsPerMinute: the call past the limit waits until the first of the minute is a minute old', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const limiter = createLimiter({ requestsPerMinute: 2 });
      const provider = limited(() => cold('(sd|)', values), limiter);
      expectObservable(provider(input)).toBe('(sd|)', values);
      expectObservable(at(5, provider(input), cold)).toBe('-----(sd|)', values);
      expectObservable(at(10, provider(input), cold)).toBe('60000ms (sd|)', values);
    });
  });

  it("L2: tokensPerMinute counts each call's usage when it ends, and characters / 4 while it runs", () => {
    scheduler().run(({ cold, expectObservable }) => {
      const limiter = createLimiter({ tokensPerMinute: 100 });
      const used: ProviderEvent = { type: 'message_end', stopReason: 'stop', usage: { inputTokens: 70, outputTokens: 30 } };
      const long = { messages: [{ role: 'user' as const, content: 'x'.repeat(400) }], tools: [] }; // 100 tokens by the estimate
      // the first call's estimate (100) fills the minute while it runs; its usage (100) when it ends
      const first = limited(() => cold('-----(su|)', { s: start, u: used }), limiter)(long);
      const second = limited(() => cold('(sd|)', values), limiter)(input);
      expectObservable(first).toBe('-----(su|)', { s: start, u: used });
      expectObservable(at(1, second, cold)).toBe('60005ms (sd|)', values);
    });
  });

  it('L2: a 429 with retry-after pauses the whole limiter that long; state$ says until when', () => {
    const testing = scheduler();
    testing.run(({ cold, expectObservable }) => {
      const limiter = createLimiter({ maxConcurrent: 2 });
      const states: [number, LimiterState][] = [];
      limiter.state$.subscribe((state) => states.push([testing.now(), state]));
      const limitedEnd: ProviderEvent = {
        type: 'message_end',
        stopReason: 'error',
        errorMessage: 'HTTP 429',
        failure: { kind: 'http', status: 429, retryAfterMs: 10, message: 'HTTP 429' },
      };
      const first = limited(() => cold('--(se|)', { s: start, e: limitedEnd }), limiter)(input);
      const later = limited(() => cold('(sd|)', values), limiter);
      expectObservable(first).toBe('--(se|)', { s: start, e: limitedEnd });
      // paused from 2 to 12: both wait, though a slot is free
      expectObservable(at(3, later(input), cold)).toBe('------------(sd|)', values);
      expectObservable(at(4, later(input), cold)).toBe('------------(sd|)', values);
      testing.schedule(() => {
        expect(states).toEqual([
          [0, { waiting: 0, running: 0, tokens: 0 }],
          [0, { waiting: 0, running: 1, tokens: 0 }],
          [2, { waiting: 0, running: 0, tokens: 0, pausedUntil: 12 }],
          [3, { waiting: 1, running: 0, tokens: 0, pausedUntil: 12 }],
          [4, { waiting: 2, running: 0, tokens: 0, pausedUntil: 12 }],
          [12, { waiting: 0, running: 2, tokens: 0 }],
          [12, { waiting: 0, running: 1, tokens: 0 }],
          [12, { waiting: 0, running: 0, tokens: 0 }],
        ]);
      }, 20);
    });
  });

  it('L6: 10,000 calls through one limiter start in their order, and the queue holds no more than what waits', () => {
    const limiter = createLimiter({ maxConcurrent: 1 });
    const started: number[] = [];
    let release: (() => void) | undefined;
    const provider: Provider = () =>
      new Observable<ProviderEvent>((subscriber) => {
        release = () => subscriber.complete();
      });
    for (let i = 0; i < 10_000; i++) {
      limited(() => (started.push(i), provider(input)), limiter)(input).subscribe();
    }
    expect(limiter.state).toEqual({ waiting: 9_999, running: 1, tokens: 0 });
    const queue = (limiter as unknown as { queues: Map<number, { items: unknown[] }> }).queues.get(0)!;
    let largest = 0;
    while (release !== undefined) {
      const next = release;
      release = undefined;
      next();
      largest = Math.max(largest, queue.items.length);
    }
    expect(started).toEqual(Array.from({ length: 10_000 }, (_, i) => i));
    expect(limiter.state).toEqual({ waiting: 0, running: 0, tokens: 0 });
    expect(queue.items.filter((item) => item !== undefined)).toEqual([]); // holds nothing it handed out
    expect(largest).toBe(9_999);
    // steady: 10,000 more, each joining as one ends, with five always waiting — the queue never grows with the count
    started.length = 0;
    for (let i = 0; i < 6; i++) limited(() => (started.push(i), provider(input)), limiter)(input).subscribe();
    largest = 0;
    for (let i = 6; i < 10_006; i++) {
      limited(() => (started.push(i), provider(input)), limiter)(input).subscribe();
      const next = release!;
      release = undefined;
      next();
      largest = Math.max(largest, queue.items.length);
    }
    expect(started).toEqual(Array.from({ length: 10_001 }, (_, i) => i));
    expect(limiter.state).toEqual({ waiting: 5, running: 1, tokens: 0 });
    expect(largest).toBeLessThanOrEqual(2 * 1024 + 6);
  });

  it('L2: a provider that throws when called fails its call and frees its slot', () => {
    const limiter = createLimiter({ maxConcurrent: 1 });
    const errors: unknown[] = [];
    limited(() => {
      throw new Error('boom');
    }, limiter)(input).subscribe({ error: (error) => errors.push(error) });
    const events: ProviderEvent[] = [];
    limited(() => of(start, stop), limiter)(input).subscribe((event) => events.push(event));
    expect(errors).toEqual([new Error('boom')]);
    expect(events).toEqual([start, stop]);
  });

  it('L2: bad options are errors at call time, naming the option', () => {
    expect(() => createLimiter({ maxConcurrent: 0 })).toThrow(new RangeError('createLimiter: maxConcurrent must be an integer >= 1 or Infinity (got 0, a number)'));
    expect(() => createLimiter({ tokensPerMinute: 1.5 })).toThrow(RangeError);
    expect(() => createLimiter({ requestsPerMinute: '5' as never })).toThrow(/requestsPerMinute/);
    expect(() => limited(() => of(stop), {} as never)).toThrow(new TypeError('limited: limiter must be a Limiter from createLimiter() (got {}, an object)'));
    expect(() => limited(() => of(stop), createLimiter(), { priority: NaN })).toThrow(/priority must be a finite number/);
  });
});
