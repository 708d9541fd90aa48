/**
 * D7 on a real cluster: three `restate-server` 1.7.12 nodes on 127.0.0.1 (replication 2, a data folder each),
 * the endpoint of the D4 specs (`conversationObject('chat', …)`), conversations whose tool takes seconds, and
 * one node SIGKILLed while they run — one that leads partitions, so the failover is real. Not in `npm test`
 * (about a minute on two cores): `npm run test:cluster` runs it (jest.cluster.config.js). It prints its figures;
 * docs/scale-out.md quotes them.
 */
import { existsSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import type { AgentMessage } from '../../../src/index.js';
import type { AskResult } from '../../../src/restate/index.js';
import { Cluster, type ClusterNode } from '../support/cluster.js';
import { type Figures, measure } from '../support/measure.js';
import { Stack } from '../support/stack.js';

jest.setTimeout(600_000);

const SLOW_MS = 3000;
const CONVERSATIONS = 20;
const PROMPT = 'x: fast,slow';
/** D5's workload, on three nodes and on one: 2-turn conversations, 16 at a time, then 8-turn asks one at a time. */
const WORKLOAD = { conversations: 200, concurrency: 16, samples: 5, turns: 8 };

interface ToolRun { key: string; tool: string; n: string; phase: 'start' | 'end'; at: number }

let cluster: Cluster;
const figures: Record<string, unknown> = {};

function runs(): ToolRun[] {
  return existsSync(cluster.toolLog) ? readFileSync(cluster.toolLog, 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as ToolRun) : [];
}
const runsOf = (key: string) => runs().filter((run) => run.key === key).map((run) => `${run.tool} ${run.n} ${run.phase}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function waitFor(what: string, holds: () => boolean): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!holds()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}
const history = (key: string) => cluster.call<AgentMessage[]>('chat', key, 'history', null);
const perSecond = (f: Figures) => `${f.conversationsPerSecond.toFixed(1)} conversations/s, ${f.journalingMsPerTurn.toFixed(2)} ms journaling per turn`;

beforeAll(async () => {
  const started = Date.now();
  cluster = await Cluster.start(SLOW_MS);
  figures.startMs = Date.now() - started;
});

afterAll(async () => {
  await cluster?.stop();
  console.log(`D7 figures:\n${Object.entries(figures).map(([name, value]) => `${name}: ${JSON.stringify(value)}`).join('\n')}`);
});

describe('D7: a three-node Restate cluster on 127.0.0.1', () => {
  it('D7: the three nodes run, each with its own data folder, every port they listen on bound to 127.0.0.1, the metadata cluster of all three, and every partition led', async () => {
    const sockets = new Map(
      ['/proc/net/tcp', '/proc/net/tcp6']
        .flatMap((file) => readFileSync(file, 'utf8').split('\n').slice(1))
        .map((line) => line.trim().split(/\s+/))
        .filter((fields) => fields[3] === '0A') // LISTEN
        .map((fields) => [fields[9]!, fields[1]!.split(':')[0]!] as const), // inode → address
    );
    for (const node of cluster.nodes) {
      const inodes = socketInodes(node.process.pid!);
      const addresses = inodes.map((inode) => sockets.get(inode)).filter((address) => address !== undefined);
      expect(addresses.length).toBeGreaterThanOrEqual(3); // fabric, admin, ingress
      expect(new Set(addresses)).toEqual(new Set(['0100007F']));
      expect(existsSync(node.dir)).toBe(true);
    }
    const health = (await (await fetch(`http://127.0.0.1:${cluster.nodes[0]!.ports.admin}/cluster-health`)).json()) as { metadata_cluster_health: { members: number[] } };
    expect([...health.metadata_cluster_health.members].sort()).toEqual([1, 2, 3]);
    await waitFor('a leader for each of the 4 partitions', () => cluster.leaders().size === 4);
  });

  it(`D7: ${WORKLOAD.conversations} conversations through the three ingresses in turn: each completes; conversations per second on three nodes`, async () => {
    await measure(cluster, { ...WORKLOAD, conversations: 32, samples: 1, tag: 'warm3' }); // as the one node below: measured warm
    const three = await measure(cluster, { ...WORKLOAD, tag: 'three' });
    figures.threeNodes = three;
    console.log(`three nodes: ${perSecond(three)}`);
    expect(three.conversationsPerSecond).toBeGreaterThan(0);
    for (const n of [0, WORKLOAD.conversations - 1]) expect((await history(`three-tp-${n}`)).map((m) => m.content)).toEqual([`t${n}: fast`, '', 'fast 0', `done t${n}: fast 0`]);
  });

  it('D7, D2, D3: two prompts to one conversation through two nodes run one after the other; an approval asked through one node is resolved through another', async () => {
    const first = cluster.ask<AskResult>('chat', 'q', 'ask', 'q1: fast,fast', 'q-1', 0);
    await waitFor('the first prompt to reach the model', () => cluster.model.turnsOf('q').length > 0);
    const second = cluster.ask<AskResult>('chat', 'q', 'ask', 'q2: fast', 'q-2', 1);
    expect((await Promise.all([first, second])).map((asked) => asked.answer.assistant.content)).toEqual(['done q1: fast 0 + fast 1', 'done q2: fast 0']);
    expect(cluster.model.calls.filter((call) => call.conversation === 'q').map((call) => `${call.prompt.slice(0, 2)} ${call.turn}`)).toEqual(['q1 0', 'q1 1', 'q1 2', 'q2 0', 'q2 1']);
    expect((await history('q')).filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['q1: fast,fast', 'q2: fast']);

    const asked = cluster.ask<AskResult>('chat', 'ap', 'ask', 'ap: transfer', 'ap-1', 0);
    await waitFor('the waiting approval', () => existsSync(cluster.approvals) && readFileSync(cluster.approvals, 'utf8').includes('"key":"ap"'));
    const { awakeableId } = JSON.parse(readFileSync(cluster.approvals, 'utf8').split('\n').find((line) => line.includes('"key":"ap"'))!) as { awakeableId: string };
    await cluster.ask('chat', 'ap', 'approve', { id: awakeableId, decision: true }, 'ap-approve', 2);
    expect((await asked).answer.assistant.content).toBe('done ap: transferred 0');
    expect(runsOf('ap')).toEqual(['transfer 0 start', 'transfer 0 end']);
  });

  it(`D7, D1: ${CONVERSATIONS} conversations whose tool takes ${SLOW_MS / 1000} s; a node that leads partitions SIGKILLed mid-tool: every one completes on the other two with an uninterrupted run's history, no finished model call or tool runs again`, async () => {
    // the reference: the same prompt, nothing killed
    const reference = await cluster.ask<AskResult>('chat', 'ref', 'ask', PROMPT, 'ref-1');
    expect(reference.answer.assistant.content).toBe('done x: fast 0 + slow 1');
    const uninterrupted = await history('ref');
    expect(runsOf('ref')).toEqual(['fast 0 start', 'fast 0 end', 'slow 1 start', 'slow 1 end']);

    const keys = Array.from({ length: CONVERSATIONS }, (_, n) => `c${n}`);
    // each client starts at a node of its own, and moves on to the next when that one fails it
    const asks = keys.map((key, n) => cluster.ask<AskResult>('chat', key, 'ask', PROMPT, `${key}-1`, n % 3));
    await waitFor('every slow tool to start', () => keys.every((key) => runsOf(key).includes('slow 1 start')));
    await sleep(SLOW_MS / 3); // the model calls that asked for them are journaled

    const before = cluster.leaders();
    const led = (node: ClusterNode) => [...before].filter(([, leader]) => leader === node.name).map(([partition]) => partition);
    const victim = [...cluster.nodes].sort((a, b) => led(b).length - led(a).length)[0]!;
    const partitions = led(victim);
    expect(partitions.length).toBeGreaterThan(0);
    const killedAt = await cluster.kill(victim);
    const done = await Promise.all(asks);
    const finishedAt = Date.now();

    // every conversation completed, on the two nodes left, as the uninterrupted run
    expect(done.map((asked) => asked.answer.assistant.content)).toEqual(keys.map(() => 'done x: fast 0 + slow 1'));
    for (const key of keys) expect(await history(key)).toEqual(uninterrupted);
    // no finished step again. The model calls and the fast tool finished before the kill: once each. A step in
    // flight when its leader went away (the slow tool; the last model call, if the partition moved again while it
    // ran) may run again, but only before its result was journaled: no step starts again after its completion is
    // in the journal (a first start is compared with nothing: Restate's clock and ours differ by a millisecond)
    const late: string[] = [];
    for (const key of keys) {
      expect(cluster.model.turnsOf(key).filter((turn) => turn < 2)).toEqual([0, 1]);
      expect(runsOf(key).filter((run) => run.startsWith('fast'))).toEqual(['fast 0 start', 'fast 0 end']);
      const journaled = await cluster.journaled(key);
      expect([...journaled.keys()]).toEqual(['model call 1', 'tool fast x-0', 'model call 2', 'tool slow x-1', 'model call 3']);
      const calls = cluster.model.calls.filter((call) => call.conversation === key).map((call) => ({ step: `model call ${call.turn + 1}`, at: call.at }));
      const starts = runs().filter((run) => run.key === key && run.phase === 'start').map((run) => ({ step: `tool ${run.tool} x-${run.n}`, at: run.at }));
      const again = [...calls, ...starts].filter((start, index, all) => all.findIndex((other) => other.step === start.step) !== index);
      late.push(...again.filter((start) => start.at > journaled.get(start.step)!).map((start) => `${key}: ${start.step} started ${start.at - journaled.get(start.step)!} ms after it was journaled`));
    }
    expect(late).toEqual([]);
    const slowStarts = (key: string) => runs().filter((run) => run.key === key && run.tool === 'slow' && run.phase === 'start');
    // the failover is real: conversations of the killed node's partitions started their slow tool again elsewhere
    const restarted = runs().filter((run) => keys.includes(run.key) && run.tool === 'slow' && run.phase === 'start' && run.at > killedAt);
    expect(restarted.length).toBeGreaterThan(0);
    // Restate's own view: each partition the killed node led has a new leader among the others
    const after = cluster.leaderships().filter((lead) => lead.at > killedAt && lead.node !== victim.name);
    for (const partition of partitions) expect(after.map((lead) => lead.partition)).toContain(partition);

    const firstProgress = Math.min(...restarted.map((run) => run.at)) - killedAt;
    const newLeaders = partitions.map((partition) => after.find((lead) => lead.partition === partition)!.at - killedAt);
    figures.failover = {
      killed: victim.name,
      itLed: partitions,
      interruptedConversations: new Set(restarted.map((run) => run.key)).size,
      msToNewLeader: newLeaders,
      msToFirstProgress: firstProgress,
      msToLastAnswer: finishedAt - killedAt,
      lastModelCallsAgain: keys.filter((key) => cluster.model.turnsOf(key).filter((turn) => turn === 2).length > 1).length,
      slowStartsAfterKill: keys.map((key) => slowStarts(key).filter((run) => run.at > killedAt).map((run) => run.at - killedAt)).filter((starts) => starts.length > 0),
      leadershipsAfterKill: after.map((lead) => `P${lead.partition} ${lead.node} +${lead.at - killedAt} ms`),
      clientRetries: done.reduce((sum, asked) => sum + asked.failures.length, 0),
      retryReasons: [...new Set(done.flatMap((asked) => asked.failures.map((why) => why.replace(/^n\d: https?:\/\/[^:]+:\d+\S*: /, '').slice(0, 60))))],
    };
    console.log(`failover: ${JSON.stringify(figures.failover)}`);
  });

  it('D7: the same workload on the two nodes left after the kill', async () => {
    const two = await measure(cluster, { ...WORKLOAD, tag: 'two' });
    figures.twoNodesAfterKill = two;
    console.log(`two nodes (after the kill): ${perSecond(two)}`);
    expect(two.conversationsPerSecond).toBeGreaterThan(0);
  });

  it('D7: every process the cluster started is stopped by its pid, and none is left', async () => {
    const pids = cluster.pids;
    expect(pids).toHaveLength(4); // three nodes, one endpoint
      await cluster.stop();
    expect(pids.filter(running)).toEqual([]);
  });

  it('D7: the same workload on one node alone (the specs\' one-node stack, the cluster stopped), for comparison; its processes stopped too', async () => {
    const stack = await Stack.start(0);
    const pids = [stack.server.pid!, stack.endpoint.pid!];
    try {
      await measure(stack, { ...WORKLOAD, conversations: 32, samples: 1, tag: 'warm1' });
      const one = await measure(stack, { ...WORKLOAD, tag: 'one' });
      figures.oneNode = one;
      console.log(`one node: ${perSecond(one)}`);
      expect(one.conversationsPerSecond).toBeGreaterThan(0);
    } finally {
      await stack.stop();
    }
    expect(pids.filter(running)).toEqual([]);
  });
});

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The inodes of the sockets a process holds (its /proc/PID/fd links). */
function socketInodes(pid: number): string[] {
  return readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      return match ? [match[1]!] : [];
    } catch {
      return [];
    }
  });
}
