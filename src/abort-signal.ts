import { Observable } from 'rxjs';

/**
 * Emits once and completes when `signal` aborts, at once if it already has; never without a signal.
 * Removes its listener on unsubscribe, so a long-lived signal collects no listeners.
 *
 * ```text
 * signal:        ----abort
 * fromAbort:     ----(x|)
 * ```
 */
export function fromAbortSignal(signal: AbortSignal | undefined): Observable<void> {
  return new Observable<void>((subscriber) => {
    if (!signal) return;
    const onAbort = () => {
      subscriber.next();
      subscriber.complete();
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    return () => signal.removeEventListener('abort', onAbort);
  });
}

/**
 * A tool's `signal`, made only when the handler reads it: most tools never do, and an
 * `AbortController` per call is the largest per-call cost of a loop.
 */
export class LazyAbort {
  private controller: AbortController | undefined;
  private aborted = false;

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      // read for the first time after the tool was torn down: it must say so
      if (this.aborted) this.controller.abort();
    }
    return this.controller.signal;
  }

  abort(): void {
    this.aborted = true;
    this.controller?.abort();
  }
}
