import { Observable, lastValueFrom, toArray } from 'rxjs';
import type { AgentMessage, ConversationEvent, Provider, ProviderEvent } from '../../types.js';
import { ToolRegistry } from '../../tools/tool-registry.js';
import { conversation } from '../../conversation/conversation.js';
import { persist } from '../persist.js';
import type { SessionEntry, SessionStore } from '../session-entry.js';
import { SessionTree } from '../session-tree.js';

/** One check of {@link storeConformance}: a name for the test runner, and a run that rejects with what is wrong. */
export interface StoreCheck {
  name: string;
  run(): Promise<void>;
}

/**
 * The checks of {@link storeConformance}: an array to run one test each, and a `PromiseLike` that runs them all
 * in order and rejects with the first failure, named (for a single test: `it('passes', () => storeConformance(make))`).
 */
export interface StoreChecks extends Array<StoreCheck>, PromiseLike<void> {}

/** What {@link storeConformance} may be told besides how to make a store. */
export interface ConformanceOptions {
  /** A second store on the same data as `store` (the same file, table or key): then a check proves they agree. */
  reopen?: (store: SessionStore) => SessionStore | PromiseLike<SessionStore>;
}

/**
 * The suite every `SessionStore` passes (S4): `jsonlStore` and `memoryStore` here, your own (Postgres, Redis,
 * IndexedDB) tomorrow. Framework-agnostic: it returns the checks, and your test runner runs each as a test of
 * its own — jest, vitest, mocha or `node:test`. `makeStore` makes a new, empty store for each check (a new
 * file, a fresh table or session id); it may be async. In a jest or vitest spec:
 *
 * ```ts
 * describe('postgresStore', () => {
 *   for (const check of storeConformance(() => postgresStore(pool, randomUUID()))) it(check.name, check.run);
 * });
 * ```
 *
 * Or as one test, which fails with the first check that does: `it('postgresStore passes', () => storeConformance(make))`.
 */
export function storeConformance(makeStore: () => SessionStore | PromiseLike<SessionStore>, options: ConformanceOptions = {}): StoreChecks {
  if (typeof makeStore !== 'function') throw new TypeError('storeConformance: makeStore must be a function that makes a new, empty store');
  const make = async (): Promise<SessionStore> => {
    const store = await makeStore();
    if (typeof store?.load !== 'function' || typeof store.append !== 'function') throw new Error('storeConformance: makeStore gave no SessionStore (load and append)');
    return store;
  };
  const checks: StoreCheck[] = [
    {
      name: 'S4: a new store loads no entries, and completes',
      run: async () => same(await loadAll(await make()), [], 'a new store'),
    },
    {
      name: 'S4: load gives back every appended entry, in order, equal as JSON (all three types, any text)',
      run: async () => {
        const store = await make();
        await appendOnce(store, SAMPLE);
        same(await loadAll(store), SAMPLE, 'what was appended');
      },
    },
    {
      name: 'S4: batches keep their order; an empty batch adds nothing and still completes',
      run: async () => {
        const store = await make();
        await appendOnce(store, SAMPLE.slice(0, 1));
        await appendOnce(store, []);
        await appendOnce(store, SAMPLE.slice(1, 4));
        await appendOnce(store, SAMPLE.slice(4));
        same(await loadAll(store), SAMPLE, 'three batches and an empty one');
      },
    },
    {
      name: 'S4: append and load are cold: nothing is written or read before subscribe',
      run: async () => {
        const store = await make();
        const pending = store.append(SAMPLE);
        const load = store.load();
        same(await loadAll(store), [], 'the store after an append that was never subscribed');
        await appendOnce(store, SAMPLE.slice(0, 2));
        same(await collect(load), SAMPLE.slice(0, 2), 'a load made before the append, subscribed after it');
        void pending;
      },
    },
    {
      name: 'S4: the store keeps what was appended, not the objects: changing them afterwards, or a loaded entry, changes nothing',
      run: async () => {
        const store = await make();
        const entries = copy(SAMPLE);
        await appendOnce(store, entries);
        (entries[0] as { message: AgentMessage }).message.content = 'changed after append';
        const loaded = await loadAll(store);
        same(loaded, SAMPLE, 'after changing the appended objects');
        (loaded[0] as { message: AgentMessage }).message.content = 'changed after load';
        same(await loadAll(store), SAMPLE, 'after changing a loaded entry');
      },
    },
    {
      name: 'S4: 2,000 entries in one batch and 200 one-entry batches load back in order',
      run: async () => {
        const store = await make();
        const many = chain(2_200);
        await appendOnce(store, many.slice(0, 2_000));
        for (const entry of many.slice(2_000)) await appendOnce(store, [entry]);
        same(await loadAll(store), many, '2,200 entries');
      },
    },
    {
      name: 'S4: a conversation persisted into the store loads back as the same history, and a moveTo is kept',
      run: async () => {
        const store = await make();
        const first = await lastValueFrom(SessionTree.load(store));
        const events = await lastValueFrom(
          new Observable<string>((s) => (s.next('What time is it?'), s.next('Thanks!'), s.complete())).pipe(
            conversation({ provider: clockModel(), registry: clock(), messages: first.context() }),
            persist(first, store),
            toArray(),
          ),
        );
        const end = events.filter((event): event is Extract<ConversationEvent, { type: 'loop_end' }> => event.type === 'loop_end').pop()!;
        const again = await lastValueFrom(SessionTree.load(store));
        same(again.context(), end.messages, "the reloaded tree's context");
        const firstAnswer = again.path().find((entry) => entry.type === 'message' && entry.message.role === 'assistant' && entry.message.content !== '');
        if (firstAnswer === undefined) throw new Error('storeConformance: the reloaded tree holds no answer');
        again.moveTo(firstAnswer.id);
        await aMomentLater();
        const moved = await lastValueFrom(SessionTree.load(store));
        same(moved.leaf, firstAnswer.id, 'the leaf of a tree reloaded after moveTo');
      },
    },
  ];
  const { reopen } = options;
  if (reopen !== undefined) {
    checks.push({
      name: 'S4: a store opened again on the same data loads the same entries and appends after them',
      run: async () => {
        const store = await make();
        await appendOnce(store, SAMPLE.slice(0, 3));
        const other = await reopen(store);
        same(await loadAll(other), SAMPLE.slice(0, 3), 'the store opened again');
        await appendOnce(other, SAMPLE.slice(3));
        same(await loadAll(store), SAMPLE, 'the first store, after the second appended');
      },
    });
  }
  return asChecks(checks);
}

