import { Observable, defer, of } from 'rxjs';
import { type SessionEntry, type SessionStore, memoryStore } from '../../../src/sessions/index.js';
import { storeConformance } from '../../../src/sessions/testing/index.js';

/** The checks of the suite that reject on `store`, by name. */
async function failing(makeStore: () => SessionStore): Promise<string[]> {
  const names: string[] = [];
  for (const check of storeConformance(makeStore)) {
    try {
      await check.run();
    } catch {
      names.push(check.name);
    }
  }
  return names;
}

/** A store that keeps the objects it was given, as they are (no copy). */
function keepsObjects(): SessionStore {
  const kept: SessionEntry[] = [];
  return { load: () => defer(() => of(...kept)), append: (entries) => new Observable<void>((s) => (kept.push(...entries), s.next(), s.complete())) };
}

describe('storeConformance (S4)', () => {
  it('S4: returns named checks, each citing S4, that a good store passes; reopen adds one', async () => {
    const checks = storeConformance(() => memoryStore());
    expect(checks.length).toBeGreaterThanOrEqual(7);
    for (const check of checks) expect(check.name).toMatch(/^S4: /);
    expect(await failing(() => memoryStore())).toEqual([]);
    expect(storeConformance(() => memoryStore(), { reopen: (store) => store })).toHaveLength(checks.length + 1);
  });

  it('S4: fails a store that keeps the objects it was given instead of copies', async () => {
    expect(await failing(keepsObjects)).toEqual([
      'S4: the store keeps what was appended, not the objects: changing them afterwards, or a loaded entry, changes nothing',
    ]);
  });

  it('S4: fails a store that loses the order of batches, writes before subscribe, or emits twice per append', async () => {
    const reversed = (): SessionStore => {
      const inner = memoryStore();
      const batches: SessionEntry[][] = [];
      return { load: () => defer(() => of(...batches.slice().reverse().flat())), append: (entries) => (batches.push(JSON.parse(JSON.stringify(entries))), inner.append([])) };
    };
    expect(await failing(reversed)).toContain('S4: batches keep their order; an empty batch adds nothing and still completes');

    const eager = (): SessionStore => {
      const inner = memoryStore();
      return { load: () => inner.load(), append: (entries) => (inner.append(entries).subscribe(), of(undefined)) };
    };
    expect(await failing(eager)).toContain('S4: append and load are cold: nothing is written or read before subscribe');

    const twice = (): SessionStore => {
      const inner = memoryStore();
      return { load: () => inner.load(), append: (entries) => new Observable<void>((s) => inner.append(entries).subscribe(() => (s.next(), s.next(), s.complete()))) };
    };
    const names = await failing(twice);
    expect(names.length).toBeGreaterThan(3);
    expect(names).toContain('S4: load gives back every appended entry, in order, equal as JSON (all three types, any text)');
  });

  it('S4: says what differs, and refuses a makeStore that is no function or makes no store', async () => {
    const [, second] = storeConformance(keepsLast);
    await expect(second!.run()).rejects.toThrow(/storeConformance: what was appended differs from what was expected at character \d+/);
    expect(() => storeConformance('x' as never)).toThrow('storeConformance: makeStore must be a function that makes a new, empty store');
    await expect(storeConformance(() => ({}) as SessionStore)[0]!.run()).rejects.toThrow('storeConformance: makeStore gave no SessionStore (load and append)');
  });

  it('S4: awaited, the checks run one after the other and reject with the first that fails, named', async () => {
    await expect(storeConformance(() => memoryStore())).resolves.toBeUndefined();
    await expect(storeConformance(keepsObjects)).rejects.toThrow(
      /^S4: the store keeps what was appended, not the objects: changing them afterwards, or a loaded entry, changes nothing: storeConformance: after changing the appended objects differs/,
    );
    expect(Object.keys(storeConformance(() => memoryStore()))).toEqual(['0', '1', '2', '3', '4', '5', '6']); // still an array of checks
  });
});

/** A store that keeps only the last entry of each batch. */
function keepsLast(): SessionStore {
  const inner = memoryStore();
  return { load: () => inner.load(), append: (entries) => inner.append(entries.slice(-1)) };
}
