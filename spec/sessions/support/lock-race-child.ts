/**
 * A writer of the lock race (spec/sessions/file-lock.spec.ts): for each session file it reads on stdin, it loads
 * the session and appends the entry a SessionTree would append next (the same id in every racer), then prints
 * `appended` or the error. Its lock-file steps are slowed (./slow-fs). Bundled by the spec with esbuild.
 */
import { createInterface } from 'node:readline';
import { lastValueFrom, toArray } from 'rxjs';
import { type SessionEntry, jsonlStore } from '../../../src/sessions/index.js';
import { slowLockFiles } from './slow-fs.js';

slowLockFiles(Number(process.env.SLOW_FS_MS ?? 0));

async function race(file: string): Promise<string> {
  try {
    const store = jsonlStore(file);
    const entries = await lastValueFrom(store.load().pipe(toArray()));
    const next: SessionEntry = {
      id: String(entries.length + 1),
      parentId: entries[entries.length - 1]?.id ?? null,
      type: 'message',
      message: { role: 'user', content: `from process ${process.pid}` },
      at: new Date().toISOString(),
    };
    await lastValueFrom(store.append([next]));
    return 'appended';
  } catch (error) {
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  }
}

const lines = createInterface({ input: process.stdin });
lines.on('line', (file) => void race(file).then((result) => process.stdout.write(`${result}\n`)));
process.stdout.write('ready\n');
