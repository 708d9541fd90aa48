import { isObservable } from 'rxjs';
import { isPlainObject, shown } from '../util/values.js';

/**
 * The kit checks what it is given (decided in version 2, h): a wrong argument is a `TypeError` at call
 * time that names the function, the argument and the value with its kind —
 * `describeEvent: event must be a loop or conversation event (got null)` — never a crash further in.
 */
export function argumentError(fn: string, what: string, value: unknown): TypeError {
  return new TypeError(`${fn}: ${what} (got ${shown(value)})`);
}

/** Throws unless `value` is a plain object (a record). */
export function checkRecord(fn: string, name: string, value: unknown): asserts value is Record<string, unknown> {
  if (!isPlainObject(value)) throw argumentError(fn, `${name} must be an object`, value);
}

/** Throws unless `value` is an Observable. */
export function checkObservable(fn: string, name: string, value: unknown): void {
  if (!isObservable(value)) throw argumentError(fn, `${name} must be an Observable`, value);
}

/** Throws unless `value` is a string. */
export function checkString(fn: string, name: string, value: unknown): asserts value is string {
  if (typeof value !== 'string') throw argumentError(fn, `${name} must be a string`, value);
}
