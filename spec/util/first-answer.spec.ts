import { EMPTY, Observable, throwError } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { NoAnswer, firstAnswer } from '../../src/util/first-answer.js';

const testScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

describe('firstAnswer (H1)', () => {
  it('a plain value is answered in the frame of the question, synchronously', () => {
    const seen: string[] = [];
    firstAnswer(() => 'yes').subscribe({ next: (value) => seen.push(value), complete: () => seen.push('|') });
    expect(seen).toEqual(['yes', '|']);
  });

  it("an Observable's first value counts; the Observable is unsubscribed right after it", () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const answers = cold('----a-b|');
      expectObservable(firstAnswer(() => answers)).toBe('----(a|)');
      expectSubscriptions(answers.subscriptions).toBe('^---!');
    });
  });

  it('an Observable that completes without a value errors with NoAnswer: "completed without a value" (H4)', () => {
    testScheduler().run(({ expectObservable }) => {
      expectObservable(firstAnswer(() => EMPTY)).toBe('#', undefined, new NoAnswer());
    });
    expect(new NoAnswer().message).toBe('completed without a value');
  });

  it('a throw, an Observable error and a rejection are its error', async () => {
    const boom = new Error('boom');
    const errors: unknown[] = [];
    firstAnswer(() => {
      throw boom;
    }).subscribe({ error: (error: unknown) => errors.push(error) });
    firstAnswer(() => throwError(() => boom)).subscribe({ error: (error: unknown) => errors.push(error) });
    await new Promise<void>((resolve) => firstAnswer(() => Promise.reject(boom)).subscribe({ error: (error: unknown) => resolve(void errors.push(error)) }));
    expect(errors).toEqual([boom, boom, boom]);
  });

  it('a Promise answers later; a thenable whose then throws is an error', async () => {
    await expect(new Promise((resolve) => firstAnswer(() => Promise.resolve(7)).subscribe(resolve))).resolves.toBe(7);
    const thenable = { then: () => { throw new Error('bad then'); } } as unknown as PromiseLike<number>;
    const errors: unknown[] = [];
    firstAnswer(() => thenable).subscribe({ error: (error: unknown) => errors.push(error) });
    expect(errors).toEqual([new Error('bad then')]);
  });

  it('H5: torn down before the answer, it cancels (the hook sees its signal abort); after the answer, never', () => {
    let cancelled = 0;
    let late = 0;
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const waiting = cold('--------a|');
      expectObservable(firstAnswer(() => waiting, () => cancelled++), '^--!').toBe('---');
      expectSubscriptions(waiting.subscriptions).toBe('^--!');
      const quick = cold('-a|');
      expectObservable(firstAnswer(() => quick, () => late++), '^--!').toBe('-(a|)');
    });
    expect({ cancelled, late }).toEqual({ cancelled: 1, late: 0 });
  });

  it('a Promise that settles after the unsubscribe is ignored, and the question was cancelled', async () => {
    let cancelled = 0;
    let resolve: (value: string) => void = () => undefined;
    const seen: string[] = [];
    firstAnswer(() => new Promise<string>((r) => (resolve = r)), () => cancelled++)
      .subscribe((value) => seen.push(value))
      .unsubscribe();
    resolve('late');
    await Promise.resolve();
    expect({ seen, cancelled }).toEqual({ seen: [], cancelled: 1 });
  });

  it('asks once per subscription, on subscribe (cold)', () => {
    let asked = 0;
    const answer = firstAnswer(() => new Observable<number>((subscriber) => subscriber.next(++asked)));
    expect(asked).toBe(0);
    answer.subscribe();
    answer.subscribe();
    expect(asked).toBe(2);
  });
});
