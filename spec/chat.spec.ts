/**
 * `npm run chat` (C6), driven as a user drives it: a child process with prompts on standard input (not a
 * terminal: one prompt per line, each echoed, status changes as lines) and SIGINT for Ctrl+C.
 */
import { ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Written } from './support/written.js';

const root = join(__dirname, '..');
/** ts-node starts in a few seconds on a small machine; the scripted chat itself answers within one. */
const WAIT_MS = 30_000;
jest.setTimeout(90_000);

interface Chat {
  child: ChildProcessWithoutNullStreams;
  /** Everything the chat printed so far. */
  stdout(): string;
  /** Resolves once stdout holds `text` (from `from` on); fails after WAIT_MS with what it printed. */
  printed(text: string, from?: number): Promise<void>;
  /** Resolves with the exit code (or the signal that ended it). */
  exited: Promise<number | NodeJS.Signals>;
  say(line: string): void;
}

let running: ChildProcessWithoutNullStreams | undefined;

function startChat(...args: string[]): Chat {
  const child = spawn(process.execPath, [require.resolve('ts-node/dist/bin.js'), 'examples/chat.ts', ...args], { cwd: root });
  running = child;
  const stdout = new Written();
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => stdout.append(chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | NodeJS.Signals>((resolve) => child.on('close', (code, signal) => resolve(code ?? signal!)));
  return {
    child,
    stdout: () => stdout.value,
    printed: (text, from = 0) =>
      stdout.until(text, { ms: WAIT_MS, from, failure: () => `the chat did not print ${JSON.stringify(text)} within ${WAIT_MS} ms; stdout:\n${stdout.value}\nstderr:\n${stderr}` }),
    exited,
    say: (line) => child.stdin.write(`${line}\n`),
  };
}

afterEach(() => {
  if (running !== undefined && running.exitCode === null && running.signalCode === null) running.kill('SIGKILL');
  running = undefined;
});

describe('npm run chat (C6)', () => {
  it('not on a terminal: one prompt per line, the tool on a status line, the history carried; exit 0 at the end of input', async () => {
    const chat = startChat();
    chat.say('What time is it?');
    chat.say('Thanks! What did I ask before?');
    chat.child.stdin.end();

    expect(await chat.exited).toBe(0);
    expect(chat.stdout()).toBe(readFileSync(join(root, 'spec/fixtures/chat.expected.txt'), 'utf8'));
  });

  it('SIGINT while current_time runs cancels that loop only: the chat goes on, and the cancelled turn is in the history', async () => {
    const chat = startChat();
    chat.say('What time is it?');
    await chat.printed('[running current_time]\n');
    chat.child.kill('SIGINT');
    await chat.printed('[cancelled]\n');
    expect(chat.child.exitCode).toBeNull();

    chat.say('Never mind. What did I ask before?');
    await chat.printed('answer was cancelled.\n');
    chat.child.stdin.end();

    expect(await chat.exited).toBe(0);
    expect(chat.stdout()).toBe(
      [
        'you: What time is it?',
        '[running current_time]',
        '[current_time: reading the clock]',
        '[current_time failed: error: aborted]',
        '[cancelled]',
        'you: Never mind. What did I ask before?',
        'You said "Never mind. What did I ask before?". That is prompt 2 of this chat; the one before was "What time is it?". So far 1 answer was cancelled.',
        '',
      ].join('\n'),
    );
  });

  it('SIGINT with nothing running exits with code 130', async () => {
    const chat = startChat();
    chat.say('hello');
    await chat.printed('That is the first prompt of this chat.\n');
    chat.child.kill('SIGINT');

    expect(await chat.exited).toBe(130);
    expect(chat.stdout()).toBe('you: hello\nYou said "hello". That is the first prompt of this chat.\n');
  });

  it('a second SIGINT right after the one that cancelled exits with code 130 (the prompt that waited was dropped)', async () => {
    const chat = startChat();
    chat.say('What time is it?');
    chat.say('and this one waits');
    await chat.printed('[running current_time]\n');
    chat.child.kill('SIGINT');
    await chat.printed('[cancelled; 1 waiting prompt dropped]\n');
    chat.child.kill('SIGINT');

    expect(await chat.exited).toBe(130);
    expect(chat.stdout()).not.toContain('you: and this one waits');
  });

  it('S1: with --session FILE the chat is kept in that file: the next run goes on from it', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'rx-tool-loop-chat-'));
    const file = join(folder, 'chat.jsonl');
    try {
      const first = startChat('--session', file);
      first.say('What time is it?');
      first.child.stdin.end();
      expect(await first.exited).toBe(0);
      expect(first.stdout()).toContain('The time is 2026-01-01T00:00:00Z.\n');

      const second = startChat(`--session=${file}`);
      second.say('What did I ask before?');
      second.child.stdin.end();
      expect(await second.exited).toBe(0);
      expect(second.stdout()).toBe(
        'you: What did I ask before?\nYou said "What did I ask before?". That is prompt 2 of this chat; the one before was "What time is it?".\n',
      );
      expect(readFileSync(file, 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as { message: { role: string } }).message.role)).toEqual([
        'user',
        'assistant',
        'toolResult',
        'assistant',
        'user',
        'assistant',
      ]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
