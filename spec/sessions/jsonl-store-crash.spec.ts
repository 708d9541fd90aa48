/**
 * S3 for real: a child process writes a conversation into a JSONL session and is killed with SIGKILL at random
 * moments, again and again. After every kill the file loads — never an error — as a prefix of the whole
 * session that is a valid history (every call answered, or resumable by R22), and the next child resumes from
 * it; the last one completes the conversation exactly as one never killed. The child is
 * spec/sessions/support/crash-child.ts, bundled once with esbuild and run by plain node.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { lastValueFrom, toArray } from 'rxjs';
import type { AgentMessage } from '../../src/index.js';
import { conversation } from '../../src/index.js';
import { type SessionEntry, SessionTree, jsonlStore, memoryStore } from '../../src/sessions/index.js';
import { PROMPTS, complete } from './support/crash-child.js';
import { historyModel, historyTools } from './support/model.js';

// about 5 s on an idle machine (a Node start-up per kill); allow for a busy one
jest.setTimeout(120_000);
const KILLS = 50;

let folder = '';
let child = '';
const running = new Set<ChildProcess>();
/** Children at once, each on sessions of its own: a Node start-up takes a while on a busy machine. */
const LANES = 4;

beforeAll(() => {
  folder = mkdtempSync(join(tmpdir(), 'rx-tool-loop-crash-'));
  child = join(folder, 'crash-child.js');
  buildSync({ entryPoints: [join(__dirname, 'support/crash-child.ts')], bundle: true, platform: 'node', format: 'cjs', minify: true, outfile: child, logLevel: 'error' });
});
afterAll(() => {
  for (const process_ of running) if (process_.exitCode === null && process_.signalCode === null) process_.kill('SIGKILL');
  rmSync(folder, { recursive: true, force: true });
});

/** A small seeded generator (mulberry32): a failure names its seed. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Runs the child on `file`; kills it `killAfterMs` after it has loaded the session, unless it is done first. */
function runChild(file: string, killAfterMs: number | undefined): Promise<{ killed: boolean; done: boolean; stderr: string }> {
  return new Promise((resolve) => {
    const process_ = spawn(process.execPath, [child, file], { stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(process_);
    let stdout = '';
    let stderr = '';
    let timer: NodeJS.Timeout | undefined;
    process_.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (killAfterMs !== undefined && timer === undefined && stdout.includes('ready\n')) timer = setTimeout(() => process_.kill('SIGKILL'), killAfterMs);
    });
    process_.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    // 'close', not 'exit': a child's last output ('done') may still be in its pipe when it exits
    process_.on('close', (_code, signal) => {
      running.delete(process_);
      clearTimeout(timer);
      resolve({ killed: signal === 'SIGKILL', done: stdout.includes('done\n'), stderr });
    });
  });
}

describe('jsonlStore under SIGKILL (S3)', () => {
  it(`S3: a writer killed ${KILLS} times at random moments leaves a session that always loads as a valid prefix, and resuming completes it`, async () => {
    const whole = await lastValueFrom(complete(memoryStore()).pipe(toArray()));
    const end = whole[whole.length - 1];
    if (end?.type !== 'loop_end') throw new Error('the uninterrupted conversation did not end');
    const reference: readonly AgentMessage[] = end.messages;
    expect(reference.filter((m) => m.role === 'user')).toHaveLength(PROMPTS.length);

    const seed = Date.now() % 100_000;
    const next = random(seed);
    let kills = 0;
    let sessions = 0;
    let resumedMidTurn = 0;
    const lane = async () => {
      while (kills < KILLS) {
        const file = join(folder, `session-${++sessions}.jsonl`);
        let before: SessionEntry[] = [];
        for (;;) {
          const run = await runChild(file, kills < KILLS ? Math.floor(next() * 60) : undefined);
          if (run.killed) kills++;
          else expect({ stderr: run.stderr, done: run.done }).toEqual({ stderr: '', done: true });
          const label = `seed ${seed}, ${file}, kill ${kills}`;
          // never an error: whatever the kill left loads, and holds what the loads before it held
          const entries = await lastValueFrom(jsonlStore(file).load().pipe(toArray()));
          expect({ label, prefix: entries.slice(0, before.length) }).toEqual({ label, prefix: before });
          before = entries;
          const tree = await lastValueFrom(SessionTree.load(jsonlStore(file)));
          const messages = tree.context();
          expect({ label, messages }).toEqual({ label, messages: reference.slice(0, messages.length) });
          // a valid history, or one R22 resumes: the loop's own check (R21) accepts it as it is
          expect(() => conversation({ provider: historyModel(), registry: historyTools(), messages })).not.toThrow();
          const last = messages[messages.length - 1];
          if (last?.role === 'toolResult' || (last?.role === 'assistant' && (last.toolCalls ?? []).length > 0)) resumedMidTurn++;
          if (!run.killed) {
            expect(messages).toEqual(reference); // resumed after every kill, it ends as the conversation never killed
            break;
          }
        }
      }
    };
    await Promise.all(Array.from({ length: LANES }, lane));
    expect(kills).toBeGreaterThanOrEqual(KILLS);
    expect(sessions).toBeGreaterThanOrEqual(1);
    // the kills landed inside turns too, not only between prompts
    expect(resumedMidTurn).toBeGreaterThan(0);
  });
});
