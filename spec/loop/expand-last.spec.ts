import { EMPTY, Observable, Subject, of, queueScheduler, take } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { expandLast } from '../../src/index.js';
import { Trampoline } from '../../src/loop/trampoline.js';

const testScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

describe('expandLast', () => {
  it('passes every value through and projects only the last value of each inner', () => {
    const seen: string[] = [];
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const diagram = {
        source:     '-a-b|',
        second:     '    -c-d|',
        third:      '        -e|',
        result:     '-a-b-c-d-e|',
        secondRuns: '----^---!',
        thirdRuns:  '--------^-!',
      };
      const second = cold(diagram.second);
      const third = cold(diagram.third);
      const project = (last: string) => {
        seen.push(last);
        return last === 'b' ? second : last === 'd' ? third : undefined;
      };
      expectObservable(cold(diagram.source).pipe(expandLast(project))).toBe(diagram.result);
      expectSubscriptions(second.subscriptions).toBe(diagram.secondRuns);
      expectSubscriptions(third.subscriptions).toBe(diagram.thirdRuns);
    });
    expect(seen).toEqual(['b', 'd', 'e']);
  });

  it('never subscribes the next inner before the current one completes', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const diagram = {
        source:   '-a---b|',
        next:     '      -c|',
        result:   '-a---b-c|',
        nextRuns: '------^-!',
      };
      const next = cold(diagram.next);
      expectObservable(cold(diagram.source).pipe(expandLast((last) => (last === 'b' ? next : undefined)))).toBe(diagram.result);
      expectSubscriptions(next.subscriptions).toBe(diagram.nextRuns);
    });
  });

  it('unsubscribing tears down the running inner', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const diagram = {
        source:   '-a|',
        next:     '  -b---c|',
        result:   '-a-b-',
        unsub:    '^---!',
        nextRuns: '--^-!',
      };
      const next = cold(diagram.next);
      expectObservable(cold(diagram.source).pipe(expandLast(() => next)), diagram.unsub).toBe(diagram.result);
      expectSubscriptions(next.subscriptions).toBe(diagram.nextRuns);
    });
  });

  it('errors pass through; an error thrown by the projection is the result error', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-a#').pipe(expandLast<string>(() => EMPTY))).toBe('-a#');
      const boom = new Error('boom');
      const project = () => {
        throw boom;
      };
      expectObservable(cold('-a|').pipe(expandLast(project))).toBe('-a#', undefined, boom);
    });
  });

  it('an inner that completes without a value completes the whole', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const project = jest.fn(() => of('x'));
      expectObservable(cold('--|').pipe(expandLast(project))).toBe('--|');
      expect(project).not.toHaveBeenCalled();
    });
  });

  it('with a queue scheduler, 100,000 synchronous inners run on a flat stack; without one, the run dies silently', () => {
    const countdown = (scheduler?: Trampoline) => of(100_000).pipe(expandLast((n: number) => (n > 0 ? of(n - 1) : undefined), scheduler));
    let last: number | undefined;
    let completed = false;
    countdown(new Trampoline()).subscribe({ next: (n) => (last = n), complete: () => (completed = true) });
    expect([last, completed]).toEqual([0, true]);

    // without: each inner subscribes the next inside its own `complete`; the stack overflows and the
    // run just stops, with neither an error nor a completion (rxjs reports the overflow asynchronously)
    let stoppedAt: number | undefined;
    let ended = false;
    countdown().subscribe({ next: (n) => (stoppedAt = n), error: () => (ended = true), complete: () => (ended = true) });
    expect(stoppedAt).toBeGreaterThan(0);
    expect(ended).toBe(false);
  });

  it('a consumer that leaves during a synchronous inner stops it at once', () => {
    let emitted = 0;
    const many = new Observable<number>((subscriber) => {
      for (let i = 0; i < 1000 && !subscriber.closed; i++) {
        emitted++;
        subscriber.next(i);
      }
      subscriber.complete();
    });
    const values: number[] = [];
    of(-1)
      .pipe(
        expandLast((last) => (last === -1 ? many : undefined), new Trampoline()),
        take(3),
      )
      .subscribe((value) => values.push(value));
    expect(values).toEqual([-1, 0, 1]);
    expect(emitted).toBe(2);
  });

  it('leaves no finished inner or scheduled action behind in a long run', () => {
    const subject = new Subject<number>();
    let subscribed = 0;
    const inner = () =>
      new Observable<number>((subscriber) => {
        subscribed++;
        subscriber.next(subscribed);
        subscriber.complete();
      });
    const subscription = subject.pipe(expandLast((n) => (n < 1000 ? inner() : undefined), queueScheduler)).subscribe();
    subject.next(0);
    subject.complete();
    expect(subscribed).toBe(1000);
    expect(subscription.closed).toBe(true);
  });
});
