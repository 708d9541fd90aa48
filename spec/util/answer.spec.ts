import { Observable, throwError } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { type AnswerObserver, fromAnswer, subscribeAnswer } from '../../src/util/answer.js';

const testScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

/** An observer that writes what it is told: `v:1`, `|`, `#:boom`. */
function recorder(): AnswerObserver<unknown> & { log: string[] } {
  const log: string[] = [];
  return {
    log,
    next: (value) => log.push(`v:${String(value)}`),
    error: (error: unknown) => log.push(`#:${(error as Error).message}`),
    complete: () => log.push('|'),
  };
}

describe('subscribeAnswer, fromAnswer: the one value / Promise / Observable adapter (R31)', () => {
  it('R31: a plain value is delivered inside the call, then completes, with nothing to tear down (no Promise hop)', () => {
    const seen = recorder();
    expect(subscribeAnswer(42, seen)).toBeUndefined();
    expect(seen.log).toEqual(['v:42', '|']);
  });

  it("R31: a Promise's value comes when it resolves, its rejection as an error; a thenable whose then throws errors at once", async () => {
    const resolved = recorder();
    subscribeAnswer(Promise.resolve('later'), resolved);
    expect(resolved.log).toEqual([]);
    await Promise.resolve();
    expect(resolved.log).toEqual(['v:later', '|']);

    const rejected = recorder();
    subscribeAnswer(Promise.reject(new Error('boom')), rejected);
    await Promise.resolve();
    expect(rejected.log).toEqual(['#:boom']);

    const broken = recorder();
    const thenable = { then: () => { throw new Error('bad then'); } } as unknown as PromiseLike<number>;
    subscribeAnswer(thenable, broken);
    expect(broken.log).toEqual(['#:bad then']);
  });

  it('R31: torn down before its Promise settled, the outcome is dropped', async () => {
    let resolve: (value: string) => void = () => undefined;
    const seen = recorder();
    subscribeAnswer(new Promise<string>((r) => (resolve = r)), seen)!.unsubscribe();
    resolve('late');
    await Promise.resolve();
    expect(seen.log).toEqual([]);
  });

  it('R31: an Observable is subscribed as it is: its values, its end, and unsubscribing it', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const answers = cold('-a-b|');
      expectObservable(fromAnswer(answers)).toBe('-a-b|');
      const long = cold('-a-b-c|');
      expectObservable(new Observable((subscriber) => subscribeAnswer(long, subscriber)), '^--!').toBe('-a-');
      expectSubscriptions(long.subscriptions).toBe('^--!');
    });
    const failing = recorder();
    subscribeAnswer(throwError(() => new Error('no')), failing);
    expect(failing.log).toEqual(['#:no']);
  });

  it('R31: fromAnswer gives an Observable back unchanged, and a value or a Promise as a cold Observable', async () => {
    const source = new Observable<number>();
    expect(fromAnswer(source)).toBe(source);
    testScheduler().run(({ expectObservable }) => expectObservable(fromAnswer('v')).toBe('(v|)'));
    const values: number[] = [];
    const promised = fromAnswer(Promise.resolve(3));
    await new Promise<void>((done) => promised.subscribe({ next: (value) => values.push(value), complete: done }));
    await new Promise<void>((done) => promised.subscribe({ next: (value) => values.push(value), complete: done }));
    expect(values).toEqual([3, 3]);
  });
});
