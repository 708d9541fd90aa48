import { Observable, lastValueFrom, of, toArray } from 'rxjs';
import type { AgentMessage } from '../../src/index.js';
import { conversation } from '../../src/index.js';
import { type SessionEntry, SessionTree, memoryStore, persist } from '../../src/sessions/index.js';
import { historyModel, historyTools } from './support/model.js';

const AT = '2026-01-01T00:00:00.000Z';
const user = (content: string): AgentMessage => ({ role: 'user', content });
const answer = (content: string): AgentMessage => ({ role: 'assistant', content, stopReason: 'stop' });
const message = (id: string, parentId: string | null, m: AgentMessage): SessionEntry => ({ id, parentId, type: 'message', message: m, at: AT });

function load(entries: SessionEntry[]): SessionTree {
  let tree: SessionTree | undefined;
  SessionTree.load(memoryStore(entries)).subscribe((t) => (tree = t));
  return tree!;
}

describe('SessionTree (S1)', () => {
  const branched: SessionEntry[] = [
    message('1', null, user('one')),
    message('2', '1', answer('first')),
    message('3', '2', user('two')),
    message('4', '3', answer('second')),
    { id: '5', parentId: '4', type: 'leaf', targetId: '2', at: AT },
    message('6', '2', user('three')),
    message('7', '6', answer('third')),
  ];

  it('S1: context(leaf) is the history on the path from the root to that leaf; other branches stay in the tree', () => {
    const tree = load(branched);
    expect(tree.leaf).toBe('7');
    expect(tree.context().map((m) => m.content)).toEqual(['one', 'first', 'three', 'third']);
    expect(tree.context('4').map((m) => m.content)).toEqual(['one', 'first', 'two', 'second']);
    expect(tree.path('4').map((e) => e.id)).toEqual(['1', '2', '3', '4']);
    expect(tree.path().map((e) => e.id)).toEqual(['1', '2', '6', '7']);
  });

  it('S1: a reloaded tree stands where the last leaf entry left it', () => {
    const tree = load(branched.slice(0, 5));
    expect(tree.leaf).toBe('2');
    expect(tree.context().map((m) => m.content)).toEqual(['one', 'first']);
  });

  it('S1: the latest compaction on the path applies: its summary as a user message, then the messages from firstKeptId', () => {
    const tree = load([
      message('1', null, user('one')),
      message('2', '1', answer('first')),
      message('3', '2', user('two')),
      { id: '4', parentId: '3', type: 'compaction', summary: 'S1', firstKeptId: '2', at: AT },
      message('5', '4', answer('second')),
      { id: '6', parentId: '5', type: 'compaction', summary: 'S2', firstKeptId: '3', at: AT },
      message('7', '6', user('three')),
    ]);
    expect(tree.context()).toEqual([user('S2'), user('two'), answer('second'), user('three')]);
    expect(tree.context('5')).toEqual([user('S1'), answer('first'), user('two'), answer('second')]);
    expect(tree.context('3').map((m) => m.content)).toEqual(['one', 'first', 'two']);
    expect(tree.context()[0]).toBe(tree.context()[0]); // one summary object: persist and compactWhen know it again
  });

  it('S1, R34: contextEntries(leaf) is the entry behind each message of context(leaf): its own, or, for the summary, its compaction', () => {
    const tree = load([
      { id: '0', parentId: null, type: 'message', message: { role: 'system', content: 'be brief' }, at: AT },
      message('1', '0', user('one')),
      message('2', '1', answer('first')),
      message('3', '2', user('two')),
      { id: '4', parentId: '3', type: 'compaction', summary: 'S1', firstKeptId: '2', at: AT },
      message('5', '4', answer('second')),
    ]);
    expect(tree.contextEntries().map((entry) => entry.id)).toEqual(['0', '4', '2', '3', '5']);
    expect(tree.contextEntries().map((entry) => (entry.type === 'message' ? entry.message : undefined))).toEqual(tree.context().map((m) => (m.content === 'S1' ? undefined : m)));
    expect(tree.contextEntries('3').map((entry) => entry.id)).toEqual(['0', '1', '2', '3']);
    expect(load([]).contextEntries()).toEqual([]);
  });

  it('S2, S5, R34: addMessages and addCompaction add entries at the leaf and write nothing; write appends them, one batch, after a moveTo asked before', async () => {
    const inner = memoryStore(branched.slice(0, 4));
    const batches: SessionEntry[][] = [];
    const pending: (() => void)[] = [];
    // a store that answers when told: the moveTo's write is still on its way when the batch is asked for
    const later = { load: () => inner.load(), append: (entries: readonly SessionEntry[]) => new Observable<void>((s) => void pending.push(() => (batches.push([...entries]), inner.append(entries).subscribe(s)))) };
    const tree = await lastValueFrom(SessionTree.load(later));
    tree.moveTo('2');
    const compaction = tree.addCompaction('SUMMARY', '2');
    const added = tree.addMessages([user('three'), answer('third')]);
    expect(compaction).toEqual({ id: '6', parentId: '2', type: 'compaction', summary: 'SUMMARY', firstKeptId: '2', at: expect.any(String) });
    expect(added).toEqual([message('7', '6', user('three')), message('8', '7', answer('third'))].map((entry) => ({ ...entry, at: expect.any(String) })));
    expect(tree.leaf).toBe('8');
    expect(tree.context()).toEqual([user('SUMMARY'), answer('first'), user('three'), answer('third')]);
    const done: string[] = [];
    tree.write([compaction, ...added], later, { complete: () => done.push('written'), error: (error) => done.push(String(error)) });
    expect(pending).toHaveLength(1); // the move's write first, alone
    pending.shift()!();
    expect(pending).toHaveLength(1);
    pending.shift()!();
    expect(batches.map((batch) => batch.map((entry) => entry.id))).toEqual([['5'], ['6', '7', '8']]);
    expect(done).toEqual(['written']);
    expect((await lastValueFrom(SessionTree.load(inner))).context()).toEqual(tree.context());
  });

  it('S1, S2, S5: addMessages, addCompaction and write refuse what they cannot take, at call time, naming it', () => {
    const tree = load(branched);
    expect(() => tree.addMessages('hi' as never)).toThrow(new TypeError('SessionTree.addMessages: messages must be an array of messages (got "hi", a string)'));
    expect(() => tree.addCompaction(1 as never, '1')).toThrow(new TypeError('SessionTree.addCompaction: summary must be a string (got 1, a number)'));
    expect(() => tree.addCompaction('S', '3')).toThrow('SessionTree.addCompaction: "3" is no message on the path to the leaf "7"'); // another branch
    expect(() => tree.addCompaction('S', '5')).toThrow('SessionTree.addCompaction: "5" is no message on the path to the leaf "7"'); // a leaf entry
    expect(() => tree.write({} as never)).toThrow(new TypeError('SessionTree.write: entries must be an array of entries (got {}, an object)'));
    expect(() => tree.write([], {} as never)).toThrow(new TypeError('SessionTree.write: store must be a SessionStore, with load() and append(entries) (got {}, an object)'));
    expect(tree.leaf).toBe('7'); // nothing was added
  });

  it('S1: moveTo moves the leaf and appends a leaf entry to the store the tree came from; nothing is deleted', async () => {
    const store = memoryStore(branched.slice(0, 4));
    const tree = await lastValueFrom(SessionTree.load(store));
    tree.moveTo('2');
    expect(tree.leaf).toBe('2');
    const stored = await lastValueFrom(store.load().pipe(toArray()));
    expect(stored.slice(0, 4)).toEqual(branched.slice(0, 4));
    expect(stored[4]).toEqual({ id: '5', parentId: '4', type: 'leaf', targetId: '2', at: expect.any(String) });
    expect((await lastValueFrom(SessionTree.load(store))).leaf).toBe('2');
  });

  it('S1: the next prompt after moveTo continues from there, a branch beside what followed (persist)', async () => {
    const store = memoryStore();
    const tree = await lastValueFrom(SessionTree.load(store));
    const run = (prompt: string) =>
      lastValueFrom(of(prompt).pipe(conversation({ provider: historyModel(), registry: historyTools(), messages: tree.context() }), persist(tree, store), toArray()));
    await run('hello');
    const firstAnswer = tree.leaf!;
    await run('again');
    tree.moveTo(firstAnswer);
    await run('branch');
    expect(tree.context().map((m) => m.content)).toEqual(['hello', 'You said: hello', 'branch', 'You said: branch']);
    const reloaded = await lastValueFrom(SessionTree.load(store));
    expect(reloaded.context()).toEqual(tree.context());
    expect(reloaded.path().map((e) => e.id)).toEqual(['1', '2', '6', '7']);
  });

  it('S1: moveTo, path and context refuse an id the tree does not hold, and a leaf entry', () => {
    const tree = load(branched);
    expect(() => tree.moveTo('nope')).toThrow('SessionTree.moveTo: no entry "nope" in this session');
    expect(() => tree.path('5')).toThrow('SessionTree.path: "5" is a leaf entry (a move), not a point of the tree');
    expect(() => tree.context('x')).toThrow('SessionTree.path: no entry "x" in this session');
    expect(load([]).leaf).toBeNull();
    expect(load([]).context()).toEqual([]);
  });

  it('S1 (1): ids repeated by two writers never fail a load: both entries are kept, the later renamed, the tree says so; a reload names them again the same way', async () => {
    // two writers that loaded 1-2 each appended 3 and 4, then 5 after a move: the file interleaves their batches
    const file: SessionEntry[] = [
      message('1', null, user('one')),
      message('2', '1', answer('first')),
      message('3', '2', user('A asks')),
      message('3', '2', user('B asks')),
      message('4', '3', answer('A answered')),
      message('4', '3', answer('B answered')),
      { id: '5', parentId: '4', type: 'leaf', targetId: '2', at: AT },
      { id: '5', parentId: '4', type: 'compaction', summary: 'B summarised', firstKeptId: '3', at: AT },
    ];
    const store = memoryStore(file);
    const tree = await lastValueFrom(SessionTree.load(store));
    expect(tree.path('4~2').map((e) => e.id)).toEqual(['1', '2', '3', '4~2']); // a later entry naming "3" follows the first "3"
    expect(tree.context('4~2').map((m) => m.content)).toEqual(['one', 'first', 'A asks', 'B answered']);
    expect(tree.context('3~2').map((m) => m.content)).toEqual(['one', 'first', 'B asks']);
    expect(tree.context('5~2').map((m) => m.content)).toEqual(['B summarised', 'A asks', 'A answered']); // it follows the first "4"
    expect(tree.leaf).toBe('5~2');
    expect(tree.warnings).toEqual([
      'entry 4 repeats the id "3" of an earlier entry (two writers appended to this session): both are kept, this one as "3~2"',
      'entry 6 repeats the id "4" of an earlier entry (two writers appended to this session): both are kept, this one as "4~2"',
      'entry 8 repeats the id "5" of an earlier entry (two writers appended to this session): both are kept, this one as "5~2"',
    ]);
    expect(await lastValueFrom(store.load().pipe(toArray()))).toEqual(file); // the store's entries are not changed

    // what the tree appends after the load names its entries as the tree does; a reload reads them the same
    tree.moveTo('3~2');
    await lastValueFrom(of('again').pipe(conversation({ provider: historyModel(), registry: historyTools(), messages: tree.context() }), persist(tree, store), toArray()));
    const reloaded = await lastValueFrom(SessionTree.load(store));
    expect(reloaded.context()).toEqual(tree.context());
    expect(reloaded.context().map((m) => m.content)).toEqual(['one', 'first', 'B asks', 'again', 'You said: again']);
    expect(reloaded.warnings).toEqual(tree.warnings);
    expect(load(branched).warnings).toEqual([]);
  });

  it.each([
    [[message('1', 'x', user('a'))], 'SessionTree.load: entry 1 (id "1") follows "x", which no earlier entry is'],
    [[message('1', null, user('a')), { id: '2', parentId: '1', type: 'leaf', targetId: '9', at: AT }], 'entry 2 (id "2") moves to "9", which no earlier message or compaction is'],
    [
      [message('1', null, user('a')), message('2', null, user('b')), { id: '3', parentId: '2', type: 'compaction', summary: 's', firstKeptId: '1', at: AT }],
      'entry 3 (id "3") keeps from "1", which is no message on its path',
    ],
    [[{ id: '1', parentId: null, type: 'note', at: AT }], "entry 1 (id \"1\") is not a session entry: type must be 'message', 'compaction' or 'leaf' (got \"note\", a string)"],
  ] as [SessionEntry[], string][])('S1: load refuses a tree that is not one, naming the entry: %#', async (entries, problem) => {
    await expect(lastValueFrom(SessionTree.load(memoryStoreOf(entries)))).rejects.toThrow(problem);
  });
});

/** A store that holds `entries` as they are, unchecked (memoryStore checks what it is given). */
function memoryStoreOf(entries: SessionEntry[]) {
  return { load: () => of(...entries), append: () => of(undefined) };
}
