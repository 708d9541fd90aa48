import { asyncScheduler } from 'rxjs';

/** The longest delay a timer takes: Node (and browsers) run a longer one after about 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Calls `fn` once, `ms` from now — however long that is: a wait past {@link MAX_TIMER_MS} is chained in
 * steps no timer overflows on — and returns what cancels it. On RxJS's async scheduler, so that
 * `TestScheduler.run` and fake timers see it as they see `timer`. `Infinity` never calls `fn`.
 *
 * ```ts
 * const cancel = setLongTimeout(() => controller.abort(), 30 * 24 * 3600 * 1000); // 30 days, not 1 ms
 * cancel();
 * ```
 */
export function setLongTimeout(fn: () => void, ms: number): () => void {
  const first = Math.min(ms, MAX_TIMER_MS);
  // the state is what is left to wait after the step now scheduled
  const action = asyncScheduler.schedule<number>(
    function (left = 0) {
      if (left <= 0) return fn();
      const step = Math.min(left, MAX_TIMER_MS);
      this.schedule(left - step, step);
    },
    first,
    ms - first,
  );
  return () => action.unsubscribe();
}
