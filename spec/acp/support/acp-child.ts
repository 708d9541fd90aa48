/**
 * E2's editor: `examples/acp-agent.ts` spawned as a child process and driven with the SDK's own client side over
 * the child's real standard input and output. Every line the child writes to stdout is kept, to be read as
 * JSON-RPC; stderr is kept for what the tools say.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Written } from '../../support/written.js';
import { type ClientConnection, type RequestPermissionRequest, type RequestPermissionResponse, type SessionNotification, client, ndJsonStream } from '@agentclientprotocol/sdk';

const root = join(__dirname, '..', '..', '..');

export interface AcpChild {
  child: ChildProcessWithoutNullStreams;
  connection: ClientConnection;
  /** Every `session/update` received, in order. */
  updates: SessionNotification[];
  /** Every `session/request_permission` received, in order. */
  permissions: RequestPermissionRequest[];
  /** How the next permission requests are answered (default: allow once). */
  answer: (request: RequestPermissionRequest) => RequestPermissionResponse | Promise<RequestPermissionResponse>;
  /** The child's stdout so far, as written. */
  stdout(): string;
  stderr(): string;
  /** Resolves once stderr holds `text`; rejects after `ms`. */
  printed(text: string, ms?: number): Promise<void>;
  exited: Promise<number | NodeJS.Signals>;
}

/**
 * The agent as `ts-node examples/acp-agent.ts ARGS`, or as the README's editor configuration starts it: `npm run
 * --silent acp -- ARGS` (then in a process group of its own, so that the spec can end npm and the agent together).
 */
export function startAgent(args: readonly string[], how: 'ts-node' | 'npm' = 'ts-node'): AcpChild {
  const child =
    how === 'npm'
      ? spawn(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', '--silent', 'acp', '--', ...args], { cwd: root, detached: true })
      : spawn(process.execPath, [require.resolve('ts-node/dist/bin.js'), 'examples/acp-agent.ts', ...args], { cwd: root });
  let stdout = '';
  const stderr = new Written();
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => stderr.append(chunk));
  const exited = new Promise<number | NodeJS.Signals>((resolve) => child.on('close', (code, signal) => resolve(code ?? signal!)));
  // the SDK reads what the child wrote; every byte is kept as well, to check it is nothing but JSON-RPC
  const readable = new ReadableStream<Uint8Array>({
    start(controller) {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
        controller.enqueue(new Uint8Array(chunk));
      });
      child.stdout.on('end', () => controller.close());
    },
  });
  const writable = Writable.toWeb(child.stdin) as unknown as WritableStream<Uint8Array>;
  const agent: Omit<AcpChild, 'connection'> = {
    child,
    updates: [],
    permissions: [],
    answer: () => ({ outcome: { outcome: 'selected', optionId: 'allow_once' } }),
    stdout: () => stdout,
    stderr: () => stderr.value,
    printed: (text, ms = 10_000) =>
      stderr.until(text, { ms, failure: () => `the agent did not write ${JSON.stringify(text)} to stderr within ${ms} ms; stderr:\n${stderr.value}` }),
    exited,
  };
  const app = client({ name: 'spec-editor' })
    .onNotification('session/update', ({ params }) => void agent.updates.push(params))
    .onRequest('session/request_permission', ({ params }) => {
      agent.permissions.push(params);
      return agent.answer(params);
    });
  return Object.assign(agent, { connection: app.connect(ndJsonStream(writable, readable)) });
}

/** The pid of the agent itself, as it wrote it to stderr (under npm, not the child's own). */
export async function agentPid(agent: AcpChild): Promise<number> {
  await agent.printed('(pid ');
  return Number(/\(pid (\d+)\)/.exec(agent.stderr())![1]);
}

/** Whether a process with this pid is still there. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
