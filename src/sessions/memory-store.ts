import { Observable } from 'rxjs';
import { type SessionEntry, type SessionStore, entriesAsJson } from './session-entry.js';

/**
 * A store in memory (S4), for tests and for sessions that need not outlive the process: `entries` are where it
 * starts. It keeps JSON copies, as a file or a database would: an entry changed after `append`, or one that
 * `load` gave, changes nothing in the store.
 *
 * ```ts
 * const store = memoryStore();
 * SessionTree.load(store).subscribe((tree) => tree.context()); // []
 * ```
 *
 * @throws TypeError at call time for `entries` that are not session entries.
 */
export function memoryStore(entries: SessionEntry[] = []): SessionStore {
  const stored = entriesAsJson(entries, 'memoryStore: entries');
  return {
    load: () =>
      new Observable<SessionEntry>((subscriber) => {
        const end = stored.length; // what was there at subscribe
        for (let index = 0; index < end && !subscriber.closed; index++) subscriber.next(JSON.parse(stored[index]!) as SessionEntry);
        subscriber.complete();
      }),
    append: (batch) =>
      new Observable<void>((subscriber) => {
        let lines: string[];
        try {
          lines = entriesAsJson(batch, 'memoryStore.append: entries');
        } catch (error) {
          return subscriber.error(error);
        }
        stored.push(...lines);
        subscriber.next();
        subscriber.complete();
      }),
  };
}
