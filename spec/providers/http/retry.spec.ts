import { defer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { WireError } from '../../../src/providers/http/error-text.js';
import { MAX_RETRY_AFTER_MS, RetryableError, backoff, isRetryableStatus, retryAfter, retryDelay, retryFailures } from '../../../src/providers/http/retry.js';

const testScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

const unavailable = new RetryableError('HTTP 503: Service Unavailable');
const limited = (headers: Record<string, string>) => new RetryableError('HTTP 429: Rate limit reached', retryAfter(new Headers(headers)));

// the schedule in virtual time: every `-#` is one attempt (one request) that fails before it emitted anything
describe('retryFailures (P4): the retry schedule in virtual time', () => {
  beforeEach(() => jest.spyOn(Math, 'random').mockReturnValue(0)); // no jitter: the backoff at its longest
  afterEach(() => jest.restoreAllMocks());

  it('backs off 0.5 s, then 1 s, and passes the last failure on after maxRetries', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const attempt = cold('-#', undefined, unavailable);
      expectObservable(attempt.pipe(retryFailures(2))).toBe('- 500ms - 1000ms -#', undefined, unavailable);
      expectSubscriptions(attempt.subscriptions).toBe([
        '^!',
        '- 500ms ^!',
        '- 500ms - 1000ms ^!',
      ]);
    });
  });

  it('doubles up to 8 s', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const attempt = cold('#', undefined, unavailable);
      expectObservable(attempt.pipe(retryFailures(6))).toBe('23500ms #', undefined, unavailable); // 0.5 + 1 + 2 + 4 + 8 + 8
      expectSubscriptions(attempt.subscriptions).toBe(['(^!)', '500ms (^!)', '1500ms (^!)', '3500ms (^!)', '7500ms (^!)', '15500ms (^!)', '23500ms (^!)']);
    });
  });

  it('waits what the server asks: retry-after in seconds, retry-after-ms winning over it', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const first = cold('-#', undefined, limited({ 'retry-after': '3' }));
      const second = cold('-#', undefined, limited({ 'retry-after': '3', 'retry-after-ms': '250' }));
      const third = cold('--a|');
      const attempts = [first, second, third];
      expectObservable(defer(() => attempts.shift()!).pipe(retryFailures(2))).toBe('- 3000ms - 250ms --a|');
      expectSubscriptions(first.subscriptions).toBe('^!');
      expectSubscriptions(second.subscriptions).toBe('- 3000ms ^!');
      expectSubscriptions(third.subscriptions).toBe('- 3000ms - 250ms ^--!');
    });
  });

  it('retry-after: 0 retries in the same frame', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const first = cold('-#', undefined, limited({ 'retry-after': '0' }));
      const second = cold('-a|');
      const attempts = [first, second];
      expectObservable(defer(() => attempts.shift()!).pipe(retryFailures(2))).toBe('--a|');
      expectSubscriptions(second.subscriptions).toBe('-^-!');
    });
  });

  it('does not retry when the server asks to wait more than a minute', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const tooLong = limited({ 'retry-after': '61' });
      const attempt = cold('-#', undefined, tooLong);
      expectObservable(attempt.pipe(retryFailures(2))).toBe('-#', undefined, tooLong);
      expectSubscriptions(attempt.subscriptions).toBe('^!');
    });
  });

  it('passes any other error on at once: a 401, a JSON reply, a translator\'s failure', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const unauthorized = new WireError('HTTP 401: invalid x-api-key');
      const attempt = cold('-#', undefined, unauthorized);
      expectObservable(attempt.pipe(retryFailures(2))).toBe('-#', undefined, unauthorized);
      expectSubscriptions(attempt.subscriptions).toBe('^!');
    });
  });

  it('maxRetries 0: one attempt', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const attempt = cold('-#', undefined, unavailable);
      expectObservable(attempt.pipe(retryFailures(0))).toBe('-#', undefined, unavailable);
      expectSubscriptions(attempt.subscriptions).toBe('^!');
    });
  });

  it('unsubscribing while it waits cancels the retry', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const attempt = cold('-#', undefined, limited({ 'retry-after': '30' }));
      expectObservable(attempt.pipe(retryFailures(2)), '- 10s !').toBe('-');
      expectSubscriptions(attempt.subscriptions).toBe('^!');
    });
  });

  it('a success passes through as it is; nothing after it is retried', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const attempt = cold('-a-#', undefined, unavailable);
      expectObservable(attempt.pipe(retryFailures(2))).toBe('-a- 500ms -a- 1000ms -a-#', undefined, unavailable);
      expectSubscriptions(attempt.subscriptions).toBe(['^--!', '--- 500ms ^--!', '--- 500ms --- 1000ms ^--!']);
    });
  });
});