/** The checks, and a `then` that runs them all, one after the other (not enumerable: the array stays an array of checks). */
function asChecks(checks: StoreCheck[]): StoreChecks {
  const all = async () => {
    for (const check of checks) {
      try {
        await check.run();
      } catch (error) {
        throw new Error(`${check.name}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
    }
  };
  const then: PromiseLike<void>['then'] = (onFulfilled, onRejected) => all().then(onFulfilled, onRejected);
  return Object.defineProperty(checks, 'then', { value: then, enumerable: false }) as StoreChecks;
}

// ---- what the checks append ----

const AT = '2026-01-01T00:00:00.000Z';
const SAMPLE: SessionEntry[] = [
  { id: 'a', parentId: null, type: 'message', message: { role: 'user', content: 'line one\nline "two" \\ 三 😀 \u2028' }, at: AT },
  {
    id: 'b',
    parentId: 'a',
    type: 'message',
    message: { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [{ id: 'c1', name: 'read', input: { path: '/tmp/x', n: 1.5, deep: { list: [null, true] } } }] },
    at: AT,
  },
  {
    id: 'c',
    parentId: 'b',
    type: 'message',
    message: { role: 'toolResult', toolCallId: 'c1', toolName: 'read', content: 'x'.repeat(100_000), isError: false, details: { bytes: 100_000 } },
    at: AT,
  },
  { id: 'd', parentId: 'c', type: 'compaction', summary: 'The user asked to read a file.', firstKeptId: 'b', at: AT },
  { id: 'e', parentId: 'd', type: 'message', message: { role: 'assistant', content: 'Done.', stopReason: 'stop' }, at: AT },
  { id: 'f', parentId: 'e', type: 'leaf', targetId: 'a', at: AT },
];

function chain(count: number): SessionEntry[] {
  return Array.from({ length: count }, (_, index) => ({
    id: `m${index}`,
    parentId: index === 0 ? null : `m${index - 1}`,
    type: 'message' as const,
    message: { role: 'user' as const, content: `message ${index}` },
    at: AT,
  }));
}

/** A model that asks the clock once, then answers from the result; `thanks` it answers at once. */
function clockModel(): Provider {
  return ({ messages }) => {
    const last = messages[messages.length - 1]!;
    const events: ProviderEvent[] =
      last.role === 'user' && /time/.test(last.content)
        ? [{ type: 'message_start' }, { type: 'tool_call', call: { id: `t${messages.length}`, name: 'clock', input: {} } }, { type: 'message_end', stopReason: 'toolUse' }]
        : [{ type: 'message_start' }, { type: 'text_delta', text: last.role === 'toolResult' ? `It is ${last.content}.` : 'You are welcome.' }, { type: 'message_end', stopReason: 'stop' }];
    return new Observable<ProviderEvent>((s) => {
      for (const event of events) s.next(event);
      s.complete();
    });
  };
}

function clock(): ToolRegistry {
  return new ToolRegistry().register({ name: 'clock', description: 'the time', input: {}, handler: () => '12:00' });
}

// ---- how the checks look ----

function collect<T>(source: Observable<T>): Promise<T[]> {
  return lastValueFrom(source.pipe(toArray()));
}

function loadAll(store: SessionStore): Promise<SessionEntry[]> {
  return collect(store.load());
}

/** Appends, and checks that the append emitted exactly once, then completed. */
async function appendOnce(store: SessionStore, entries: readonly SessionEntry[]): Promise<void> {
  const values = await collect(store.append(entries));
  if (values.length !== 1) throw new Error(`storeConformance: append must emit once, then complete (it emitted ${values.length} times)`);
}

/** What a moveTo handed to the store at once has had time to finish (a store that answers later). */
function aMomentLater(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 50));
}

function copy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** Throws unless `actual` and `expected` are the same JSON, keys in any order. */
function same(actual: unknown, expected: unknown, what: string): void {
  const a = canonical(actual);
  const e = canonical(expected);
  if (a === e) return;
  let at = 0;
  while (a[at] === e[at]) at++;
  const near = (text: string) => JSON.stringify(text.slice(Math.max(0, at - 40), at + 80));
  throw new Error(`storeConformance: ${what} differs from what was expected at character ${at}:\n  expected …${near(e)}…\n  actual   …${near(a)}…`);
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
      : inner,
  ) ?? 'undefined';
}
