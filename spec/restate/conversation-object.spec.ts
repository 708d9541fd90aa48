/**
 * D1–D4 with the real engine: a Restate server (the `@restatedev/restate-server` binary, 127.0.0.1 only, data
 * in a temporary folder), the service endpoint in a child process (spec/restate/support/endpoint.ts, bundled
 * with esbuild) and the spec's own model server, which counts model calls; the tools log their runs to a file.
 * The server starts once for the file; every process is stopped by the spec, by its process group.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import type { AgentMessage } from '../../src/index.js';
import type { AskResult } from '../../src/restate/index.js';
import { closedPort } from '../providers/loopback-server.js';
import { ModelServer } from './support/model-server.js';
import { kill, restatePorts, startProcess, startRestate, stopAll } from './support/processes.js';

jest.setTimeout(120_000);
const SLOW_MS = 2000;

let dir = '';
let model: ModelServer;
let ports: { ingress: number; admin: number; node: number };
let endpointPort = 0;
let server: ChildProcess;
let endpoint: ChildProcess;

const ingress = (path: string) => `http://127.0.0.1:${ports.ingress}${path}`;
const toolLog = () => join(dir, 'tools.jsonl');
const approvalsFile = () => join(dir, 'approvals.jsonl');

function lines<T>(file: string): T[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as T) : [];
}
interface ToolRun { key: string; tool: string; n: string; phase: 'start' | 'end' }
const runsOf = (key: string) => lines<ToolRun>(toolLog()).filter((run) => run.key === key).map((run) => `${run.tool} ${run.n} ${run.phase}`);

async function waitFor(what: string, holds: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await holds())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

function startEndpoint(): Promise<ChildProcess> {
  const env = { PORT: String(endpointPort), MODEL_URL: model.baseURL, TOOL_LOG: toolLog(), APPROVALS: approvalsFile(), SLOW_MS: String(SLOW_MS) };
  return startProcess(process.execPath, [join(dir, 'endpoint.js')], env, join(dir, 'endpoint.log'), () => listening(endpointPort));
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<unknown> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await response.text();
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}: ${text}`);
  return text === '' ? undefined : JSON.parse(text);
}

/** Sends an `ask` (it runs on its own); its answer is `answer(id)`'s. */
async function send(key: string, prompt: string): Promise<string> {
  const sent = (await post(ingress(`/chat/${key}/ask/send`), prompt, { 'idempotency-key': `${key} ${prompt}` })) as { invocationId: string };
  return sent.invocationId;
}
/** The answer of a sent `ask`, once it has one (attach again after a server restart). */
async function answer(id: string): Promise<AskResult> {
  const response = await fetch(ingress(`/restate/invocation/${id}/attach`));
  if (!response.ok) throw new Error(`attach ${id}: HTTP ${response.status}: ${await response.text()}`);
  return (await response.json()) as AskResult;
}
const ask = async (key: string, prompt: string) => answer(await send(key, prompt));
const history = async (key: string) => (await post(ingress(`/chat/${key}/history`), null)) as AgentMessage[];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rx-tool-loop-restate-'));
  buildSync({ entryPoints: [join(__dirname, 'support/endpoint.ts')], bundle: true, platform: 'node', format: 'cjs', outfile: join(dir, 'endpoint.js'), logLevel: 'error' });
  model = await ModelServer.start();
  ports = await restatePorts();
  endpointPort = await closedPort();
  server = await startRestate(join(dir, 'restate'), ports);
  endpoint = await startEndpoint();
  await post(`http://127.0.0.1:${ports.admin}/deployments`, { uri: `http://127.0.0.1:${endpointPort}` });
});

