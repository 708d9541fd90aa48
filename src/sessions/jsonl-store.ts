/// <reference types="node" />
// the one file of the package that needs Node (its fs): its declarations name no Node type
import { closeSync, fstatSync, fsyncSync, ftruncateSync, openSync, readFileSync, readSync, statSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';
import { Observable, type Subscriber } from 'rxjs';
import { errorText, shown } from '../util/values.js';
import { LockError, lockFile } from './file-lock.js';
import { type SessionEntry, type SessionStore, eachEntry, notAnEntry } from './session-entry.js';

/**
 * The embedded default store (S3): a file with one JSON entry a line. A file that does not exist yet is an
 * empty session; the first append creates it, and the file stays open for the next. Each batch is one write.
 * Only a batch that ends a turn (its last entry the model's answer or a tool result: persist's batch at a
 * `turn_end`) is then `fsync`ed, and that fsync makes durable everything written before it too: a prompt or a
 * `moveTo` is written at once but rides the next turn's fsync. A process that dies loses nothing it wrote (the
 * system keeps it); a machine that stops loses at most what followed the last turn's fsync. A line cut short by a
 * crash is skipped on load, with nothing else lost (the next append first cuts it off); a whole last entry whose
 * newline is missing counts (and gets its newline); a UTF-8 byte-order mark at the start is skipped. Any other
 * line that is not an entry fails `load`, naming its line number. A process that appends holds the lock file
 * `PATH.lock` (its pid) until it exits; another process's append is refused with an error named `LockError` while it lives,
 * and of processes racing to take over a dead writer's lock exactly one does. Within the process, an append
 * whose ids the file holds already (a second SessionTree on the same file, on this store or another) is refused
 * with the same error. Writes are synchronous: a sync conversation stays sync.
 *
 * ```ts
 * const store = jsonlStore('chat.jsonl');
 * SessionTree.load(store).pipe(switchMap((tree) => prompts$.pipe(conversation({ provider, registry, messages: tree.context() }), persist(tree, store))));
 * ```
 *
 * @throws TypeError at call time for a `path` that is not a non-empty string.
 */
export function jsonlStore(path: string): SessionStore {
  if (typeof path !== 'string' || path === '') throw new TypeError(`jsonlStore: path must be a non-empty string (got ${shown(path)})`);
  const file = resolve(path);
  let writer: Writer | undefined;
  return {
    load: () => new Observable<SessionEntry>((subscriber) => read(file, subscriber)),
    append: (entries) =>
      new Observable<void>((subscriber) => {
        try {
          const text = eachEntry(entries, 'jsonlStore.append: entries', asLine).join('');
          if (text !== '') (writer ??= Writer.open(file)).append(entries, text);
        } catch (error) {
          return subscriber.error(error instanceof TypeError || error instanceof LockError ? error : new Error(`jsonlStore: cannot append to ${file}: ${errorText(error)}`, { cause: error }));
        }
        subscriber.next();
        subscriber.complete();
      }),
  };
}

const asLine = (entry: SessionEntry) => `${JSON.stringify(entry)}\n`;

/** Whether a batch ends a turn (S3's fsync): its last entry is the model's answer or a tool result. */
function endsTurn(entries: readonly SessionEntry[]): boolean {
  const last = entries[entries.length - 1];
  return last?.type === 'message' && (last.message.role === 'assistant' || last.message.role === 'toolResult');
}

/** Emits the file's entries; what follows its last newline is a line a crash cut short, and is skipped. */
function read(file: string, subscriber: Subscriber<SessionEntry>): void {
  let text: string;
  try {
    // a session not yet begun, told without the cost of an ENOENT error (any other failure still throws)
    if (statSync(file, { throwIfNoEntry: false }) === undefined) return subscriber.complete();
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return subscriber.complete(); // a session not yet begun
    return subscriber.error(new Error(`jsonlStore: cannot read ${file}: ${errorText(error)}`, { cause: error }));
  }
  let line = 0;
  let start = bomAt(text, 0);
  for (let end = text.indexOf('\n'); end !== -1 && !subscriber.closed; start = end + 1, end = text.indexOf('\n', start)) {
    line++;
    const raw = text.slice(start, end);
    if (raw.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      return subscriber.error(new Error(`jsonlStore: ${file} line ${line} is not a session entry: ${errorText(error)}`));
    }
    const problem = notAnEntry(value);
    if (problem !== undefined) return subscriber.error(new Error(`jsonlStore: ${file} line ${line} is not a session entry: ${problem}`));
    subscriber.next(value as SessionEntry);
  }
  // after the last newline: a whole entry (its newline not written, or a file written by hand), or a torn line
  const last = lastEntry(text.slice(start));
  if (last !== undefined && !subscriber.closed) subscriber.next(last);
  subscriber.complete();
}

/** The entry a last line (one without its newline) holds, or `undefined` for a line a crash cut short. */
function lastEntry(raw: string): SessionEntry | undefined {
  if (raw.trim() === '') return undefined;
  try {
    const value: unknown = JSON.parse(raw);
    return notAnEntry(value) === undefined ? (value as SessionEntry) : undefined;
  } catch {
    return undefined; // no prefix of an object's JSON is JSON: this line was cut
  }
}

/** 1 when a UTF-8 byte-order mark (an editor's) opens the text that starts the file at `offset` 0, else 0. */
function bomAt(text: string, offset: number): number {
  return offset === 0 && text.charCodeAt(0) === 0xfeff ? 1 : 0;
}

/**
 * The file open to append to, under this process's lock, and what it holds: the ids of its entries, read once at
 * the open and then only what another writer of this process added since (a SessionTree on another store of
 * the same file, or a second tree on this store). An append whose ids the file holds already is refused with the
 * lock's error: two trees that loaded the same session make the same next ids, and the second to append would
 * make a session whose ids repeat — refused as a second process is, before anything is written.
 */
class Writer {
  private readonly ids = new Set<string>();
  /** How many bytes of the file `ids` covers. */
  private known = 0;

  private constructor(
    private readonly file: string,
    private readonly fd: number,
  ) {}

  static open(file: string): Writer {
    lockFile(file);
    const fd = openSync(file, 'a+');
    try {
      cutTornTail(fd);
      const writer = new Writer(file, fd);
      writer.catchUp();
      return writer;
    } catch (error) {
      closeSync(fd);
      throw error;
    }
  }

  /**
   * One write for the batch; then, for a batch that ends a turn, an `fsync`, which makes that batch durable and
   * with it everything written before it (a prompt, a `moveTo`): they ride the next turn's fsync.
   */
  append(entries: readonly SessionEntry[], text: string): void {
    this.catchUp();
    const fresh = new Set<string>();
    for (const { id } of entries) {
      if (this.ids.has(id) || fresh.has(id)) {
        throw new LockError(
          `jsonlStore: ${this.file} holds an entry with the id ${JSON.stringify(id)} already: another SessionTree of this process appends to this session, and two must not append to one session`,
        );
      }
      fresh.add(id);
    }
    const buffer = Buffer.from(text, 'utf8');
    writeAll(this.fd, buffer);
    this.known += buffer.length;
    for (const id of fresh) this.ids.add(id);
    if (endsTurn(entries)) fsyncSync(this.fd);
  }

  /** The ids of what the file gained since `known` (all of it at the open): whole lines only, as appends write them. */
  private catchUp(): void {
    const size = fstatSync(this.fd).size;
    if (size === this.known) return;
    if (size < this.known) {
      this.ids.clear(); // cut short by hand: read it again
      this.known = 0;
    }
    const bytes = Buffer.allocUnsafe(size - this.known);
    for (let offset = 0; offset < bytes.length; ) {
      const count = readSync(this.fd, bytes, offset, bytes.length - offset, this.known + offset);
      if (count === 0) break;
      offset += count;
    }
    const text = bytes.toString('utf8');
    for (let start = bomAt(text, this.known), end = 0; start < text.length; start = end + 1) {
      end = text.indexOf('\n', start);
      if (end === -1) end = text.length;
      const id = idOf(text.slice(start, end));
      if (id !== undefined) this.ids.add(id);
    }
    this.known = size;
  }
}

/** The id of the entry a line holds, if it holds one (a line that is not an entry is load's to report). */
function idOf(line: string): string | undefined {
  try {
    const value: unknown = JSON.parse(line);
    const id = typeof value === 'object' && value !== null ? (value as { id?: unknown }).id : undefined;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The next line must not join a last line without its newline: a whole entry gets its newline, a line a crash
 * cut short (which load skips) is cut off.
 */
function cutTornTail(fd: number): void {
  const size = fstatSync(fd).size;
  if (size === 0) return; // a new file
  const chunk = Buffer.allocUnsafe(64 * 1024);
  let from = 0; // where the last line starts
  for (let end = size; end > 0; ) {
    const start = Math.max(0, end - chunk.length);
    const count = readSync(fd, chunk, 0, end - start, start);
    const newline = chunk.subarray(0, count).lastIndexOf(10);
    if (newline !== -1) {
      from = start + newline + 1;
      break;
    }
    end = start;
  }
  if (from === size) return;
  const tail = Buffer.alloc(size - from);
  readSync(fd, tail, 0, tail.length, from);
  const text = tail.toString('utf8');
  if (lastEntry(text.slice(bomAt(text, from))) !== undefined) writeAll(fd, Buffer.from('\n'));
  else ftruncateSync(fd, from);
}

function writeAll(fd: number, buffer: Buffer): void {
  for (let offset = 0; offset < buffer.length; ) offset += writeSync(fd, buffer, offset);
}
