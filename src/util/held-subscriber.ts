import { Observer, Subscriber } from 'rxjs';

/**
 * A Subscriber made before it subscribes, so that its holder can close the source at any moment — also
 * during `subscribe()`'s synchronous start, when the Subscription that `subscribe()` returns does not
 * exist yet (C3: a consumer that leaves on the first event of a loop must close that loop at once). The
 * source sees it closed and stops; on `error` or `complete` it closes itself before telling `observer`.
 *
 * ```ts
 * const held = new HeldSubscriber<string>({ next: (prompt) => start(prompt) });
 * this.prompts = held;          // in place before the first prompt
 * prompts$.subscribe(held);     // an unsubscribe inside start() closes prompts$ now
 * ```
 */
export class HeldSubscriber<T> extends Subscriber<T> {
  constructor(private readonly observer: Partial<Observer<T>>) {
    super(); // no destination: it belongs to no one but its holder
  }

  protected override _next(value: T): void {
    this.observer.next?.(value);
  }

  protected override _error(error: unknown): void {
    this.unsubscribe();
    this.observer.error?.(error);
  }

  protected override _complete(): void {
    this.unsubscribe();
    this.observer.complete?.();
  }
}
