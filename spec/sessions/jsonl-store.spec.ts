import { execFileSync } from 'node:child_process';
import fs = require('node:fs'); // the module object itself, whose functions the store calls (spied on below)
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastValueFrom, of, toArray } from 'rxjs';
import { conversation } from '../../src/index.js';
import { type SessionEntry, type SessionStore, SessionTree, jsonlStore, persist } from '../../src/sessions/index.js';
import { storeConformance } from '../../src/sessions/testing/index.js';
import { historyModel, historyTools } from './support/model.js';

let folder = '';
let count = 0;
const fresh = () => join(folder, `session-${++count}.jsonl`);
beforeAll(() => (folder = mkdtempSync(join(tmpdir(), 'rx-tool-loop-jsonl-'))));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const entry = (id: string, content = `message ${id}`): SessionEntry => ({ id, parentId: null, type: 'message', message: { role: 'user', content }, at: 'now' });
const loadAll = (path: string) => lastValueFrom(jsonlStore(path).load().pipe(toArray()));

describe('jsonlStore (S3)', () => {
  const paths = new WeakMap<object, string>();
  for (const check of storeConformance(
    () => {
      const path = fresh();
      const store = jsonlStore(path);
      paths.set(store, path);
      return store;
    },
    { reopen: (store) => jsonlStore(paths.get(store)!) },
  )) {
    it(check.name, check.run);
  }

  it('S3: a file that does not exist yet is an empty session; the first append creates it, one JSON entry a line', async () => {
    const path = fresh();
    expect(await loadAll(path)).toEqual([]);
    expect(existsSync(path)).toBe(false);
    await lastValueFrom(jsonlStore(path).append([entry('1'), entry('2', 'two\nlines')]));
    expect(readFileSync(path, 'utf8')).toBe(`${JSON.stringify(entry('1'))}\n${JSON.stringify(entry('2', 'two\nlines'))}\n`);
  });

  it('S3 (3): one write per batch on a file kept open; a batch is fsynced when it ends a turn, and a prompt or a moveTo is written at once but rides the next turn\'s fsync', async () => {
    const path = fresh();
    const writes = jest.spyOn(fs, 'writeSync');
    const syncs = jest.spyOn(fs, 'fsyncSync');
    const opens = jest.spyOn(fs, 'openSync');
    try {
      const store = jsonlStore(path);
      const tree = await lastValueFrom(SessionTree.load(store));
      const written = () => readFileSync(path, 'utf8').split('\n').filter((line) => line !== '').length;
      const syncedAt: number[] = [];
      syncs.mockImplementation((fd) => {
        syncedAt.push(written());
        fs.fdatasyncSync(fd); // still a sync: only counted
      });
      // batches: [user] [assistant, toolResult, toolResult] [assistant] [user] [assistant]
      await lastValueFrom(
        of('What time is it?', 'thanks').pipe(conversation({ provider: historyModel(), registry: historyTools(), messages: tree.context() }), persist(tree, store), toArray()),
      );
      tree.moveTo(tree.path()[1]!.id); // [leaf]
      const dataFile = opens.mock.calls.filter(([file]) => file === path);
      expect(dataFile).toHaveLength(1); // opened once, for the first append
      const fd = opens.mock.results[opens.mock.calls.findIndex(([file]) => file === path)]!.value as number;
      expect(writes.mock.calls.filter(([to]) => to === fd)).toHaveLength(6);
      expect(syncedAt).toEqual([4, 5, 7]); // after each turn's batch, with the prompt before it
      expect(written()).toBe(8);
      expect(syncs.mock.calls.every(([to]) => to === fd)).toBe(true);
    } finally {
      writes.mockRestore();
      syncs.mockRestore();
      opens.mockRestore();
    }
  });

  it('S3: a torn last line (a crash mid-write) is skipped on load with no other loss, at every byte it can be cut', async () => {
    const path = fresh();
    const entries = [entry('1'), entry('2', '三 😀 "quoted"'), entry('3', 'x'.repeat(300))];
    await lastValueFrom(jsonlStore(path).append(entries));
    const whole = readFileSync(path);
    // an entry is whole once its JSON is (its newline may be cut off)
    const ends = [...whole.entries()].filter(([, byte]) => byte === 10).map(([at]) => at);
    for (let length = 0; length <= whole.length; length++) {
      const cut = fresh();
      writeFileSync(cut, whole.subarray(0, length));
      const complete = ends.filter((end) => end <= length).length;
      expect(await loadAll(cut)).toEqual(entries.slice(0, complete));
    }
  });

  it('S3: the next append cuts a torn last line off first, so the new line does not join it; a whole last entry without its newline gets one', async () => {
    const path = fresh();
    await lastValueFrom(jsonlStore(path).append([entry('1')]));
    appendFileSync(path, '{"id":"2","parentId":null,"ty');
    await lastValueFrom(jsonlStore(path).append([entry('3')]));
    expect(await loadAll(path)).toEqual([entry('1'), entry('3')]);

    const byHand = fresh();
    writeFileSync(byHand, [entry('1'), entry('2')].map((e) => JSON.stringify(e)).join('\n')); // no newline at the end
    expect(await loadAll(byHand)).toEqual([entry('1'), entry('2')]);
    await lastValueFrom(jsonlStore(byHand).append([entry('3')]));
    expect(await loadAll(byHand)).toEqual([entry('1'), entry('2'), entry('3')]);
  });

  it('S3 (decided): a whole last line without its newline is kept — load gives its entry, and the next append gives it its newline first', async () => {
    const path = fresh();
    writeFileSync(path, `${JSON.stringify(entry('1'))}\n${JSON.stringify(entry('2'))}`);
    expect(await loadAll(path)).toEqual([entry('1'), entry('2')]);
    await lastValueFrom(jsonlStore(path).append([entry('3')]));
    expect(readFileSync(path, 'utf8')).toBe([entry('1'), entry('2'), entry('3')].map((e) => `${JSON.stringify(e)}\n`).join(''));
  });

  it('S3 (4): a UTF-8 byte-order mark at the start of a file is skipped: on load, and when the next append reads the last line', async () => {
    const path = fresh();
    writeFileSync(path, `\uFEFF${JSON.stringify(entry('1'))}\n${JSON.stringify(entry('2'))}\n`);
    expect(await loadAll(path)).toEqual([entry('1'), entry('2')]);
    const alone = fresh();
    writeFileSync(alone, `\uFEFF${JSON.stringify(entry('1'))}`); // its only line, whole, without its newline
    expect(await loadAll(alone)).toEqual([entry('1')]);
    await lastValueFrom(jsonlStore(alone).append([entry('2')]));
    expect(await loadAll(alone)).toEqual([entry('1'), entry('2')]);
    await expect(lastValueFrom(jsonlStore(alone).append([entry('1', 'again')]))).rejects.toThrow(`jsonlStore: ${alone} holds an entry with the id "1" already`); // its id was read too
    const torn = fresh();
    writeFileSync(torn, '\uFEFF{"id":"1","par');
    expect(await loadAll(torn)).toEqual([]);
  });

  it('S3 (2): two SessionTrees of one process on one file are refused as two processes are, on one store or on two; a tree loaded after the other appended may go on', async () => {
    const path = fresh();
    const store = jsonlStore(path);
    const ask = (tree: SessionTree, to: SessionStore, prompt: string) =>
      lastValueFrom(of(prompt).pipe(conversation({ provider: historyModel(), registry: historyTools(), messages: tree.context() }), persist(tree, to), toArray()));
    const first = await lastValueFrom(SessionTree.load(store));
    const second = await lastValueFrom(SessionTree.load(store));
    const other = jsonlStore(path);
    const third = await lastValueFrom(SessionTree.load(other));
    await ask(first, store, 'hello');
    const refusal = `jsonlStore: ${path} holds an entry with the id "1" already: another SessionTree of this process appends to this session, and two must not append to one session`;
    await expect(ask(second, store, 'hi')).rejects.toThrow(refusal);
    await expect(ask(third, other, 'hey')).rejects.toThrow(refusal);
    await expect(ask(third, other, 'hey')).rejects.toMatchObject({ name: 'LockError' });
    // loaded now, a tree is current: it appends, and then the first one is the stale one
    const fourth = await lastValueFrom(SessionTree.load(other));
    await ask(fourth, other, 'again');
    await expect(ask(first, store, 'and you?')).rejects.toThrow(`jsonlStore: ${path} holds an entry with the id "3" already`);
    const reloaded = await lastValueFrom(SessionTree.load(jsonlStore(path)));
    expect(reloaded.warnings).toEqual([]);
    expect(reloaded.context().map((m) => m.content)).toEqual(['hello', 'You said: hello', 'again', 'You said: again']);
  });

  it('S1 (1): a file two writers appended to (before the lock was atomic) is not lost: it loads, says so, and the conversation goes on in it', async () => {
    const path = fresh();
    const line = (id: string, parentId: string | null, role: 'user' | 'assistant', content: string) =>
      JSON.stringify({ id, parentId, type: 'message', message: role === 'user' ? { role, content } : { role, content, stopReason: 'stop' }, at: 'then' });
    // both loaded entries 1-2, and each appended its prompt and answer as 3 and 4
    writeFileSync(path, [line('1', null, 'user', 'hello'), line('2', '1', 'assistant', 'You said: hello'), line('3', '2', 'user', 'A'), line('3', '2', 'user', 'B'), line('4', '3', 'assistant', 'You said: A'), line('4', '3', 'assistant', 'You said: B')].join('\n') + '\n');
    const store = jsonlStore(path);
    const tree = await lastValueFrom(SessionTree.load(store));
    expect(tree.warnings).toHaveLength(2);
    expect(tree.context().map((m) => m.content)).toEqual(['hello', 'You said: hello', 'A', 'You said: B']);
    await lastValueFrom(of('more').pipe(conversation({ provider: historyModel(), registry: historyTools(), messages: tree.context() }), persist(tree, store), toArray()));
    const reloaded = await lastValueFrom(SessionTree.load(jsonlStore(path)));
    expect(reloaded.context()).toEqual(tree.context());
    expect(reloaded.context().map((m) => m.content)).toEqual(['hello', 'You said: hello', 'A', 'You said: B', 'more', 'You said: more']);
  });

  it('S3: a line that is not an entry fails load naming the line number; blank lines are skipped', async () => {
    const path = fresh();
    writeFileSync(path, `${JSON.stringify(entry('1'))}\n\n{"id":"2"\n${JSON.stringify(entry('3'))}\n`);
    await expect(loadAll(path)).rejects.toThrow(`jsonlStore: ${path} line 3 is not a session entry: `);
    writeFileSync(path, `${JSON.stringify(entry('1'))}\n\n[1,2]\n`);
    await expect(loadAll(path)).rejects.toThrow(`jsonlStore: ${path} line 3 is not a session entry: expected an object, got [1,2], an array`);
    writeFileSync(path, `${JSON.stringify(entry('1'))}\n   \n`);
    expect(await loadAll(path)).toEqual([entry('1')]);
  });

  it('S3: two processes appending to one file is refused by its lock file, with a clear error; a dead writer\'s lock is taken over', async () => {
    const path = fresh();
    await lastValueFrom(jsonlStore(path).append([entry('1')])); // this process holds the lock now
    expect(readFileSync(`${path}.lock`, 'utf8')).toBe(`${process.pid}\n`);
    const other = `
      const { lastValueFrom } = require('rxjs');
      const { jsonlStore } = require(${JSON.stringify(join(__dirname, '../../src/sessions/jsonl-store.ts'))});
      lastValueFrom(jsonlStore(process.argv[1]).append([${JSON.stringify(entry('2'))}])).then(() => console.log('appended'), (e) => console.log(e.message));`;
    const run = (file: string) =>
      execFileSync(process.execPath, ['-r', require.resolve('ts-node/register/transpile-only'), '-e', other, file], { encoding: 'utf8', cwd: join(__dirname, '../..') }).trim();
    expect(run(path)).toBe(
      `jsonlStore: ${path} is being appended to by process ${process.pid} (lock file ${path}.lock): two processes must not append to one session`,
    );
    expect(await loadAll(path)).toEqual([entry('1')]);

    // a writer that was killed leaves its lock behind: a pid no process has any more
    const stale = fresh();
    writeFileSync(`${stale}.lock`, '999999999\n');
    expect(run(stale)).toBe('appended');
    expect(await loadAll(stale)).toEqual([entry('2')]);
    expect(existsSync(`${stale}.lock`)).toBe(false); // released when that process exited
  });

  it('S3: a path that is no string is refused at call time; an append to a folder that does not exist errors naming the file', async () => {
    expect(() => jsonlStore('' as string)).toThrow('jsonlStore: path must be a non-empty string (got "", a string)');
    const path = join(folder, 'missing', 'x.jsonl');
    await expect(lastValueFrom(jsonlStore(path).append([entry('1')]))).rejects.toThrow(`jsonlStore: cannot append to ${path}: ENOENT`);
    const file = fresh();
    writeFileSync(file, '');
    await expect(lastValueFrom(jsonlStore(join(file, 'x.jsonl')).load())).rejects.toThrow(`jsonlStore: cannot read ${join(file, 'x.jsonl')}: ENOTDIR`); // only a missing file is a new session
  });
});
