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
