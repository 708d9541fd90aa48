/// <reference types="node" />
// the one file of the package that needs Node (its fs): its declarations name no Node type
import { closeSync, fstatSync, fsyncSync, ftruncateSync, linkSync, openSync, readFileSync, readSync, statSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';
import { Observable, type Subscriber } from 'rxjs';
import { errorText, shown } from '../util/values.js';
import { type SessionEntry, type SessionStore, eachEntry, notAnEntry } from './session-entry.js';

/**
 * The embedded default store (S3): a file with one JSON entry a line. A file that does not exist yet is an
 * empty session; the first append creates it, and the file stays open for the next. Each batch is one write;
 * a batch that ends a turn (its last entry the model's answer or a tool result: persist's batch at a
 * `turn_end`) is then `fsync`ed, and with it everything written before (a prompt, a `moveTo`), so a turn that
 * ended is on the disk. A process that dies loses at most the batch being written (what was written is the
 * system's to keep; only a machine that stops loses what followed the last turn's fsync) — and a line cut
 * short by the crash is skipped on load, with nothing else lost (the next append first cuts it off; a whole
 * entry whose newline is missing counts and gets its newline). Any other line that is not an entry fails
 * `load`, naming its line number. A process that appends holds the lock file
 * `PATH.lock` (its pid) until it exits; another process's append is refused while it lives. Writes are
 * synchronous: a sync conversation stays sync.
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
  let fd: number | undefined;
  return {
    load: () => new Observable<SessionEntry>((subscriber) => read(file, subscriber)),
    append: (entries) =>
      new Observable<void>((subscriber) => {
        try {
          const text = eachEntry(entries, 'jsonlStore.append: entries', asLine).join('');
          if (text !== '') {
            fd ??= openForAppend(file);
            writeAll(fd, Buffer.from(text, 'utf8'));
            if (endsTurn(entries)) fsyncSync(fd);
          }
        } catch (error) {
          return subscriber.error(error instanceof TypeError || isOurs(error) ? error : new Error(`jsonlStore: cannot append to ${file}: ${errorText(error)}`, { cause: error }));
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
  let start = 0;
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

/** Opens the file to append to, under this process's lock, with a torn last line cut off. */
function openForAppend(file: string): number {
  lock(file);
  const fd = openSync(file, 'a+');
  try {
    cutTornTail(fd);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return fd;
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
  if (lastEntry(tail.toString('utf8')) !== undefined) writeAll(fd, Buffer.from('\n'));
  else ftruncateSync(fd, from);
}

function writeAll(fd: number, buffer: Buffer): void {
  for (let offset = 0; offset < buffer.length; ) offset += writeSync(fd, buffer, offset);
}

// ---- one writer per file: a lock file that holds the writer's pid ----

/** The files this process holds the lock of, released when it exits. */
const held = new Set<string>();
class LockError extends Error {
  override name = 'LockError';
}
const isOurs = (error: unknown) => error instanceof LockError;

function lock(file: string): void {
  if (held.has(file)) return;
  const lockFile = `${file}.lock`;
  for (let attempt = 0; attempt < 3; attempt++) {
    // written whole under another name, then linked: the lock file never exists without its pid
    const draft = `${lockFile}.${process.pid}`;
    writeFileSync(draft, `${process.pid}\n`);
    try {
      linkSync(draft, lockFile);
      held.add(file);
      if (held.size === 1) process.once('exit', release);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      unlinkSync(draft);
    }
    const owner = ownerOf(lockFile);
    if (owner === process.pid) {
      held.add(file); // left by an earlier process that had this pid
      return;
    }
    if (owner !== undefined && alive(owner)) {
      throw new LockError(
        `jsonlStore: ${file} is being appended to by process ${owner} (lock file ${lockFile}): two processes must not append to one session`,
      );
    }
    // its writer is gone (killed, crashed): take the lock over
    try {
      unlinkSync(lockFile);
    } catch {
      // another process took it over first: try again
    }
  }
  throw new LockError(`jsonlStore: could not take the lock ${lockFile} for ${file}`);
}

function ownerOf(lockFile: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(lockFile, 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function release(): void {
  for (const file of held) {
    const lockFile = `${file}.lock`;
    if (ownerOf(lockFile) === process.pid) {
      try {
        unlinkSync(lockFile);
      } catch {
        // already gone
      }
    }
  }
  held.clear();
}
