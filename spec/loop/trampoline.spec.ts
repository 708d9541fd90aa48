import { Observable, queueScheduler, subscribeOn } from 'rxjs';
import { Trampoline } from '../../src/loop/trampoline.js';

describe('Trampoline', () => {
  it('runs work at once when idle, and work scheduled from inside it after the current piece returns', () => {
    const trampoline = new Trampoline();
    const log: string[] = [];
    trampoline.schedule(() => {
      log.push('a start');
      trampoline.schedule(() => log.push('b'));
      log.push('a end');
    });
    expect(log).toEqual(['a start', 'a end', 'b']);
  });

  it('is not the application queueScheduler: inside one of its actions, it still runs at once', () => {
    const trampoline = new Trampoline();
    const log: string[] = [];
    queueScheduler.schedule(() => {
      trampoline.schedule(() => log.push('mine'));
      queueScheduler.schedule(() => log.push('app'));
      log.push('app action ends');
    });
    expect(log).toEqual(['mine', 'app action ends', 'app']);
  });

  it('an action unsubscribed before its turn does not run', () => {
    const trampoline = new Trampoline();
    const log: string[] = [];
    trampoline.schedule(() => {
      trampoline.schedule(() => log.push('cancelled')).unsubscribe();
      trampoline.schedule(() => log.push('kept'));
    });
    expect(log).toEqual(['kept']);
  });

  it('works with subscribeOn and runs the rest of the queue when one piece throws, then rethrows', () => {
    const trampoline = new Trampoline();
    const log: string[] = [];
    expect(() =>
      trampoline.schedule(() => {
        trampoline.schedule(() => {
          throw new Error('boom');
        });
        new Observable<string>((subscriber) => subscriber.next('subscribed')).pipe(subscribeOn(trampoline)).subscribe((v) => log.push(v));
      }),
    ).toThrow('boom');
    expect(log).toEqual(['subscribed']);
  });

  it('delays go to real time (asyncScheduler)', () => {
    jest.useFakeTimers();
    try {
      const log: string[] = [];
      new Trampoline().schedule(() => log.push('later'), 10);
      expect(log).toEqual([]);
      jest.advanceTimersByTime(10);
      expect(log).toEqual(['later']);
    } finally {
      jest.useRealTimers();
    }
  });
});
