/**
 * S3, the lock taken over atomically: several real processes race to take over the lock a dead writer left, on
 * a slowed file system (each step of the lock files waits a random few ms: spec/sessions/support/slow-fs.ts),
 * round after round. Each round exactly one appends; every other one gets the lock error naming the winner;
 * the file always loads, its ids never repeat, and no claim or draft is left behind. The racers are
 * spec/sessions/support/lock-race-child.ts, bundled once with esbuild, run by plain node and kept for every
 * round. `PROPERTY_RUNS=N` sets the rounds (default 25).
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { lastValueFrom, toArray } from 'rxjs';
import { type SessionEntry, SessionTree, jsonlStore } from '../../src/sessions/index.js';

jest.setTimeout(120_000);
const ROUNDS = Number(process.env.PROPERTY_RUNS ?? 25);
const RACERS = 4;
/** The slowest step of the lock files: wide enough for the racers' steps to interleave. */
const SLOW_FS_MS = 4;

let folder = '';
const racers: { process: ChildProcessWithoutNullStreams; lines: string[]; waiting: ((line: string) => void)[] }[] = [];

/** The next line a racer prints. */
function nextLine(racer: (typeof racers)[number]): Promise<string> {
  const line = racer.lines.shift();
  return line !== undefined ? Promise.resolve(line) : new Promise((resolve) => racer.waiting.push(resolve));
}

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'rx-tool-loop-lock-'));
  const child = join(folder, 'lock-race-child.js');
  buildSync({ entryPoints: [join(__dirname, 'support/lock-race-child.ts')], bundle: true, platform: 'node', format: 'cjs', outfile: child, logLevel: 'error' });
  for (let index = 0; index < RACERS; index++) {
    const process_ = spawn(process.execPath, [child], { env: { ...process.env, SLOW_FS_MS: String(SLOW_FS_MS) } });
    const racer = { process: process_, lines: [] as string[], waiting: [] as ((line: string) => void)[] };
    let buffered = '';
    process_.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      for (let end = buffered.indexOf('\n'); end !== -1; end = buffered.indexOf('\n')) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 1);
        const waiter = racer.waiting.shift();
        if (waiter !== undefined) waiter(line);
        else racer.lines.push(line);
      }
    });
    racers.push(racer);
  }
  expect(await Promise.all(racers.map(nextLine))).toEqual(racers.map(() => 'ready'));
});

afterAll(async () => {
  // stopped by their pids, and waited for: nothing is left running
  await Promise.all(
    racers.map(
      ({ process: process_ }) =>
        new Promise<void>((resolve) => {
          if (process_.exitCode !== null || process_.signalCode !== null) return resolve();
          process_.once('close', () => resolve());
          process.kill(process_.pid!, 'SIGTERM');
        }),
    ),
  );
  rmSync(folder, { recursive: true, force: true });
});

const entry = (id: string, parentId: string | null): SessionEntry => ({ id, parentId, type: 'message', message: { role: 'user', content: `message ${id}` }, at: 'then' });

describe('the lock of a session file (S3)', () => {
  it(`S3 (1): ${RACERS} processes racing ${ROUNDS} times to take over a dead writer's lock on a slowed file system: one wins each time, the others get the lock error, and the file always loads`, async () => {
    for (let round = 1; round <= ROUNDS; round++) {
      const file = join(folder, `session-${round}.jsonl`);
      writeFileSync(file, [entry('1', null), entry('2', '1'), entry('3', '2')].map((e) => `${JSON.stringify(e)}\n`).join(''));
      // a writer killed while it held the lock: a pid above any pid_max, so no process has it
      writeFileSync(`${file}.lock`, `${4_194_304 + round}\n`);
      for (const racer of racers) racer.process.stdin.write(`${file}\n`);
      const results = await Promise.all(racers.map(nextLine));

      const winners = racers.filter((_, index) => results[index] === 'appended');
      expect({ round, winners: winners.length }).toEqual({ round, winners: 1 });
      const winner = winners[0]!.process.pid!;
      const refusal = `LockError: jsonlStore: ${file} is being appended to by process ${winner} (lock file ${file}.lock): two processes must not append to one session`;
      expect({ round, results: results.filter((result) => result !== 'appended') }).toEqual({ round, results: Array.from({ length: RACERS - 1 }, () => refusal) });

      expect(readFileSync(`${file}.lock`, 'utf8')).toBe(`${winner}\n`);
      const entries = await lastValueFrom(jsonlStore(file).load().pipe(toArray()));
      expect(entries.map((e) => e.id)).toEqual(['1', '2', '3', '4']);
      expect(entries[3]!.type === 'message' && entries[3]!.message.content).toBe(`from process ${winner}`);
      const tree = await lastValueFrom(SessionTree.load(jsonlStore(file)));
      expect(tree.context()).toHaveLength(4);
      // no takeover claim and no draft is left behind
      expect(readdirSync(folder).filter((name) => name.startsWith(`session-${round}.`))).toEqual([`session-${round}.jsonl`, `session-${round}.jsonl.lock`]);
    }
  });

  it('S3 (1): a takeover whose taker died inside it (its claim left behind) is itself taken over; nothing is left behind', async () => {
    const file = join(folder, 'claimed.jsonl');
    writeFileSync(`${file}.lock`, '4194305\n'); // the dead writer
    writeFileSync(`${file}.lock.takeover-4194305`, '4194306\n'); // the claim of a taker that died too
    await lastValueFrom(jsonlStore(file).append([entry('1', null)]));
    expect(readFileSync(`${file}.lock`, 'utf8')).toBe(`${process.pid}\n`);
    expect(readdirSync(folder).filter((name) => name.startsWith('claimed.'))).toEqual(['claimed.jsonl', 'claimed.jsonl.lock']);
  });
});
