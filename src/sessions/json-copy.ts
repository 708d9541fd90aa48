/**
 * A value as `JSON.parse(JSON.stringify(value))` gives it back, made without the text when the value is plain
 * JSON data (strings, finite numbers, booleans, null, plain objects and arrays): a memory store's copy costs a
 * walk of the value instead of a string written and read again. Anything JSON would change or refuse (`-0`,
 * `NaN`, `undefined` in an array, a `toJSON`, a Date or other class instance, a BigInt, a cycle, a `__proto__`
 * key) takes JSON's own way, so the copy is always JSON's, its errors included.
 *
 * @throws what `JSON.stringify` throws (a cycle, a BigInt), or a SyntaxError for a value JSON has no text for.
 */
export function jsonCopy<T>(value: T): T {
  const copy = plainCopy(value, 0);
  return copy !== UNLIKE ? (copy as T) : (JSON.parse(JSON.stringify(value) as string) as T);
}

/** What `plainCopy` gives for a value it would not copy the way JSON does. */
const UNLIKE: unique symbol = Symbol('unlike JSON');

/** Deeper than this, JSON takes over (a cycle never ends; JSON's own error names it). */
const MAX_DEPTH = 100;

function plainCopy(value: unknown, depth: number): unknown {
  if (typeof value !== 'object') return plainValue(value);
  if (value === null) return null;
  if (depth > MAX_DEPTH || typeof (value as { toJSON?: unknown }).toJSON === 'function') return UNLIKE;
  if (Array.isArray(value)) {
    const copy: unknown[] = new Array<unknown>(value.length);
    for (let index = 0; index < value.length; index++) {
      const item = plainCopy(value[index], depth + 1);
      if (item === UNLIKE) return UNLIKE;
      copy[index] = item;
    }
    return copy;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return UNLIKE; // a class instance, a Map, a boxed string, another realm's object
  const copy: Record<string, unknown> = {};
  const keys = Object.keys(value);
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index]!;
    if (key === '__proto__') return UNLIKE; // an assignment would set the prototype; JSON.parse makes it a key
    const inner = (value as Record<string, unknown>)[key];
    if (typeof inner === 'string') {
      copy[key] = inner; // most of a message: no call for it
      continue;
    }
    // JSON leaves out a key whose value is undefined, a function or a symbol
    if (inner === undefined || typeof inner === 'function' || typeof inner === 'symbol') continue;
    const item = plainCopy(inner, depth + 1);
    if (item === UNLIKE) return UNLIKE;
    copy[key] = item;
  }
  return copy;
}

/** A value that is no object, as JSON gives it back, or `UNLIKE`. */
function plainValue(value: unknown): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      // JSON writes -0 as 0 and NaN, ±Infinity as null
      return Number.isFinite(value) && !Object.is(value, -0) ? value : UNLIKE;
    default:
      return UNLIKE; // undefined, a function, a symbol, a BigInt: JSON drops, nulls or refuses it
  }
}