describe('the schedule, one piece at a time', () => {
  it('isRetryableStatus: 408, 409, 429 and 5xx', () => {
    expect([400, 401, 403, 404, 408, 409, 422, 429, 500, 502, 503, 529].filter(isRetryableStatus)).toEqual([408, 409, 429, 500, 502, 503, 529]);
  });

  it('backoff: 0.5 s doubling up to 8 s, less up to a quarter at random', () => {
    expect([1, 2, 3, 4, 5, 6, 10].map((n) => backoff(n, 0))).toEqual([500, 1000, 2000, 4000, 8000, 8000, 8000]);
    expect(backoff(1, 0.5)).toBe(437.5);
    expect(backoff(5, 0.999)).toBeCloseTo(6002, 0);
    for (let i = 0; i < 100; i++) {
      const ms = backoff(3);
      expect(ms).toBeGreaterThan(1500);
      expect(ms).toBeLessThanOrEqual(2000);
    }
  });

  it('retryAfter: retry-after-ms wins; retry-after in seconds or as an HTTP date; nothing readable is undefined', () => {
    const now = Date.UTC(2026, 0, 1, 0, 0, 0);
    const wait = (headers: Record<string, string>) => retryAfter(new Headers(headers), now);
    expect(wait({ 'retry-after-ms': '1500', 'retry-after': '2' })).toBe(1500);
    expect(wait({ 'retry-after-ms': ' 12.5 ' })).toBe(12.5);
    expect(wait({ 'retry-after': '2' })).toBe(2000);
    expect(wait({ 'retry-after': '0.5' })).toBe(500);
    expect(wait({ 'retry-after-ms': 'soon', 'retry-after': '2' })).toBe(2000); // an unreadable retry-after-ms does not count
    expect(wait({ 'retry-after': 'Thu, 01 Jan 2026 00:00:03 GMT' })).toBe(3000);
    expect(wait({ 'retry-after': 'Wed, 31 Dec 2025 23:59:00 GMT' })).toBe(0); // in the past: at once
    expect(wait({ 'retry-after': 'later' })).toBeUndefined();
    expect(wait({ 'retry-after': '-1' })).toBeUndefined();
    expect(wait({})).toBeUndefined();
  });

  it('retryDelay: the server\'s wish up to a minute, else the backoff; only a RetryableError', () => {
    jest.spyOn(Math, 'random').mockReturnValue(0);
    try {
      expect(retryDelay(unavailable, 2)).toBe(1000);
      expect(retryDelay(new RetryableError('HTTP 429', 0), 1)).toBe(0);
      expect(retryDelay(new RetryableError('HTTP 429', MAX_RETRY_AFTER_MS), 1)).toBe(60_000);
      expect(retryDelay(new RetryableError('HTTP 429', MAX_RETRY_AFTER_MS + 1), 1)).toBeUndefined();
      expect(retryDelay(new WireError('HTTP 401: no'), 1)).toBeUndefined();
      expect(retryDelay(new Error('boom'), 1)).toBeUndefined();
    } finally {
      jest.restoreAllMocks();
    }
  });
});
