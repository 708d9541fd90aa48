import { Observable } from 'rxjs';
import type { HookAnswer } from '../types.js';
import { subscribeAnswer } from './answer.js';

/** An Observable that completed before its first value: an answer that never came (H4). */
export class NoAnswer extends Error {
  override name = 'NoAnswer';
  constructor() {
    super('completed without a value');
  }
}

/**
 * H1: asks once, on subscribe, and emits the first answer, then completes; `onCancel` runs when it is torn
 * down before the answer came (H5: the hook's signal aborts) — never after. A throw, a rejection or an
 * Observable's error is this Observable's error; an Observable that completes without a value errors with
 * {@link NoAnswer}. A plain value is answered synchronously: no Promise hop.
 *
 * ```text
 * ask returns:   ----a-b|        an Observable: its first value counts
 * firstAnswer:   ----(a|)        and the answer's Observable is unsubscribed at once
 * ask returns:   -------
 * firstAnswer:   ---!            unsubscribed before an answer: onCancel
 * ```
 *
 * ```ts
 * firstAnswer(() => hook(call, context), () => context.abort());
 * ```
 */
export function firstAnswer<T>(ask: () => HookAnswer<T>, onCancel?: () => void): Observable<T> {
  return new Observable<T>((subscriber) => {
    let answered = false;
    let asked: HookAnswer<T>;
    try {
      asked = ask();
    } catch (error) {
      return subscriber.error(error);
    }
    const inner = subscribeAnswer(asked, {
      next: (value) => {
        if (answered) return;
        answered = true;
        subscriber.next(value);
        subscriber.complete();
      },
      error: (error: unknown) => {
        if (answered) return;
        answered = true;
        subscriber.error(error);
      },
      complete: () => {
        if (answered) return;
        answered = true;
        subscriber.error(new NoAnswer());
      },
    });
    return () => {
      if (!answered) onCancel?.();
      inner?.unsubscribe();
    };
  });
}
