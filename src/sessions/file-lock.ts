/// <reference types="node" />
// one writer per session file (S3): a lock file that holds the writer's pid; its declarations name no Node type
import { linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';

/** The error of a session that another writer appends to (S3): passed on as it is, never wrapped. */
export class LockError extends Error {
  override name = 'LockError';
}

/** The lock files this process holds, released when it exits. */
const held = new Set<string>();

/** How long a process waits for another that is taking a dead writer's lock over, before it gives up. */
const TAKEOVER_WAIT_MS = 5_000;

/**
 * Takes the lock of `file` (the file `FILE.lock`, holding this process's pid) for as long as this process lives,
 * or throws a {@link LockError} naming the live process that holds it. Synchronous: no other code of this process
 * runs between its steps.
 *
 * A free lock is made with `link` from a draft already holding the pid: on Linux's local file systems `link`
 * fails if the name exists, in one step (no two processes both make it), and the lock file never exists
 * without its pid (an `O_EXCL` open would show it empty until its write). A lock whose writer is
 * dead (killed, crashed) is taken over — and that must be atomic too: two processes that both saw the dead pid
 * and both removed-then-linked could each take it, both append, and the session would be lost. So a takeover
 * is itself a lock, on the name `FILE.lock.takeover-PID` of the dead pid, made the same way: one process holds it;
 * it checks that the lock file still names the dead pid (no one else can change that file now: a new lock's
 * `link` fails while it exists, and any other takeover of it needs this same claim), then puts its own lock in
 * its place with `rename`, which replaces the name in one step (the lock file is never missing meanwhile), and
 * drops the claim. A process that finds the claim held by a live process waits for it and then sees that process's
 * lock; one that finds it held by a dead one (it died inside its takeover) takes that claim over the same way.
 */
export function lockFile(file: string): void {
  const lock = `${file}.lock`;
  if (held.has(lock)) return;
  const owner = take(lock, Date.now() + TAKEOVER_WAIT_MS);
  if (owner !== undefined) {
    throw new LockError(`jsonlStore: ${file} is being appended to by process ${owner} (lock file ${lock}): two processes must not append to one session`);
  }
  held.add(lock);
  if (held.size === 1) process.once('exit', release);
}

/** Makes `path` hold this process's pid: `undefined` once it does, or the live pid that holds it. */
function take(path: string, deadline: number): number | undefined {
  for (;;) {
    if (create(path)) return undefined;
    const text = contentOf(path);
    if (text === undefined && Date.now() <= deadline) continue; // released between the two steps: try again
    if (text === undefined) throw new LockError(`jsonlStore: could not take the lock ${path}: it comes and goes`);
    const owner = pidIn(text);
    // no other live process has this pid: the file was left by an earlier one that had it, and is ours
    if (owner === process.pid) return undefined;
    if (owner !== undefined && alive(owner)) return owner;
    const claim = `${path}.takeover-${owner ?? 'unknown'}`;
    const claimer = take(claim, deadline);
    if (claimer === undefined) {
      try {
        if (contentOf(path) === text) {
          replace(path);
          return undefined;
        }
      } finally {
        removeQuietly(claim);
      }
      continue; // it changed meanwhile (taken over and released): look again
    }
    // a live process is taking it over: its lock will be there in a moment
    if (Date.now() > deadline) throw new LockError(`jsonlStore: could not take the lock ${path}: process ${claimer} is taking it over`);
    sleep(1);
  }
}

/** The draft that becomes a lock: written whole before it has the lock's name. */
function draftOf(path: string): string {
  const draft = `${path}.draft-${process.pid}`;
  writeFileSync(draft, `${process.pid}\n`);
  return draft;
}

/** Makes `path` ours if no file has that name; `false` if one has. */
function create(path: string): boolean {
  const draft = draftOf(path);
  try {
    linkSync(draft, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return false;
  } finally {
    removeQuietly(draft);
  }
}

/** Puts our lock in the place of the file named `path`, in one step. */
function replace(path: string): void {
  const draft = draftOf(path);
  try {
    renameSync(draft, path);
  } catch (error) {
    removeQuietly(draft);
    throw error;
  }
}

function contentOf(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function pidIn(text: string): number | undefined {
  const pid = Number.parseInt(text, 10);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // gone already
  }
}

/** Waits `ms` without returning to the event loop: the takeover is synchronous, as the store's writes are. */
function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function release(): void {
  for (const lock of held) {
    try {
      if (pidIn(contentOf(lock) ?? '') === process.pid) removeQuietly(lock);
    } catch {
      // unreadable now: left as it is (a lock of a dead pid is taken over)
    }
  }
  held.clear();
}
