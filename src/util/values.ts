/**
 * What a value is, asked once for the whole library: plain-object checks, a value's kind for an error
 * message, and the text of anything thrown.
 */

/** A plain object from any realm (a vm context, an iframe, `structuredClone`): not null, an array or a class instance. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: object | null = Object.getPrototypeOf(value);
  return proto === null || Object.getPrototypeOf(proto) === null;
}

/** A Promise or any thenable (a handler's or a validator's answer still to come). */
export function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

/** An integer >= 1, or `Infinity`: a count or a time in ms that may be unlimited (`maxConcurrency`, `toolTimeoutMs`, `idleTimeoutMs`). */
export function isCountOrInfinity(value: unknown): value is number {
  return value === Infinity || (typeof value === 'number' && Number.isInteger(value) && value >= 1);
}

/** `null`, `an array`, `a string`, `a Map`…: what a value is, for an error message. */
export function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  if (typeof value !== 'object') return `a ${typeof value}`;
  const name: unknown = Object.getPrototypeOf(value)?.constructor?.name;
  return typeof name === 'string' && name !== 'Object' && name !== '' ? `a ${name}` : 'an object';
}

/** A value as an error message shows it, with its kind: `"3", a string`; `NaN, a number`; `null`; `{"a":1}, an object`. */
export function shown(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'function') return 'a function';
  let text: string | undefined;
  if (typeof value === 'string') text = JSON.stringify(value);
  else if (typeof value !== 'object') text = String(value);
  else text = objectText(value);
  // a value that cannot be put into words (a null-prototype object holding a BigInt, a Proxy that throws) is shown by its kind
  if (text === undefined) return kindOf(value);
  if (text.length > 60) text = `${text.slice(0, 57)}...`;
  return `${text}, ${kindOf(value)}`;
}

function objectText(value: object): string | undefined {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    try {
      return String(value);
    } catch {
      return undefined;
    }
  }
}

/** The text of anything thrown, rejected or sent as an Observable error. */
export function errorText(error: unknown): string {
  // by shape, not `instanceof`: errors from another realm (a vm context, jest's sandbox) count too
  if (isErrorLike(error)) return error.message || error.name || 'unknown error';
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

function isErrorLike(value: unknown): value is { message: string; name?: string } {
  return typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string';
}
