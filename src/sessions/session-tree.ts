import { Observable } from 'rxjs';
import type { AgentMessage, UserMessage } from '../types.js';
import { HeadQueue } from '../util/head-queue.js';
import { errorText } from '../util/values.js';
import { type SessionEntry, type SessionStore, checkStore, notAnEntry } from './session-entry.js';

/** Who waits for a batch to be written: told once, `complete` when it is, `error` when it cannot be. */
export interface Written {
  complete(): void;
  error(error: unknown): void;
}

/** A batch waiting for its turn to be written, and who waits for it. */
interface Write {
  store: SessionStore;
  entries: readonly SessionEntry[];
  done?: Written;
}

// what persist does to a tree (grow it, write it); defined in the class's static block, which sees its private state
let grow: (tree: SessionTree, messages: readonly AgentMessage[], into: SessionEntry[]) => void;
let compact: (tree: SessionTree, summary: string, firstKeptId: string) => SessionEntry;
let alignedIds: (tree: SessionTree) => (string | null)[];
let write: (tree: SessionTree, store: SessionStore, entries: readonly SessionEntry[], done: Written) => void;

/**
 * A session as a tree (S1): every message appended once, a branch is a move of the leaf, a compaction is an
 * entry. `context()` is the history on the path from the root to the leaf — what the next prompt continues —
 * with the latest compaction on that path applied: the system messages before `firstKeptId` (never summarised,
 * S5), its summary as a user message, then the messages from `firstKeptId` on. `moveTo(id)` moves the leaf (the next prompt branches from there) and is itself appended
 * to the store the tree was loaded from, as a `leaf` entry, so a reloaded tree stands where it was left.
 * Nothing is ever deleted.
 *
 * ```text
 * entries:  1 user ─ 2 assistant ─ 3 user ─ 4 assistant      moveTo('2'), then a prompt:
 *                              └─ 6 user ─ 7 assistant       (5 is the leaf entry of the move)
 * context('7'):  user, assistant, user, assistant            the branch: 1, 2, 6, 7
 * ```
 *
 * ```ts
 * const store = jsonlStore('chat.jsonl');
 * SessionTree.load(store).pipe(
 *   switchMap((tree) => prompts$.pipe(conversation({ provider, registry, messages: tree.context() }), persist(tree, store))),
 * );
 * ```
 */
export class SessionTree {
  readonly #entries = new Map<string, SessionEntry>();
  #leaf: string | null = null;
  /** Where moveTo's `leaf` entries go: the store the tree was loaded from. */
  readonly #store: SessionStore;
  readonly #queue = new HeadQueue<Write>();
  #writing = false;
  /** A moveTo that could not be saved: the next write through the tree reports it. */
  #failure: { error: unknown } | undefined;
  /** The summary message of each compaction entry, made once, so that context() hands out the same object. */
  readonly #summaries = new WeakMap<SessionEntry, UserMessage>();
  #nextId = 1;
  /** The ids that repeated in the store (two writers appended to one session): for each, its entries, first to last. */
  #repeated: Map<string, SessionEntry[]> | undefined;
  readonly #warnings: string[] = [];
  /** The `at` of the entries made in the millisecond `#stampedAt`: one Date per millisecond, not one per entry. */
  #stamp = '';
  #stampedAt = Number.NaN;

  private constructor(store: SessionStore) {
    this.#store = store;
  }

