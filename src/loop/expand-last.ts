import { MonoTypeOperatorFunction, Observable, ObservableInput, SchedulerAction, SchedulerLike, Subscriber, from } from 'rxjs';

/**
 * Like `expand`, but one inner at a time, and the projection sees only each inner's **last** value.
 * Every value of the source and of each inner passes straight through; when one completes, `project`
 * gets its last value and returns the next inner, or `undefined` to complete. An inner that completes
 * without a value completes the whole. Errors pass through.
 *
 * The agent loop is this operator over turns: each turn ends with its `turn_end`, and the projection
 * reads it to decide — the next turn, or the end — without ever emitting anything itself.
 *
 * With a `scheduler`, each next inner is subscribed in a scheduled action instead of inside the
 * previous inner's `complete`: on a queue-style scheduler, synchronous inners then run one after
 * another on a flat stack instead of nesting (rxjs `expand` recurses, and a loop built
 * on it dies silently after about a hundred synchronous turns: `examples/textbook-loop.ts`).
 *
 * ```text
 * source:     -a-b|
 * inner (b):      -c-d|                 project(b) → inner 2
 * inner (d):           -e|              project(d) → inner 3; project(e) → undefined
 * result:     -a-b-c-d-e|
 * ```
 *
 * ```ts
 * // count down, one inner per step; the projection reads the last value only
 * of(3).pipe(expandLast((n) => (n > 0 ? of(`${n}…`, n - 1) : undefined)));
 * // 3, '3…', 2, '2…', 1, '1…', 0
 * ```
 */
export function expandLast<T>(
  project: (last: T, index: number) => ObservableInput<T> | undefined,
  scheduler?: SchedulerLike,
): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((subscriber) => {
      let index = 0;
      // made once a subscription, not once an inner (bench W1: an inner is a turn)
      const onLast = (last: T): void => {
        let next: ObservableInput<T> | undefined;
        try {
          next = project(last, index++);
        } catch (error) {
          return subscriber.error(error);
        }
        if (next === undefined) return subscriber.complete();
        if (scheduler === undefined) return subscribeTo(from(next));
        subscriber.add(scheduler.schedule(subscribeNext, 0, from(next)));
      };
      function subscribeNext(this: SchedulerAction<Observable<T>>, inner?: Observable<T>): void {
        this.unsubscribe(); // done with: leave `subscriber`, so that a long loop keeps no finished actions
        subscribeTo(inner!);
      }
      const subscribeTo = (inner: Observable<T>): void => {
        inner.subscribe(new LastValueSubscriber(subscriber, onLast));
      };
      subscribeTo(source);
    });
}

/**
 * Passes values to `destination` and remembers the last; on complete hands it to `done` (or completes
 * `destination` when there was none). Added to `destination`, so that unsubscribing the result tears
 * down the running inner at once, even one that is still emitting synchronously.
 */
class LastValueSubscriber<T> extends Subscriber<T> {
  private hasValue = false;
  private last: T | undefined;

  constructor(
    destination: Subscriber<T>,
    private readonly done: (last: T) => void,
  ) {
    super(destination);
  }

  // `next` itself rather than `_next`: this sits on every event of the loop, one call less each (with
  // streamReply's, 6.3% of W2: bench/machinery.js, 1,280 → 1,199 instructions a delta)
  override next(value: T): void {
    if (this.isStopped) return;
    this.hasValue = true;
    this.last = value;
    this.destination.next(value);
  }

  protected override _complete(): void {
    const { destination, hasValue, last } = this;
    // leave `destination` before the next inner joins it: a long loop does not pile up finished turns
    this.unsubscribe();
    if (hasValue) this.done(last as T);
    else destination.complete();
  }
}
