import { lastValueFrom, toArray } from 'rxjs';
import { type SessionEntry, memoryStore } from '../../src/sessions/index.js';
import { storeConformance } from '../../src/sessions/testing/index.js';

describe('memoryStore (S4)', () => {
  for (const check of storeConformance(() => memoryStore())) it(check.name, check.run);

  it('S4: starts from the entries it is given, as copies', async () => {
    const entries: SessionEntry[] = [{ id: '1', parentId: null, type: 'message', message: { role: 'user', content: 'hi' }, at: 'now' }];
    const store = memoryStore(entries);
    (entries[0] as { id: string }).id = 'changed';
    expect(await lastValueFrom(store.load().pipe(toArray()))).toEqual([{ id: '1', parentId: null, type: 'message', message: { role: 'user', content: 'hi' }, at: 'now' }]);
  });

  it('S4: refuses what is no entry, naming it: at call time for its start, as an error of append for a batch', async () => {
    expect(() => memoryStore([{ id: '1' } as unknown as SessionEntry])).toThrow("memoryStore: entries[0] is not a session entry: parentId must be a string or null (got undefined)");
    const store = memoryStore();
    await expect(lastValueFrom(store.append([{ id: '', parentId: null, type: 'leaf', targetId: 'x', at: '' }]))).rejects.toThrow(
      'memoryStore.append: entries[0] is not a session entry: id must be a non-empty string (got "", a string)',
    );
    expect(await lastValueFrom(store.load().pipe(toArray()))).toEqual([]);
  });

  it('S4: refuses an entry JSON cannot write (a cycle, a BigInt), naming it; keeps what JSON keeps of the rest (a Date as its text, no undefined)', async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const withDetails = (details: unknown): SessionEntry => ({
      id: '1',
      parentId: null,
      type: 'message',
      message: { role: 'toolResult', toolCallId: 'c', toolName: 't', content: 'x', isError: false, details },
      at: 'now',
    });
    const store = memoryStore();
    await expect(lastValueFrom(store.append([withDetails({ n: 1 }), withDetails(cyclic)]))).rejects.toThrow(
      /^memoryStore\.append: entries\[1\] does not survive JSON\.stringify: Converting circular structure to JSON/,
    );
    await expect(lastValueFrom(store.append([withDetails({ n: 1n })]))).rejects.toThrow(
      new TypeError('memoryStore.append: entries[0] does not survive JSON.stringify: Do not know how to serialize a BigInt'),
    );
    expect(await lastValueFrom(store.load().pipe(toArray()))).toEqual([]); // a refused batch adds nothing
    await lastValueFrom(store.append([withDetails({ when: new Date(0), gone: undefined, list: [undefined, -0] })]));
    const [loaded] = await lastValueFrom(store.load().pipe(toArray()));
    expect((loaded as { message: { details: unknown } }).message.details).toStrictEqual({ when: '1970-01-01T00:00:00.000Z', list: [null, 0] });
  });
});
