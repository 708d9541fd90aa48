/**
 * A slowed file system for the lock race (spec/sessions/file-lock.spec.ts): every step of the lock files
 * (`PATH.lock`, its drafts and takeover claims) waits a random 0 to `SLOW_FS_MS` ms first, so that racing
 * processes interleave their steps in every order. It patches the `fs` module object, whose functions the
 * store looks up at each call.
 */
import fs = require('node:fs');

const pause = new Int32Array(new SharedArrayBuffer(4));

type Step = 'linkSync' | 'renameSync' | 'unlinkSync' | 'readFileSync' | 'writeFileSync';

function slowed<F extends (path: fs.PathLike, ...rest: never[]) => unknown>(name: Step, slowest: number): void {
  const original = fs[name] as unknown as F;
  (fs as unknown as Record<string, unknown>)[name] = (path: fs.PathLike, ...rest: never[]) => {
    if (String(path).includes('.lock')) Atomics.wait(pause, 0, 0, Math.random() * slowest);
    return original(path, ...rest);
  };
}

/** Slows every step of the lock files by a random 0 to `slowest` ms. */
export function slowLockFiles(slowest: number): void {
  for (const name of ['linkSync', 'renameSync', 'unlinkSync', 'readFileSync', 'writeFileSync'] as const) slowed(name, slowest);
}
