import { TestScheduler } from 'rxjs/testing';
import { MAX_TIMER_MS, setLongTimeout } from '../../src/util/long-timeout';

// jest's fake timers, like Node, run a timer whose delay is past 2^31 - 1 ms after 1 ms
describe('setLongTimeout', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('R16: a wait past 2^31 ms never fires early, and fires when it is due', () => {
    const fn = jest.fn();
    setLongTimeout(fn, 2 ** 31 + 5);
    jest.advanceTimersByTime(1);
    expect(fn).not.toHaveBeenCalled();
    jest.advanceTimersByTime(MAX_TIMER_MS - 1);
    expect(fn).not.toHaveBeenCalled();
    jest.advanceTimersByTime(5);
    expect(fn).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(fn).toHaveBeenCalledTimes(1);
    expect(jest.getTimerCount()).toBe(0); // nothing left behind
  });

  it('R16: no step it schedules is longer than a timer takes', () => {
    const delays: number[] = [];
    const real = global.setInterval;
    const spy = jest.spyOn(global, 'setInterval').mockImplementation(((fn: () => void, ms?: number) => {
      delays.push(ms ?? 0);
      return real(fn, ms);
    }) as typeof setInterval);
    const fn = jest.fn();
    setLongTimeout(fn, 5 * 2 ** 31);
    jest.advanceTimersByTime(5 * 2 ** 31);
    spy.mockRestore();
    expect(fn).toHaveBeenCalledTimes(1);
    expect(delays.length).toBeGreaterThan(1);
    expect(Math.max(...delays)).toBeLessThanOrEqual(MAX_TIMER_MS);
  });

  it('R16: a short wait is one timer; cancelling it leaves none and never calls', () => {
    const fn = jest.fn();
    const cancel = setLongTimeout(fn, 10);
    expect(jest.getTimerCount()).toBe(1);
    cancel();
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(100);
    expect(fn).not.toHaveBeenCalled();
  });

  it('R16: a long wait cancelled between its steps never calls', () => {
    const fn = jest.fn();
    const cancel = setLongTimeout(fn, 3 * 2 ** 31);
    jest.advanceTimersByTime(2 ** 31 + 10);
    cancel();
    jest.advanceTimersByTime(4 * 2 ** 31);
    expect(fn).not.toHaveBeenCalled();
    expect(jest.getTimerCount()).toBe(0);
  });

  it('R16: Infinity never calls', () => {
    const fn = jest.fn();
    const cancel = setLongTimeout(fn, Infinity);
    jest.advanceTimersByTime(4 * 2 ** 31);
    expect(fn).not.toHaveBeenCalled();
    cancel();
    expect(jest.getTimerCount()).toBe(0);
  });
});

describe('setLongTimeout in virtual time', () => {
  it('R16: runs on the async scheduler, so TestScheduler.run sees it at its frame', () => {
    const scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    scheduler.run(({ flush }) => {
      const at: number[] = [];
      setLongTimeout(() => at.push(scheduler.now()), 7);
      setLongTimeout(() => at.push(scheduler.now()), 2 ** 31 + 3);
      flush();
      expect(at).toEqual([7, 2 ** 31 + 3]);
    });
  });
});