  /**
   * The tree of the entries `store` holds, emitted once they are all loaded (S1). Cold: each subscription
   * loads again. Errors, naming the entry, when an entry is malformed or points at an entry that does not come
   * before it (a parent, a move's target, a compaction's first kept message on its own path). An id that an
   * earlier entry has already (two writers appended to one session) fails nothing: both entries are kept, the
   * later one renamed (`ID~2`, …), a later entry naming that id follows the first of its entries that it can
   * follow, and {@link SessionTree.warnings} says so.
   *
   * @throws TypeError at call time for a `store` without `load` and `append`.
   */
  static load(store: SessionStore): Observable<SessionTree> {
    checkStore(store, 'SessionTree.load: store');
    return new Observable<SessionTree>((subscriber) => {
      const tree = new SessionTree(store);
      let count = 0;
      return store.load().subscribe({
        next: (loaded) => {
          count++;
          const shape = notAnEntry(loaded);
          const entry = shape === undefined ? tree.#resolve(loaded, count) : loaded;
          const problem = shape === undefined ? tree.#problem(entry) : `is not a session entry: ${shape}`;
          if (problem === undefined) return tree.#add(entry);
          const id = (entry as { id?: unknown } | null)?.id;
          subscriber.error(new Error(`SessionTree.load: entry ${count}${typeof id === 'string' ? ` (id ${JSON.stringify(id)})` : ''} ${problem}`));
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => {
          subscriber.next(tree);
          subscriber.complete();
        },
      });
    });
  }

  /**
   * What the load repaired, one line each: an entry whose id an earlier entry had (two writers appended to one
   * session), and the name it was kept under. Empty for a session one writer wrote.
   */
  get warnings(): readonly string[] {
    return this.#warnings;
  }

  /** The entry the next message follows: the last one appended, or the target of the last `moveTo`; `null` for an empty session. */
  get leaf(): string | null {
    return this.#leaf;
  }

  /** The entries from the root to `leafId` (default: the leaf), in order. Throws for an id the tree does not hold. */
  path(leafId: string | null = this.#leaf): SessionEntry[] {
    if (leafId === null) return [];
    const path: SessionEntry[] = [];
    for (let entry: SessionEntry | undefined = this.#point(leafId, 'path'); entry !== undefined; ) {
      path.push(entry);
      entry = entry.parentId === null ? undefined : this.#entries.get(entry.parentId);
    }
    return path.reverse();
  }

  /**
   * The history at `leafId` (default: the leaf) as a model call or `conversation({ messages })` takes it (S1):
   * the messages on its path, with the latest compaction on the path applied (the system messages before its
   * first kept message, its summary as a user message, then the messages from the first kept one). A new array of the tree's own
   * message objects (do not change them).
   */
  context(leafId: string | null = this.#leaf): AgentMessage[] {
    return this.#context(this.path(leafId)).messages;
  }

  /**
   * Moves the leaf to `entryId` (a message or a compaction): the next prompt continues from there, a branch
   * beside what followed it (S1). Appended at once to the store the tree was loaded from, as a `leaf` entry; if
   * that write fails, the next write through the tree (`persist`) errors with it. Throws for an unknown id or
   * a `leaf` entry.
   */
  moveTo(entryId: string): void {
    this.#point(entryId, 'moveTo');
    const entry: SessionEntry = { id: this.#newId(), parentId: this.#leaf, type: 'leaf', targetId: entryId, at: this.#now() };
    this.#add(entry);
    this.#enqueue({ store: this.#store, entries: [entry] });
  }

  static {
    grow = (tree, messages, into) => {
      const at = tree.#now();
      for (const message of messages) {
        const entry: SessionEntry = { id: tree.#newId(), parentId: tree.#leaf, type: 'message', message, at };
        tree.#add(entry);
        into.push(entry);
      }
    };
    compact = (tree, summary, firstKeptId) => {
      const entry: SessionEntry = { id: tree.#newId(), parentId: tree.#leaf, type: 'compaction', summary, firstKeptId, at: tree.#now() };
      tree.#add(entry);
      return entry;
    };
    alignedIds = (tree) => tree.#context(tree.path()).ids;
    write = (tree, store, entries, done) => tree.#enqueue({ store, entries, done });
  }

  /** The entry `id` names, if it can be a leaf (a message or a compaction); throws otherwise. */
  #point(id: string, who: string): SessionEntry {
    const entry = this.#entries.get(id);
    if (entry === undefined) throw new Error(`SessionTree.${who}: no entry ${JSON.stringify(id)} in this session`);
    if (entry.type === 'leaf') throw new Error(`SessionTree.${who}: ${JSON.stringify(id)} is a leaf entry (a move), not a point of the tree`);
    return entry;
  }

  /** The messages of a path, the latest compaction applied, and beside each the id of its entry (`null`: the summary). */
  #context(path: readonly SessionEntry[]): { messages: AgentMessage[]; ids: (string | null)[] } {
    let from = 0;
    const messages: AgentMessage[] = [];
    const ids: (string | null)[] = [];
    for (let index = path.length - 1; index >= 0; index--) {
      const entry = path[index]!;
      if (entry.type !== 'compaction') continue;
      from = path.findIndex((kept) => kept.id === entry.firstKeptId);
      // S5: a system message is never summarised: those before the kept part come first, as they are
      for (let before = 0; before < from; before++) {
        const kept = path[before]!;
        if (kept.type !== 'message' || kept.message.role !== 'system') continue;
        messages.push(kept.message);
        ids.push(kept.id);
      }
      messages.push(this.#summary(entry));
      ids.push(null);
      break;
    }
    for (let index = from; index < path.length; index++) {
      const entry = path[index]!;
      if (entry.type !== 'message') continue;
      messages.push(entry.message);
      ids.push(entry.id);
    }
    return { messages, ids };
  }

  #summary(entry: Extract<SessionEntry, { type: 'compaction' }>): UserMessage {
    let message = this.#summaries.get(entry);
    if (message === undefined) this.#summaries.set(entry, (message = { role: 'user', content: entry.summary }));
    return message;
  }

  /**
   * A loaded entry as the tree keeps it: renamed if its id was taken (the store's entry is not changed), and
   * each id it names that repeated read as the first entry of that id that fits (a message or a compaction to
   * follow or move to; a message on its path to keep from).
   */
  #resolve(entry: SessionEntry, count: number): SessionEntry {
    let resolved = entry;
    const repeated = this.#repeated;
    if (repeated !== undefined) {
      const point = (candidate: SessionEntry) => candidate.type !== 'leaf';
      const parentId = entry.parentId === null ? null : (repeated.get(entry.parentId)?.find(point)?.id ?? entry.parentId);
      if (parentId !== entry.parentId) resolved = { ...resolved, parentId };
      if (resolved.type === 'leaf') {
        const targetId = repeated.get(resolved.targetId)?.find(point)?.id ?? resolved.targetId;
        if (targetId !== resolved.targetId) resolved = { ...resolved, targetId };
      } else if (resolved.type === 'compaction' && repeated.has(resolved.firstKeptId)) {
        const parent = resolved.parentId === null ? undefined : this.#entries.get(resolved.parentId);
        const onPath = new Set(parent === undefined || parent.type === 'leaf' ? [] : this.path(parent.id));
        const firstKeptId = repeated.get(resolved.firstKeptId)!.find((kept) => kept.type === 'message' && onPath.has(kept))?.id ?? resolved.firstKeptId;
        if (firstKeptId !== resolved.firstKeptId) resolved = { ...resolved, firstKeptId };
      }
    }
    const first = this.#entries.get(entry.id);
    if (first === undefined) return resolved;
    let n = 2;
    while (this.#entries.has(`${entry.id}~${n}`)) n++;
    resolved = { ...resolved, id: `${entry.id}~${n}` };
    const entries = (this.#repeated ??= new Map()).get(entry.id);
    if (entries === undefined) this.#repeated.set(entry.id, [first, resolved]);
    else entries.push(resolved);
    this.#warnings.push(`entry ${count} repeats the id ${JSON.stringify(entry.id)} of an earlier entry (two writers appended to this session): both are kept, this one as ${JSON.stringify(resolved.id)}`);
    return resolved;
  }

  /** Why a loaded entry (of the right shape) cannot join the tree, or `undefined`. */
  #problem(entry: SessionEntry): string | undefined {
    const parent = entry.parentId === null ? undefined : this.#entries.get(entry.parentId);
    if (entry.parentId !== null && parent === undefined) return `follows ${JSON.stringify(entry.parentId)}, which no earlier entry is`;
    if (parent?.type === 'leaf') return `follows ${JSON.stringify(entry.parentId)}, a leaf entry`;
    if (entry.type === 'leaf') {
      const target = this.#entries.get(entry.targetId);
      if (target === undefined || target.type === 'leaf') return `moves to ${JSON.stringify(entry.targetId)}, which no earlier message or compaction is`;
    }
    if (entry.type === 'compaction') {
      const onPath = entry.parentId === null ? [] : this.path(entry.parentId);
      if (!onPath.some((kept) => kept.id === entry.firstKeptId && kept.type === 'message')) {
        return `keeps from ${JSON.stringify(entry.firstKeptId)}, which is no message on its path`;
      }
    }
    return undefined;
  }

  #add(entry: SessionEntry): void {
    this.#entries.set(entry.id, entry);
    this.#leaf = entry.type === 'leaf' ? entry.targetId : entry.id;
  }

  /** Now, as an entry's `at` (ISO 8601): the same string as `new Date().toISOString()`, made once per millisecond. */
  #now(): string {
    const ms = Date.now();
    if (ms !== this.#stampedAt) {
      this.#stampedAt = ms;
      this.#stamp = new Date(ms).toISOString();
    }
    return this.#stamp;
  }

