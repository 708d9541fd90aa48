import type { Observable } from 'rxjs';
import type { AgentMessage } from '../types.js';
import { isPlainObject, shown } from '../util/values.js';

/**
 * One entry of a session's log (S1). Entries are only ever appended: a `message` joined the history, a
 * `compaction` summarised the messages before `firstKeptId` (S5), a `leaf` recorded a `moveTo` (a branch), so a
 * reloaded tree stands where it was left. `parentId` is the entry it follows (`null`: a root); `at` is when it
 * was made, as an ISO 8601 string.
 */
export type SessionEntry =
  | { id: string; parentId: string | null; type: 'message'; message: AgentMessage; at: string }
  | { id: string; parentId: string | null; type: 'compaction'; summary: string; firstKeptId: string; at: string }
  | { id: string; parentId: string | null; type: 'leaf'; targetId: string; at: string };

/**
 * Where a session's entries live (S3, S4): `load` emits every entry appended so far, in order, and completes;
 * `append` stores a batch, in order after the earlier ones, then emits once and completes. Both are cold.
 * Any store that passes `storeConformance` (`rx-tool-loop/sessions/testing`) will do: a file, a database row per
 * entry, a key-value store.
 */
export interface SessionStore {
  load(): Observable<SessionEntry>;
  append(entries: readonly SessionEntry[]): Observable<void>;
}

/** Why `value` is not a {@link SessionEntry}, or `undefined` when it is one (its message's shape included). */
export function notAnEntry(value: unknown): string | undefined {
  if (!isPlainObject(value)) return `expected an object, got ${shown(value)}`;
  const { id, parentId, type, at } = value;
  if (typeof id !== 'string' || id === '') return `id must be a non-empty string (got ${shown(id)})`;
  if (parentId !== null && typeof parentId !== 'string') return `parentId must be a string or null (got ${shown(parentId)})`;
  if (typeof at !== 'string') return `at must be a string (got ${shown(at)})`;
  switch (type) {
    case 'message':
      return notAMessage(value.message);
    case 'compaction':
      if (typeof value.summary !== 'string') return `summary must be a string (got ${shown(value.summary)})`;
      return typeof value.firstKeptId === 'string' ? undefined : `firstKeptId must be a string (got ${shown(value.firstKeptId)})`;
    case 'leaf':
      return typeof value.targetId === 'string' ? undefined : `targetId must be a string (got ${shown(value.targetId)})`;
    default:
      return `type must be 'message', 'compaction' or 'leaf' (got ${shown(type)})`;
  }
}

/** The message's own shape; where it stands in the history is the tree's to check (R21 when it is sent). */
function notAMessage(message: unknown): string | undefined {
  if (!isPlainObject(message)) return `message must be an object (got ${shown(message)})`;
  const { role, content } = message;
  if (role !== 'system' && role !== 'user' && role !== 'assistant' && role !== 'toolResult') {
    return `message.role must be 'system', 'user', 'assistant' or 'toolResult' (got ${shown(role)})`;
  }
  return typeof content === 'string' ? undefined : `message.content must be a string (got ${shown(content)})`;
}

/**
 * Each entry through `asJson` (its JSON text for a file, a JSON copy in memory), once it is known to be one;
 * throws a TypeError naming the first that is not an entry, or that JSON cannot write (a cycle, a BigInt).
 */
export function eachEntry<T>(entries: readonly unknown[], what: string, asJson: (entry: SessionEntry) => T): T[] {
  if (!Array.isArray(entries)) throw new TypeError(`${what} must be an array (got ${shown(entries)})`);
  const out: T[] = [];
  for (let index = 0; index < entries.length; index++) {
    const entry: unknown = entries[index];
    const problem = notAnEntry(entry);
    if (problem !== undefined) throw new TypeError(`${what}[${index}] is not a session entry: ${problem}`);
    try {
      out.push(asJson(entry as SessionEntry));
    } catch (error) {
      throw new TypeError(`${what}[${index}] does not survive JSON.stringify: ${(error as Error).message}`);
    }
  }
  return out;
}

/** Throws a TypeError naming `who` unless `store` has a `load` and an `append` function. */
export function checkStore(store: unknown, who: string): asserts store is SessionStore {
  const { load, append } = (typeof store === 'object' && store !== null ? store : {}) as Partial<SessionStore>;
  if (typeof load !== 'function' || typeof append !== 'function') {
    throw new TypeError(`${who} must be a SessionStore, with load() and append(entries) (got ${shown(store)})`);
  }
}
