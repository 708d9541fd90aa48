import { Observable } from 'rxjs';
import type { AgentMessage, UserMessage } from '../types.js';
import { HeadQueue } from '../util/head-queue.js';
import { errorText, shown } from '../util/values.js';
import { type SessionEntry, type SessionStore, checkStore, notAnEntry } from './session-entry.js';

/** Who waits for a batch to be written ({@link SessionTree.write}): told once, `complete` when it is, `error` when it cannot be. */
export interface WriteObserver {
  complete(): void;
  error(error: unknown): void;
}

/** A batch waiting for its turn to be written, and who waits for it. */
interface Write {
  store: SessionStore;
  entries: readonly SessionEntry[];
  done?: WriteObserver | undefined;
}

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

  /**
   * The entry behind each message of `context(leafId)`, in the same order: the message's own entry, or, for the
   * summary, the compaction entry it comes from. What ties a history that started from `context()` to the tree
   * (`persist` reads it once, at its first event). Throws as `context` does.
   */
  contextEntries(leafId: string | null = this.#leaf): SessionEntry[] {
    return this.#context(this.path(leafId)).entries;
  }

  /**
   * Adds a `message` entry for each of `messages` at the leaf, in order, each following the one before, and
   * returns them; the last is the new leaf. Nothing is written: hand them to {@link SessionTree.write}, as
   * `persist` does (S2) with the messages that joined the history.
   *
   * @throws TypeError for `messages` that is no array.
   */
  addMessages(messages: readonly AgentMessage[]): SessionEntry[] {
    if (!Array.isArray(messages)) throw new TypeError(`SessionTree.addMessages: messages must be an array of messages (got ${shown(messages)})`);
    const at = this.#now();
    const added: SessionEntry[] = [];
    for (const message of messages) {
      const entry: SessionEntry = { id: this.#newId(), parentId: this.#leaf, type: 'message', message, at };
      this.#add(entry);
      added.push(entry);
    }
    return added;
  }

  /**
   * Adds a `compaction` entry at the leaf (S5) and returns it: from now on `context()` is the system messages
   * before `firstKeptId`, `summary` as a user message, then the messages from `firstKeptId` on. Nothing is
   * written: hand it to {@link SessionTree.write}, as `persist` does for a turn that compacted.
   *
   * @throws TypeError for a `summary` that is no string; Error for a `firstKeptId` that is no message on the leaf's path.
   */
  addCompaction(summary: string, firstKeptId: string): SessionEntry {
    if (typeof summary !== 'string') throw new TypeError(`SessionTree.addCompaction: summary must be a string (got ${shown(summary)})`);
    const kept = this.#entries.get(firstKeptId);
    if (kept?.type !== 'message' || !this.path().includes(kept)) {
      throw new Error(`SessionTree.addCompaction: ${JSON.stringify(firstKeptId)} is no message on the path to the leaf ${JSON.stringify(this.#leaf)}`);
    }
    const entry: SessionEntry = { id: this.#newId(), parentId: this.#leaf, type: 'compaction', summary, firstKeptId, at: this.#now() };
    this.#add(entry);
    return entry;
  }

  /**
   * Appends `entries` to `store` (default: the store the tree was loaded from) as one batch, after every write
   * the tree was asked for before — `moveTo`'s included — whatever the stores take; `done` is told once, when
   * it is written or cannot be (a `moveTo` that could not be saved fails the next write that has a `done`).
   * No Observable of its own: `persist` hands the tree a batch per event, and one observer for them all.
   *
   * @throws TypeError for `entries` that is no array or a `store` without `load` and `append`.
   */
  write(entries: readonly SessionEntry[], store: SessionStore = this.#store, done?: WriteObserver): void {
    if (!Array.isArray(entries)) throw new TypeError(`SessionTree.write: entries must be an array of entries (got ${shown(entries)})`);
    if (store !== this.#store) checkStore(store, 'SessionTree.write: store');
    this.#enqueue({ store, entries, done });
  }

  /** The entry `id` names, if it can be a leaf (a message or a compaction); throws otherwise. */
  #point(id: string, who: string): SessionEntry {
    const entry = this.#entries.get(id);
    if (entry === undefined) throw new Error(`SessionTree.${who}: no entry ${JSON.stringify(id)} in this session`);
    if (entry.type === 'leaf') throw new Error(`SessionTree.${who}: ${JSON.stringify(id)} is a leaf entry (a move), not a point of the tree`);
    return entry;
  }

  /** The messages of a path, the latest compaction applied, and beside each its entry (the summary's: the compaction). */
  #context(path: readonly SessionEntry[]): { messages: AgentMessage[]; entries: SessionEntry[] } {
    let from = 0;
    const messages: AgentMessage[] = [];
    const entries: SessionEntry[] = [];
    for (let index = path.length - 1; index >= 0; index--) {
      const entry = path[index]!;
      if (entry.type !== 'compaction') continue;
      from = path.findIndex((kept) => kept.id === entry.firstKeptId);
      // S5: a system message is never summarised: those before the kept part come first, as they are
      for (let before = 0; before < from; before++) {
        const kept = path[before]!;
        if (kept.type !== 'message' || kept.message.role !== 'system') continue;
        messages.push(kept.message);
        entries.push(kept);
      }
      messages.push(this.#summary(entry));
      entries.push(entry);
      break;
    }
    for (let index = from; index < path.length; index++) {
      const entry = path[index]!;
      if (entry.type !== 'message') continue;
      messages.push(entry.message);
      entries.push(entry);
    }
    return { messages, entries };
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