afterAll(async () => {
  await stopAll();
  await model?.stop();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

describe('conversationObject on a real Restate server', () => {
  it('D4 (a), D2: a conversation completes through ask, keeps its history in the object, and the next ask goes on from it', async () => {
    const first = await ask('a', 'a: fast');
    expect(first.reason).toBe('stop');
    expect(first.assistant.content).toBe('done a: fast 0');
    const second = await ask('a', 'a2:');
    expect(second.assistant.content).toBe('done a2: ');
    expect((await history('a')).map((m) => `${m.role} ${m.content}`)).toEqual([
      'user a: fast',
      'assistant ',
      'toolResult fast 0',
      'assistant done a: fast 0',
      'user a2:',
      'assistant done a2: ',
    ]);
    expect(model.turnsOf('a')).toEqual([0, 1, 0]);
    expect(runsOf('a')).toEqual(['fast 0 start', 'fast 0 end']);
  });

  let uninterrupted: AgentMessage[] = [];

  it('D4 (b), D1: the endpoint SIGKILLed mid-tool and restarted: the conversation completes, no finished model call or tool runs again, the history is an uninterrupted run\'s', async () => {
    await ask('base', 'x: fast,slow');
    uninterrupted = await history('base');
    expect(model.turnsOf('base')).toEqual([0, 1, 2]);

    const id = await send('b', 'x: fast,slow');
    await waitFor('the slow tool to start', () => runsOf('b').includes('slow 1 start'));
    await sleep(SLOW_MS / 3); // the model call that asked for it has been journaled
    await kill(endpoint);
    expect(runsOf('b')).toEqual(['fast 0 start', 'fast 0 end', 'slow 1 start']);
    endpoint = await startEndpoint();
    const done = await answer(id);

    expect(done.assistant.content).toBe('done x: fast 0 + slow 1');
    expect(model.turnsOf('b')).toEqual([0, 1, 2]);
    // the unfinished slow run runs again; the finished fast one does not
    expect(runsOf('b')).toEqual(['fast 0 start', 'fast 0 end', 'slow 1 start', 'slow 1 start', 'slow 1 end']);
    expect(await history('b')).toEqual(uninterrupted);
  });

  it('D4 (c), D1: the Restate server SIGKILLed mid-tool and restarted on its data folder: the same', async () => {
    const id = await send('c', 'x: fast,slow');
    await waitFor('the slow tool to start', () => runsOf('c').includes('slow 1 start'));
    await sleep(SLOW_MS / 3);
    await kill(server);
    server = await startRestate(join(dir, 'restate'), ports);
    const done = await answer(id);

    expect(done.assistant.content).toBe('done x: fast 0 + slow 1');
    expect(model.turnsOf('c')).toEqual([0, 1, 2]);
    const runs = runsOf('c');
    expect(runs.filter((run) => run.startsWith('fast'))).toEqual(['fast 0 start', 'fast 0 end']);
    expect(runs.filter((run) => run === 'slow 1 start')).toHaveLength(2);
    expect(await history('c')).toEqual(uninterrupted);
  });

  it('D3, D4 (d): an approval waits on an awakeable whose id is in the waiting event, across an endpoint restart, and approve resolves it', async () => {
    const id = await send('d', 'd: transfer');
    await waitFor('the waiting event', () => lines<{ key: string }>(approvalsFile()).some((line) => line.key === 'd'));
    const [waiting] = lines<{ key: string; type: string; call: unknown; awakeableId: string }>(approvalsFile()).filter((line) => line.key === 'd');
    expect(waiting).toEqual({ key: 'd', type: 'approval_waiting', call: { id: 'd-0', name: 'transfer', input: { n: '0' } }, awakeableId: expect.any(String) });
    await kill(endpoint);
    endpoint = await startEndpoint();
    await sleep(300);
    expect(runsOf('d')).toEqual([]); // nothing ran while it waited

    await post(ingress('/chat/d/approve'), { id: waiting!.awakeableId, decision: true });
    const done = await answer(id);
    expect(done.assistant.content).toBe('done d: transferred 0');
    expect(runsOf('d')).toEqual(['transfer 0 start', 'transfer 0 end']);
    expect(model.turnsOf('d')).toEqual([0, 1]);
    expect(lines<{ key: string }>(approvalsFile()).filter((line) => line.key === 'd')).toHaveLength(1); // announced once
  });

  it('D3: approve with false denies the call: the model sees `denied: not approved` and the tool never runs', async () => {
    const id = await send('deny', 'n: transfer');
    await waitFor('the waiting event', () => lines<{ key: string }>(approvalsFile()).some((line) => line.key === 'deny'));
    const [waiting] = lines<{ key: string; awakeableId: string }>(approvalsFile()).filter((line) => line.key === 'deny');
    await post(ingress('/chat/deny/approve'), { id: waiting!.awakeableId, decision: false });
    expect((await answer(id)).assistant.content).toBe('done n: denied: not approved');
    expect(runsOf('deny')).toEqual([]);
    expect((await history('deny'))[2]).toMatchObject({ role: 'toolResult', content: 'denied: not approved', isError: true });
  });

  it('D2, D4 (e): two conversations in parallel keep their histories apart, and each conversation runs its prompts in order', async () => {
    const ids: string[] = [];
    for (const key of ['e1', 'e2']) for (const prompt of [`${key}p: fast,fast`, `${key}q: fast`]) ids.push(await send(key, prompt));
    const answers = await Promise.all(ids.map(answer));
    expect(answers.map((a) => a.assistant.content)).toEqual(['done e1p: fast 0 + fast 1', 'done e1q: fast 0', 'done e2p: fast 0 + fast 1', 'done e2q: fast 0']);
    for (const key of ['e1', 'e2']) {
      const messages = await history(key);
      expect(messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([`${key}p: fast,fast`, `${key}q: fast`]);
      expect(messages.every((m) => !m.content.includes(key === 'e1' ? 'e2' : 'e1'))).toBe(true);
      // the second prompt's first model call came after the first prompt's last
      expect(model.calls.filter((call) => call.conversation === key).map((call) => `${call.prompt.slice(0, 3)} ${call.turn}`)).toEqual([
        `${key}p 0`, `${key}p 1`, `${key}p 2`, `${key}q 0`, `${key}q 1`,
      ]);
    }
  });
});
