/**
 * D1–D6 with the real engine, as one suite that each SDK's spec file runs (D6: the oldest SDK the peer range
 * admits, and the newest 1.x on Node 22): a Restate server (the `@restatedev/restate-server` binary, 127.0.0.1
 * only, data in a temporary folder), the service endpoint in a child process (endpoint.ts, bundled with esbuild
 * with the SDK under test) and the spec's own model server, which counts model calls; the tools log their runs
 * to a file, so that every spec counts the starts of each tool. The server starts once for the file; every
 * process is stopped by the spec, by its process group.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentMessage } from '../../../src/index.js';
import type { AskResult } from '../../../src/restate/index.js';
import { journalSize } from './journal-size.js';
import { measure } from './measure.js';
import { restateBinary } from './processes.js';
import type { Sdk } from './sdks.js';
import { Stack } from './stack.js';

export function conversationSuite(sdk: Sdk): void {
  jest.setTimeout(120_000);
  const SLOW_MS = 2000;

  let stack: Stack;

  function lines<T>(file: string): T[] {
    return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as T) : [];
  }
  interface ToolRun { key: string; tool: string; n: string; phase: 'start' | 'end' }
  const runsOf = (key: string) => lines<ToolRun>(stack.toolLog).filter((run) => run.key === key).map((run) => `${run.tool} ${run.n} ${run.phase}`);
  const waitingOf = (key: string) => lines<{ key: string; type: string; call: unknown; awakeableId: string }>(stack.approvals).filter((line) => line.key === key);

  async function waitFor(what: string, holds: () => boolean): Promise<void> {
    const deadline = Date.now() + 60_000;
    while (!holds()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  const send = (key: string, prompt: string) => stack.send(key, prompt);
  const answer = (id: string) => stack.answer<AskResult>(id);
  const ask = async (key: string, prompt: string) => answer(await send(key, prompt));
  const history = (key: string) => stack.call<AgentMessage[]>('chat', key, 'history', null);
  const approve = (key: string, id: string, decision: unknown) => stack.call('chat', key, 'approve', { id, decision });

  beforeAll(async () => {
    stack = await Stack.start(SLOW_MS, sdk);
  });

  afterAll(async () => {
    await stack?.stop();
  });

  describe(`conversationObject on a real Restate server, SDK ${sdk.version} (${sdk.label === 'oldest' ? 'the oldest the peer range admits' : 'the newest 1.x, on Node 22'})`, () => {
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
      expect(stack.model.turnsOf('a')).toEqual([0, 1, 0]);
      expect(runsOf('a')).toEqual(['fast 0 start', 'fast 0 end']);
    });

    let uninterrupted: AgentMessage[] = [];

    it('D1, D2 (the journal itself): an ask of four turns journals one step per model call and per tool call, each reply with its text deltas joined, and writes the state once, at the end', async () => {
      const id = await send('j', 'j: fast,fast,fast');
      expect((await answer(id)).assistant.content).toBe('done j: fast 0 + fast 1 + fast 2');
      const query = `SELECT index, entry_type, name, entry_json FROM sys_journal WHERE id = '${id}' ORDER BY index`;
      const { rows } = (await stack.post(`http://127.0.0.1:${stack.ports.admin}/query`, { query }, { accept: 'application/json' })) as {
        rows: { entry_type: string; name: string | null; entry_json: string }[];
      };
      const steps = rows.filter((row) => row.entry_type === 'Command: Run' || row.entry_type === 'Command: SetState').map((row) => row.name || row.entry_type);
      expect(steps).toEqual(['model call 1', 'tool fast j-0', 'model call 2', 'tool fast j-1', 'model call 3', 'tool fast j-2', 'model call 4', 'Command: SetState']);
      // what the model calls journaled: the Run completions whose value has events
      const replies = rows
        .filter((row) => row.entry_type === 'Notification: Run')
        .map((row) => (JSON.parse(row.entry_json) as { Notification: { Completion: { Run: { result: { Success?: number[] } } } } }).Notification.Completion.Run.result.Success)
        .map((bytes) => JSON.parse(Buffer.from(bytes ?? []).toString('utf8')) as { events?: { type: string; text?: string }[] })
        .filter((value) => value.events !== undefined);
      expect(replies).toHaveLength(4);
      expect(replies[3]!.events!.filter((event) => event.type === 'text_delta')).toEqual([{ type: 'text_delta', text: 'done j: fast 0 + fast 1 + fast 2' }]);
      expect(stack.model.turnsOf('j')).toEqual([0, 1, 2, 3]);
    });

    it('D4 (b), D1: the endpoint SIGKILLed mid-tool and restarted: the conversation completes, no finished model call or tool runs again, the history is an uninterrupted run\'s', async () => {
      await ask('base', 'x: fast,slow');
      uninterrupted = await history('base');
      expect(stack.model.turnsOf('base')).toEqual([0, 1, 2]);
      expect(runsOf('base')).toEqual(['fast 0 start', 'fast 0 end', 'slow 1 start', 'slow 1 end']); // nothing crashed: each ran once (D6)

      const id = await send('b', 'x: fast,slow');
      await waitFor('the slow tool to start', () => runsOf('b').includes('slow 1 start'));
      await sleep(SLOW_MS / 3); // the model call that asked for it has been journaled
      await stack.restartEndpoint();
      expect(runsOf('b').slice(0, 3)).toEqual(['fast 0 start', 'fast 0 end', 'slow 1 start']);
      const done = await answer(id);

      expect(done.assistant.content).toBe('done x: fast 0 + slow 1');
      expect(stack.model.turnsOf('b')).toEqual([0, 1, 2]);
      // the unfinished slow run runs again; the finished fast one does not
      expect(runsOf('b')).toEqual(['fast 0 start', 'fast 0 end', 'slow 1 start', 'slow 1 start', 'slow 1 end']);
      expect(await history('b')).toEqual(uninterrupted);
    });

    it('D4 (c), D1: the Restate server SIGKILLed mid-tool and restarted on its data folder: the same', async () => {
      const id = await send('c', 'x: fast,slow');
      await waitFor('the slow tool to start', () => runsOf('c').includes('slow 1 start'));
      await sleep(SLOW_MS / 3);
      await stack.restartServer();
      const done = await answer(id);

      expect(done.assistant.content).toBe('done x: fast 0 + slow 1');
      expect(stack.model.turnsOf('c')).toEqual([0, 1, 2]);
      const runs = runsOf('c');
      expect(runs.filter((run) => run.startsWith('fast'))).toEqual(['fast 0 start', 'fast 0 end']);
      expect(runs.filter((run) => run === 'slow 1 start')).toHaveLength(2);
      expect(await history('c')).toEqual(uninterrupted);
    });

    it('D6: a client whose ask died with the server gets its answer by the idempotency key it sent — Restate\'s attach, or the same request again — and the ask ran once', async () => {
      // the key goes into attach's path as it is: one that needs no escaping (with `ask i 1`, attach answered 404 here)
      const request = stack.post(stack.ingress('/chat/i/ask'), 'i: slow', { 'idempotency-key': 'ask-i-1' }).then(
        () => 'answered',
        (error: unknown) => error,
      );
      await waitFor('the slow tool to start', () => runsOf('i').includes('slow 0 start'));
      await sleep(SLOW_MS / 3); // the model call that asked for it has been journaled
      await stack.restartServer();
      expect(await request).toMatchObject({ name: 'TypeError', message: expect.stringMatching(/^(fetch failed|terminated)$/) }); // it died with the server

      const attached = await stack.answerByKey<AskResult>('chat', 'i', 'ask', 'ask-i-1');
      expect(attached.assistant.content).toBe('done i: slow 0');
      expect(await stack.post(stack.ingress('/chat/i/ask'), 'i: slow', { 'idempotency-key': 'ask-i-1' })).toEqual(attached);
      expect((await history('i')).map((m) => `${m.role} ${m.content}`)).toEqual(['user i: slow', 'assistant ', 'toolResult slow 0', 'assistant done i: slow 0']);
      expect(stack.model.turnsOf('i')).toEqual([0, 1]);
      // the slow run the crash cut off runs again, as in D4 (c); the ask itself ran once
      expect(runsOf('i').filter((run) => run === 'slow 0 start')).toHaveLength(2);
    });

    it('D3, D4 (d): an approval waits on an awakeable whose id is in the waiting event, across an endpoint restart, and approve resolves it', async () => {
      const id = await send('d', 'd: transfer');
      await waitFor('the waiting event', () => waitingOf('d').length > 0);
      const [waiting] = waitingOf('d');
      expect(waiting).toEqual({ key: 'd', type: 'approval_waiting', call: { id: 'd-0', name: 'transfer', input: { n: '0' } }, awakeableId: expect.any(String) });
      await stack.restartEndpoint();
      await sleep(300);
      expect(runsOf('d')).toEqual([]); // nothing ran while it waited

      await approve('d', waiting!.awakeableId, true);
      const done = await answer(id);
      expect(done.assistant.content).toBe('done d: transferred 0');
      expect(runsOf('d')).toEqual(['transfer 0 start', 'transfer 0 end']);
      expect(stack.model.turnsOf('d')).toEqual([0, 1]);
      expect(waitingOf('d')).toHaveLength(1); // announced once
    });

    it('D3: approve with false denies the call: the model sees `denied: not approved` and the tool never runs', async () => {
      const id = await send('deny', 'n: transfer');
      await waitFor('the waiting event', () => waitingOf('deny').length > 0);
      await approve('deny', waitingOf('deny')[0]!.awakeableId, false);
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
        expect(stack.model.calls.filter((call) => call.conversation === key).map((call) => `${call.prompt.slice(0, 3)} ${call.turn}`)).toEqual([
          `${key}p 0`, `${key}p 1`, `${key}p 2`, `${key}q 0`, `${key}q 1`,
        ]);
      }
    });

    it('D4, D6: the server is the binary of the pinned @restatedev/restate-server, and its ingress, admin and node ports listen on 127.0.0.1 only', () => {
      expect(execFileSync(restateBinary(), ['--version'], { encoding: 'utf8' })).toContain('restate-server 1.7.12');
      const listening = ['/proc/net/tcp', '/proc/net/tcp6']
        .flatMap((file) => readFileSync(file, 'utf8').split('\n').slice(1))
        .map((line) => line.trim().split(/\s+/))
        .filter((fields) => fields[3] === '0A') // LISTEN
        .map((fields) => fields[1]!.split(':'))
        .map(([address, port]) => ({ address: address!, port: parseInt(port!, 16) }));
      for (const port of Object.values(stack.ports)) {
        expect(listening.filter((socket) => socket.port === port).map((socket) => socket.address)).toEqual(['0100007F']);
      }
    });

    it('D5: the scale-out measurement runs through this node: every conversation completes, and it reports conversations per second and the journaling cost per turn', async () => {
      const figures = await measure(stack, { conversations: 20, concurrency: 4, samples: 2, turns: 4, tag: 'd5' });
      expect(figures.conversationsPerSecond).toBeGreaterThan(0);
      expect(Number.isFinite(figures.journalingMsPerTurn)).toBe(true);
      for (const n of [0, 19]) expect((await history(`d5-tp-${n}`)).map((m) => m.content)).toEqual([`t${n}: fast`, '', 'fast 0', `done t${n}: fast 0`]);
    });

    it('D9, D1: journal bytes per turn, text merged against one entry per delta: merged, a turn journals the same entries however many deltas its reply streams, and fewer bytes than one entry per delta', async () => {
      const [short, long] = [await journalSize(stack, { words: 10, turns: 2, samples: 0, tag: 'd9s' }), await journalSize(stack, { words: 40, turns: 2, samples: 1, tag: 'd9l' })];
      expect(long.merged.entriesPerTurn).toBe(short.merged.entriesPerTurn);
      // one entry (at least) for each of the 30 deltas more a turn
      expect(long.perDelta.entriesPerTurn - short.perDelta.entriesPerTurn).toBeGreaterThanOrEqual(30);
      for (const figures of [short, long]) expect(figures.merged.bytesPerTurn).toBeLessThan(figures.perDelta.bytesPerTurn);
      for (const way of [long.merged, long.perDelta]) expect(Number.isFinite(way.journalingMsPerTurn)).toBe(true);
      // the answers are the same either way
      expect((await history('d9l-chat-size')).map((m) => m.content)).toEqual((await stack.call<AgentMessage[]>('perDelta', 'd9l-perDelta-size', 'history', null)).map((m) => m.content));
    });

    it('D6, D1: two tools of one turn run at once, each started once: the one that finished first does not run again while the other runs on', async () => {
      const done = await ask('two', 'two: slow+fast');
      expect(done.assistant.content).toMatch(/^done two: (slow 0\.0 \+ fast 0\.1|fast 0\.1 \+ slow 0\.0)$/);
      const runs = runsOf('two');
      expect([...runs].sort()).toEqual(['fast 0.1 end', 'fast 0.1 start', 'slow 0.0 end', 'slow 0.0 start']);
      expect(runs.indexOf('fast 0.1 start')).toBeLessThan(runs.indexOf('slow 0.0 end')); // at once, not one after the other
      expect(stack.model.turnsOf('two')).toEqual([0, 1]);
    });

    // last: it reads what the endpoint logged through every spec above
    it(`D6: the endpoint ran SDK ${sdk.version} (${sdk.label === 'oldest' ? 'the oldest the peer range admits' : 'the newest 1.x, on Node 22'}) all along, no wait of the SDK failed, and the peer range is the oldest to the newest SDK the specs ran`, () => {
      const node = execFileSync(sdk.node, ['--version'], { encoding: 'utf8' }).trim();
      if (sdk.label === 'newest') expect(node).toMatch(/^v22\./);
      const log = readFileSync(join(stack.dir, 'endpoint.log'), 'utf8');
      const started = log.split('\n').filter((line) => line.startsWith('ready:'));
      expect(started.length).toBeGreaterThanOrEqual(3); // the first start and two restarts (D4 b, d)
      expect(new Set(started)).toEqual(new Set([`ready: @restatedev/restate-sdk ${sdk.version} on Node ${node}`]));
      // what 1.17.2 logged on every ask before the steps were waited on one wait at a time, and 1.14+ on Node 20
      expect(log).not.toContain('awaitNext already pending');
      expect(log).not.toContain('withResolvers');
      const manifest = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as Record<string, Record<string, string>>;
      const [oldest, newest] = [manifest.devDependencies!['@restatedev/restate-sdk'], manifest.devDependencies!['restate-sdk-newest']];
      expect(sdk.label === 'oldest' ? oldest : newest).toBe(sdk.label === 'oldest' ? sdk.version : `npm:@restatedev/restate-sdk@${sdk.version}`);
      expect(manifest.peerDependencies!['@restatedev/restate-sdk']).toBe(`>=${oldest} <=${newest!.split('@').pop()}`);
      expect(manifest.peerDependenciesMeta!['@restatedev/restate-sdk']).toEqual({ optional: true });
      // Node 22 is the endpoint's alone: linked into node_modules/.bin, it would run every npm script and npx
      expect(existsSync(join(__dirname, '..', '..', '..', 'node_modules', '.bin', 'node'))).toBe(false);
    });
  });
}
