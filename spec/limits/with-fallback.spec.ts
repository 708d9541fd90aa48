import { Observable, of } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { failsOver, withFallback } from '../../src/index.js';
import type { Provider, ProviderEvent, ProviderFailure } from '../../src/index.js';

const start: ProviderEvent = { type: 'message_start' };
const text = (value: string): ProviderEvent => ({ type: 'text_delta', text: value });
const stop: ProviderEvent = { type: 'message_end', stopReason: 'stop' };
const failed = (failure: Omit<ProviderFailure, 'message'>): ProviderEvent => ({
  type: 'message_end',
  stopReason: 'error',
  errorMessage: 'down',
  failure: { ...failure, message: 'down' },
});
const e503 = failed({ kind: 'http', status: 503 });
const e401 = failed({ kind: 'http', status: 401 });
const values = { s: start, t: text('hi'), d: stop, e: e503, f: e401, n: failed({ kind: 'network' }) };
const input = { messages: [{ role: 'user' as const, content: 'go' }], tools: [] };

/** A provider of one cold line per call, named after `model` as the real providers are. */
function named(model: string, line: Observable<ProviderEvent>): Provider {
  return Object.assign(() => line, { model });
}

function scheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

describe('withFallback (L1)', () => {
  it('L1: a call that fails over before its first word subscribes the next provider at that frame; the consumer sees one message_start and the model that answered', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const primary = cold('-s-e|', values);
      const backup = cold('-s-t-d|', values);
      const provider = withFallback([named('big', primary), named('small', backup)]);
      expectObservable(provider(input)).toBe('-s----t-d|', { ...values, d: { ...stop, model: 'small' } });
      expectSubscriptions(primary.subscriptions).toBe('^--!');
      expectSubscriptions(backup.subscriptions).toBe('---^-----!');
    });
  });

  it('L1: the default failOver: network, timeout, 408, 409, 429, 5xx and 529 — never 400, 401, 403, 404, 413, 422, a refusal or a protocol error', () => {
    const http = (status: number) => failsOver({ kind: 'http', status, message: '' });
    expect([408, 409, 429, 500, 502, 503, 504, 529].map(http)).toEqual(Array(8).fill(true));
    expect([400, 401, 403, 404, 413, 422].map(http)).toEqual(Array(6).fill(false));
    expect(failsOver({ kind: 'network', message: '' })).toBe(true);
    expect(failsOver({ kind: 'timeout', message: '' })).toBe(true);
    expect(failsOver({ kind: 'refusal', message: '' })).toBe(false);
    expect(failsOver({ kind: 'protocol', message: '' })).toBe(false);
    expect(failsOver({ kind: 'http', message: 'no status' })).toBe(false);
  });

  it('L1: a 401 is the reply (no fail-over by default), and failOver decides when given', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const primary = cold('-s-f|', values);
      const backup = cold('-s-d|', values);
      expectObservable(withFallback([primary, backup].map((line) => () => line))(input)).toBe('-s-f|', values);
      expectSubscriptions(backup.subscriptions).toBe([]);
    });
    scheduler().run(({ cold, expectObservable }) => {
      const primary = cold('-s-f|', values);
      const backup = cold('-s-d|', values);
      const provider = withFallback([() => primary, () => backup], { failOver: (failure) => failure.status === 401 });
      expectObservable(provider(input)).toBe('-s----d|', values);
    });
  });

  it('L1: an error after the first content event is the reply, kept: no fail-over, no text sent twice', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const primary = cold('-s-t-e|', values);
      const backup = cold('-s-d|', values);
      expectObservable(withFallback([() => primary, () => backup])(input)).toBe('-s-t-e|', values);
      expectSubscriptions(backup.subscriptions).toBe([]);
    });
  });

  it("L1: the last provider's failure is the reply", () => {
    scheduler().run(({ cold, expectObservable }) => {
      const first = cold('-s-e|', values);
      const second = cold('-s-n|', values);
      expectObservable(withFallback([() => first, () => second])(input)).toBe('-s----n|', values);
    });
  });

  it('L1: after a fail-over the calls stay on the provider that answered for cooldownMs, then try the first again', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const primary = cold('(se|)', values);
      const backup = cold('(sd|)', values);
      const provider = withFallback([() => primary, () => backup], { cooldownMs: 10 });
      // calls at 0 (fails over), 5 (within the cooldown: the backup only), 10 (the first again)
      const at = (frame: number) => cold(`${'-'.repeat(frame)}(x|)`, { x: 0 });
      const calls = (frame: number) => new Observable<ProviderEvent>((subscriber) => at(frame).subscribe({ complete: () => provider(input).subscribe(subscriber) }));
      expectObservable(calls(0)).toBe('(sd|)', values);
      expectObservable(calls(5)).toBe('-----(sd|)', values);
      expectObservable(calls(10)).toBe('----------(sd|)', values);
      expectSubscriptions(primary.subscriptions).toBe(['(^!)', '----------(^!)']);
      expectSubscriptions(backup.subscriptions).toBe(['(^!)', '-----(^!)', '----------(^!)']);
    });
  });

  it('L1: unsubscribing cancels the provider the call is on', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const primary = cold('-s-e|', values);
      const backup = cold('-s-t-----d|', values);
      expectObservable(withFallback([() => primary, () => backup])(input), '^------!').toBe('-s----t', values);
      expectSubscriptions(backup.subscriptions).toBe('---^---!');
    });
  });

  it('L1: a provider that fails over inside its own subscribe is let go, and nothing of it is seen', () => {
    let torn = 0;
    const sync: Provider = () =>
      new Observable<ProviderEvent>((subscriber) => {
        subscriber.next(start);
        subscriber.next(e503);
        return () => torn++;
      });
    const events: ProviderEvent[] = [];
    withFallback([sync, () => of(start, text('ok'), stop)])(input).subscribe((event) => events.push(event));
    expect(events).toEqual([start, text('ok'), stop]);
    expect(torn).toBe(1);
  });

  it('L1: bad options are TypeErrors and RangeErrors at call time, naming the option', () => {
    const p: Provider = () => of(stop);
    expect(() => withFallback([])).toThrow(new TypeError('withFallback: providers must be a non-empty array of providers (got [], an array)'));
    expect(() => withFallback([p, 'x' as never])).toThrow(/^withFallback: providers\[1\] must be a provider function \(got "x", a string\)$/);
    expect(() => withFallback([p], { failOver: 1 as never })).toThrow(TypeError);
    expect(() => withFallback([p], { cooldownMs: -1 })).toThrow(new RangeError('withFallback: cooldownMs must be a number >= 0 (got -1, a number)'));
  });
});
