import { Observable } from 'rxjs';
import { jsonCopy } from './json-copy.js';
import { type SessionEntry, type SessionStore, eachEntry } from './session-entry.js';

/**
 * A store in memory (S4), for tests and for sessions that need not outlive the process: `entries` are where it
 * starts. It keeps JSON copies, as a file or a database would (each entry as `JSON.parse(JSON.stringify(entry))`
 * gives it back): an entry changed after `append`, or one that `load` gave, changes nothing in the store.
 *
 * ```ts
 * const store = memoryStore();
 * SessionTree.load(store).subscribe((tree) => tree.context()); // []
 * ```
 *
 * @throws TypeError at call time for `entries` that are not session entries.
 */
export function memoryStore(entries: SessionEntry[] = []): SessionStore {
  const stored = eachEntry(entries, 'memoryStore: entries', jsonCopy);
  return {
    load: () =>
      new Observable<SessionEntry>((subscriber) => {
        const end = stored.length; // what was there at subscribe
        for (let index = 0; index < end && !subscriber.closed; index++) subscriber.next(jsonCopy(stored[index]!));
        subscriber.complete();
      }),
    append: (batch) =>
      new Observable<void>((subscriber) => {
        let copies: SessionEntry[];
        try {
          copies = eachEntry(batch, 'memoryStore.append: entries', jsonCopy);
        } catch (error) {
          return subscriber.error(error);
        }
        for (const copy of copies) stored.push(copy);
        subscriber.next();
        subscriber.complete();
      }),
  };
}
