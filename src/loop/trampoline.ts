import { SchedulerAction, SchedulerLike, Subscription, asyncScheduler } from 'rxjs';
import { HeadQueue } from '../util/head-queue.js';

/**
 * A queue scheduler of the loop's own (R19), made once per loop subscription. Work scheduled while
 * it is not flushing runs at once; work scheduled from inside that work waits in its queue until the
 * current piece returns. So a synchronous turn that schedules the next one returns first, and 10,000
 * synchronous turns run one after another on a flat stack (R12).
 *
 * Why not rxjs's `queueScheduler`: it is one instance for the whole application. A loop subscribed
 * inside an application's `queueScheduler` action would find it flushing and queue its turns behind
 * that action, so none of its synchronous events would arrive before `subscribe()` returns.
 * redux-observable makes its own queue scheduler for the same reason.
 *
 * ```text
 * schedule(a) while idle:      a runs now; inside a, schedule(b): queued
 * after a returns:             b runs; inside b, schedule(c): queued; and so on
 * ```
 *
 * ```ts
 * const trampoline = new Trampoline();
 * trampoline.schedule(() => console.log('now, unless the trampoline is already running'));
 * ```
 */
export class Trampoline implements SchedulerLike {
  private readonly queue = new HeadQueue<Runnable>();
  private flushing = false;

  now(): number {
    return Date.now();
  }

  schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
    // the loop only ever asks for "next"; a delay is real time, which is asyncScheduler's job
    if (delay > 0) return asyncScheduler.schedule(work, delay, state);
    return new TrampolineAction(this, work).schedule(state);
  }

  /** Runs `action` now, or after the work in progress when the trampoline is already running. */
  run(action: Runnable): void {
    if (this.flushing) {
      this.queue.push(action);
      return;
    }
    this.flushing = true;
    let failure: { error: unknown } | undefined;
    for (let next: Runnable | undefined = action; next !== undefined; next = this.queue.shift()) {
      try {
        next.execute();
      } catch (error) {
        // the rest of the queue belongs to others: run it, then report the first failure
        failure ??= { error };
      }
    }
    this.flushing = false;
    if (failure !== undefined) throw failure.error;
  }
}

interface Runnable {
  execute(): void;
}

/** One piece of scheduled work; unsubscribing it before it runs cancels it. */
class TrampolineAction<T> extends Subscription implements SchedulerAction<T> {
  private state: T | undefined;

  constructor(
    private readonly trampoline: Trampoline,
    private readonly work: (this: SchedulerAction<T>, state?: T) => void,
  ) {
    super();
  }

  schedule(state?: T, delay = 0): Subscription {
    if (this.closed) return this;
    if (delay > 0) return this.trampoline.schedule(this.work, delay, state);
    this.state = state;
    this.trampoline.run(this);
    return this;
  }

  execute(): void {
    if (!this.closed) this.work.call(this, this.state);
  }
}
