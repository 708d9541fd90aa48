import { Observable, type Unsubscribable, isObservable } from 'rxjs';
import type { HookAnswer } from '../types.js';
import { isPromiseLike } from './values.js';

/** Where {@link subscribeAnswer} delivers: an observer's three callbacks (an rxjs `Subscriber` is one). */
export interface AnswerObserver<T> {
  next(value: T): void;
  error(error: unknown): void;
  complete(): void;
}

/**
 * The library's one adapter from what a user's function may return — a plain value, a PromiseLike or an
 * Observable (`HookAnswer`: a hook's answer, `prepareTurn`'s, a tool handler's return, a journaled step) — to
 * an observer. A plain value is delivered at once, with no Promise hop (most tools are synchronous); a
 * PromiseLike's value or rejection when it settles (a thenable whose `then` throws is an error at once); an
 * Observable is subscribed. Returns what tears it down: torn down before a PromiseLike settled, its outcome is
 * dropped.
 *
 * ```text
 * a value v:            (v|)       at once, inside the call
 * a Promise of v:       ---(v|)    when it resolves; ---# when it rejects
 * an Observable:        -a-b|      as it is
 * ```
 *
 * ```ts
 * subscribeAnswer(tool.handler(input, context), { next: keep, error: fail, complete: end });
 * ```
 */
export function subscribeAnswer<T>(answer: HookAnswer<T>, observer: AnswerObserver<T>): Unsubscribable | undefined {
  if (isObservable(answer)) return (answer as Observable<T>).subscribe(observer);
  if (!isPromiseLike(answer)) {
    observer.next(answer as T);
    observer.complete();
    return undefined;
  }
  const pending = new Pending(observer);
  try {
    (answer as PromiseLike<T>).then(
      (value) => pending.settle(value),
      (error: unknown) => pending.fail(error),
    );
  } catch (error) {
    pending.fail(error); // a thenable whose `then` throws
  }
  return pending;
}

/**
 * `answer` as an Observable — an Observable as it is, a value or a PromiseLike through {@link subscribeAnswer}
 * (cold: a value is delivered to each subscriber, a PromiseLike's outcome to each subscriber while it waits).
 *
 * ```text
 * fromAnswer(v):        (v|)
 * fromAnswer(promise):  ---(v|)
 * ```
 *
 * ```ts
 * fromAnswer(handler(input, context)).pipe(timeout(1000));
 * ```
 */
export function fromAnswer<T>(answer: HookAnswer<T>): Observable<T> {
  return isObservable(answer) ? (answer as Observable<T>) : new Observable<T>((subscriber) => subscribeAnswer(answer, subscriber));
}

/** A PromiseLike still to settle: its outcome goes to the observer unless it was torn down first. */
class Pending<T> implements Unsubscribable {
  private open = true;

  constructor(private readonly observer: AnswerObserver<T>) {}

  settle(value: T): void {
    if (!this.open) return;
    this.open = false;
    this.observer.next(value);
    this.observer.complete();
  }

  fail(error: unknown): void {
    if (!this.open) return;
    this.open = false;
    this.observer.error(error);
  }

  unsubscribe(): void {
    this.open = false;
  }
}