  /** Ids in order of making (`1`, `2`, …), skipping any an earlier writer used: unique within the session. */
  #newId(): string {
    let id: string;
    do id = String(this.#nextId++);
    while (this.#entries.has(id));
    return id;
  }

  /** Writes run one after the other, in the order they were asked for, whatever the stores take. */
  #enqueue(item: Write): void {
    this.#queue.push(item);
    this.#drain();
  }

  #drain(): void {
    while (!this.#writing && this.#queue.length > 0) {
      const next = this.#queue.shift()!;
      if (next.done !== undefined && this.#failure !== undefined) {
        const { error } = this.#failure;
        this.#failure = undefined;
        next.done.error(new Error(`SessionTree.moveTo could not be saved: ${errorText(error)}`, { cause: error }));
        continue;
      }
      this.#writing = true;
      let synchronous = true;
      let finished = false;
      const finish = (error?: { error: unknown }) => {
        if (finished) return;
        finished = true;
        this.#writing = false;
        if (error === undefined) next.done?.complete();
        else if (next.done !== undefined) next.done.error(error.error);
        else this.#failure = error;
        if (!synchronous) this.#drain(); // a store that answered later: the queue goes on from here
      };
      try {
        next.store.append(next.entries).subscribe({ error: (error: unknown) => finish({ error }), complete: () => finish() });
      } catch (error) {
        finish({ error }); // a store whose append throws instead of erroring
      }
      synchronous = false;
    }
  }
}

/** persist's hold on a tree: its messages joined the history (S2); their entries are pushed onto `into`. */
export function growTree(tree: SessionTree, messages: readonly AgentMessage[], into: SessionEntry[]): void {
  grow(tree, messages, into);
}

/** persist's hold on a tree: compactWhen summarised the path before `firstKeptId` (S5). */
export function compactTree(tree: SessionTree, summary: string, firstKeptId: string): SessionEntry {
  return compact(tree, summary, firstKeptId);
}

/** The entry id of each message of `tree.context()` (`null` for a compaction's summary). */
export function contextIds(tree: SessionTree): (string | null)[] {
  return alignedIds(tree);
}

/**
 * Appends `entries` to `store` after every write the tree was asked for before, then tells `done` (no Observable
 * of its own: persist hands the tree a batch per event, and one observer for them all).
 */
export function writeTree(tree: SessionTree, store: SessionStore, entries: readonly SessionEntry[], done: Written): void {
  write(tree, store, entries, done);
}
