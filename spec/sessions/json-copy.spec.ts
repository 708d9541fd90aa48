import fc from 'fast-check';
import { jsonCopy } from '../../src/sessions/json-copy.js';

/** What JSON makes of a value: the copy a file or a database keeps. */
const viaJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value) as string);

type Outcome = { value: unknown } | { thrown: string };
const outcome = (copy: (value: unknown) => unknown, value: unknown): Outcome => {
  try {
    return { value: copy(value) };
  } catch (error) {
    return { thrown: `${(error as Error).name}: ${(error as Error).message}` };
  }
};

/** Where `a` and `b` differ — kind, prototype, key order, -0 — or `undefined` when they are the same data. */
function difference(a: unknown, b: unknown, at = '$'): string | undefined {
  if (typeof a !== typeof b) return `${at}: ${typeof a} vs ${typeof b}`;
  if (typeof a !== 'object' || a === null || b === null) return Object.is(a, b) ? undefined : `${at}: ${String(a)} vs ${String(b)}`;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return `${at}: another prototype`;
  const keys = [Object.keys(a), Object.keys(b as object)];
  if (JSON.stringify(keys[0]) !== JSON.stringify(keys[1])) return `${at}: keys ${JSON.stringify(keys[0])} vs ${JSON.stringify(keys[1])}`;
  for (const key of keys[0]!) {
    const inner = difference((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${at}.${key}`);
    if (inner !== undefined) return inner;
  }
  return undefined;
}

/** The objects inside `value` (itself included). */
function objectsOf(value: unknown, into = new Set<object>()): Set<object> {
  if (typeof value !== 'object' || value === null || into.has(value)) return into;
  into.add(value);
  for (const inner of Object.values(value)) objectsOf(inner, into);
  return into;
}

const anything = fc.anything({
  key: fc.oneof(fc.string(), fc.constantFrom('__proto__', 'toJSON', 'constructor', '0', '10', '-1')),
  withBigInt: true,
  withBoxedValues: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withNullPrototype: true,
  withObjectString: true,
  withSparseArray: true,
  withTypedArray: true,
  withUnicodeString: true,
});

describe('jsonCopy (S4: a memory store keeps JSON copies)', () => {
  it('S4: the copy is what JSON.parse(JSON.stringify(value)) gives — the same data, prototypes and key order, or the same error — for any value (property)', () => {
    fc.assert(
      fc.property(anything, (value) => {
        const mine = outcome(jsonCopy, value);
        const json = outcome(viaJson, value);
        if ('thrown' in json || 'thrown' in mine) return expect(mine).toEqual(json);
        expect(difference(mine.value, json.value)).toBeUndefined();
      }),
      { numRuns: 2_000 },
    );
  });

  it('S4: the copy shares no object with the value, so changing either changes nothing in the other (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const copy = jsonCopy(value);
        const mine = objectsOf(copy);
        for (const object of objectsOf(value)) expect(mine.has(object)).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it("S4: what plain JSON data never shows is JSON's: -0, NaN, undefined in an array, toJSON, a __proto__ key, a cycle, a BigInt, deep nesting", () => {
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    let deep: unknown = 'bottom';
    for (let level = 0; level < 500; level++) deep = { level, deep: [deep] };
    const cases: unknown[] = [
      { zero: -0, nan: Number.NaN, infinite: -Infinity },
      [undefined, () => 1, Symbol('s'), 'kept'],
      { gone: undefined, fn: () => 1, kept: true },
      { when: new Date(0), custom: { toJSON: () => 'as text' } },
      JSON.parse('{"__proto__": {"x": 1}, "y": 2}'),
      Object.assign(Object.create(null) as object, { a: [1, { b: null }] }),
      deep,
      cycle,
      { big: 1n },
      undefined,
    ];
    for (const value of cases) {
      const mine = outcome(jsonCopy, value);
      const json = outcome(viaJson, value);
      if ('thrown' in json) expect(mine).toEqual(json);
      else expect(difference((mine as { value: unknown }).value, json.value)).toBeUndefined();
    }
    expect(outcome(jsonCopy, cycle)).toEqual({ thrown: expect.stringContaining('TypeError: Converting circular structure to JSON') });
  });
});
