import { Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { ChunkCount, idleTimeout } from '../../../src/providers/http/idle-timeout.js';

const testScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

/** `idleTimeout` over a count that `chunks` bumps: each value of `chunks` is one chunk of bytes. */
function watched(chunks: Observable<unknown>, ms: number): Observable<void> {
  return new Observable<void>((subscriber) => {
    const count: ChunkCount = { chunks: 0 };
    subscriber.add(idleTimeout(count, ms).subscribe(subscriber));
    subscriber.add(chunks.subscribe(() => count.chunks++));
  });
}

describe('idleTimeout (P12): no data for ms, in virtual time', () => {
  it('with no data at all, fires at ms', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      expectObservable(watched(cold('-'), 8)).toBe('--------(x|)', { x: undefined });
      expectObservable(watched(cold('-'), 300_000)).toBe('300000ms (x|)', { x: undefined });
    });
  });

  it('every chunk keeps it quiet; it fires once the chunks stop (the diagram of the doc comment)', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      expectObservable(watched(cold('-c-c'), 8)).toBe('------------(x|)', { x: undefined });
    });
  });

  it('a slow but steady stream never fires: one chunk in less than ms is enough', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      expectObservable(watched(cold('---c---c---c---c---c---c---c---c---c---c'), 4), '40ms !').toBe('');
      expectObservable(watched(cold('-------c-------c-------c-------c'), 8), '32ms !').toBe('');
    });
  });

  it('notices a silence after ms at the earliest, and less than two looks (half of ms, rounded up) later at the latest', () => {
    for (let ms = 1; ms <= 40; ms++) {
      const step = Math.ceil(ms / 4);
      for (let last = 0; last < ms; last++) {
        const scheduler = testScheduler();
        let firedAt: number | undefined;
        scheduler.run(({ cold }) => {
          watched(cold(`${last}ms c`), ms).subscribe(() => (firedAt = scheduler.now()));
        });
        const silence = firedAt! - last;
        expect([ms, last, silence >= ms && silence < ms + 2 * step]).toEqual([ms, last, true]);
      }
    }
  });

  it('Infinity never fires; nor does a timeout longer than a timer can wait, at once', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      expectObservable(watched(cold('-'), Infinity), '1000s !').toBe('');
      expectObservable(watched(cold('-'), 10 * 2 ** 31), '1000s !').toBe('');
    });
  });

  it('unsubscribed, it stops looking', () => {
    testScheduler().run(({ expectObservable }) => {
      expectObservable(idleTimeout({ chunks: 0 }, 8), '----!').toBe('');
    });
  });
});

// on the platform's own timers (jest's fake clock, which overflows past 2^31 - 1 ms as Node's setTimeout does)
describe('idleTimeout (P12) on real timers', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it.each([2 ** 31, 2 ** 33, 10 * 2 ** 31 + 7, Number.MAX_SAFE_INTEGER])('P12: an idleTimeoutMs of %d (past 2^31 ms) never fires early', (ms) => {
    let firedAt: number | undefined;
    const startedAt = Date.now();
    const subscription = idleTimeout({ chunks: 0 }, ms).subscribe(() => (firedAt = Date.now() - startedAt));
    // where an overflowed timer would long have fired, and up to 1 ms before the time (for the longest: 8 · 2^31 ms)
    jest.advanceTimersByTime(Math.min(ms - 1, 2 ** 34));
    expect(firedAt).toBeUndefined();
    if (ms <= 2 ** 34) {
      jest.advanceTimersByTime(Math.ceil(ms / 2) + 1); // less than two looks later at the latest
      expect(firedAt).toBeGreaterThanOrEqual(ms);
    }
    subscription.unsubscribe();
    expect(jest.getTimerCount()).toBe(0);
  });
});
