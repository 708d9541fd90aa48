import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closedPort } from '../../providers/loopback-server.js';
import { ModelServer } from './model-server.js';
import { answers, kill, restateBinary, restatePorts, startProcess, stopAll } from './processes.js';
import { SDKS, type Sdk } from './sdks.js';
import { bundleEndpoint, post, startEndpoint } from './stack.js';

/** One node of the cluster: its name (`n1`…), ports, data folder and process. */
export interface ClusterNode {
  name: string;
  ports: { ingress: number; admin: number; node: number };
  dir: string;
  process: ChildProcess;
}

/** A partition's leader as a node's own log announced it, and when. */
export interface Leadership {
  partition: number;
  node: string;
  at: number;
}

/** What a client's `ask` went through: its answer, and the ingresses that failed it before one answered. */
export interface Asked<T> {
  answer: T;
  failures: string[];
}

/**
 * D7: the configuration of one node of a three-node cluster on 127.0.0.1 — every port it opens set to loopback
 * (fabric, admin, ingress; the metadata server speaks on the fabric port), one data folder, replication 2 of the
 * log and of each partition, the replicated metadata server on every node, and only `n1` provisions the cluster.
 */
function configuration(node: Omit<ClusterNode, 'process'>, all: Omit<ClusterNode, 'process'>[]): string {
  const fabric = (n: Omit<ClusterNode, 'process'>) => `http://127.0.0.1:${n.ports.node}/`;
  return [
    `node-name = "${node.name}"`,
    'cluster-name = "rx-tool-loop-d7"',
    `base-dir = "${node.dir}"`,
    `bind-address = "127.0.0.1:${node.ports.node}"`,
    `advertised-address = "${fabric(node)}"`,
    `auto-provision = ${node.name === 'n1'}`,
    'default-replication = 2',
    'default-num-partitions = 4',
    // three nodes share the machine: a quarter of the default memory budget each
    'rocksdb-total-memory-size = "512 MiB"',
    'disable-telemetry = true',
    'listen-mode = "tcp"',
    '[metadata-client]',
    `addresses = [${all.map((n) => `"${fabric(n)}"`).join(', ')}]`,
    '[admin]',
    `bind-address = "127.0.0.1:${node.ports.admin}"`,
    '[ingress]',
    `bind-address = "127.0.0.1:${node.ports.ingress}"`,
    '',
  ].join('\n');
}

/**
 * D7: three Restate 1.7 nodes on 127.0.0.1 (one data folder each, replication 2), the endpoint registered
 * once through `n1`'s admin API, and the specs' model server. Each node logs JSON, so that the spec reads from
 * the nodes' own words which partitions each leads. `stop()` ends every process by its process group.
 */
export class Cluster {
  readonly nodes: ClusterNode[] = [];
  endpoint!: ChildProcess;

  private constructor(
    readonly dir: string,
    readonly model: ModelServer,
    readonly endpointPort: number,
  ) {}

  static async start(slowMs: number, sdk: Sdk = SDKS.oldest): Promise<Cluster> {
    const dir = mkdtempSync(join(tmpdir(), 'rx-tool-loop-cluster-'));
    bundleEndpoint(dir, sdk);
    const cluster = new Cluster(dir, await ModelServer.start(), await closedPort());
    try {
      const planned = [];
      for (const name of ['n1', 'n2', 'n3']) planned.push({ name, ports: await restatePorts(), dir: join(dir, name) });
      for (const node of planned) writeFileSync(`${node.dir}.toml`, configuration(node, planned));
      // together: n2 and n3 wait for the metadata cluster that n1 provisions, n1 for a second node to replicate to
      const started = await Promise.all(planned.map((node) => cluster.startNode(node)));
      cluster.nodes.push(...planned.map((node, index) => ({ ...node, process: started[index]! })));
      cluster.endpoint = await startEndpoint(dir, sdk, cluster.endpointPort, cluster.model, slowMs);
      await post(`http://127.0.0.1:${cluster.nodes[0]!.ports.admin}/deployments`, { uri: `http://127.0.0.1:${cluster.endpointPort}` });
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  private startNode(node: Omit<ClusterNode, 'process'>): Promise<ChildProcess> {
    const env = {
      DO_NOT_TRACK: '1',
      // as the one-node specs: invocations retried soon after their endpoint or their leader comes back
      RESTATE_DEFAULT_RETRY_POLICY__INITIAL_INTERVAL: '100ms',
      RESTATE_DEFAULT_RETRY_POLICY__MAX_INTERVAL: '500ms',
    };
    const args = ['--config-file', `${node.dir}.toml`, '--no-logo', '--log-format', 'json'];
    const ready = async () =>
      (await answers(`http://127.0.0.1:${node.ports.admin}/health`)) && (await answers(`http://127.0.0.1:${node.ports.ingress}/restate/health`));
    return startProcess(restateBinary(), args, env, `${node.dir}.log`, ready);
  }

  get toolLog(): string {
    return join(this.dir, 'tools.jsonl');
  }
  get approvals(): string {
    return join(this.dir, 'approvals.jsonl');
  }
  ingress(node: ClusterNode, path: string): string {
    return `http://127.0.0.1:${node.ports.ingress}${path}`;
  }
  get alive(): ClusterNode[] {
    return this.nodes.filter((node) => node.process.exitCode === null && node.process.signalCode === null);
  }

  /**
   * A call as a client of a cluster makes it: to one node's ingress (`first`, counted among the live ones), with
   * an idempotency key; when that node does not answer (refused, cut off, or a 5xx while partitions move), the same
   * request with the same key to the next node — Restate runs it once and answers every copy with its result.
   */
  async ask<T>(object: string, key: string, handler: string, body: unknown, idempotencyKey: string, first = 0): Promise<Asked<T>> {
    const failures: string[] = [];
    for (let attempt = 0; ; attempt++) {
      const nodes = this.alive;
      const node = nodes[(first + attempt) % nodes.length]!;
      try {
        return { answer: (await post(this.ingress(node, `/${object}/${key}/${handler}`), body, { 'idempotency-key': idempotencyKey })) as T, failures };
      } catch (error) {
        const why = (error as Error).message;
        // a 4xx is the request's own fault: no other node answers it otherwise
        if (/HTTP 4\d\d/.test(why) || attempt === 60) throw error;
        failures.push(`${node.name}: ${why}`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  }
  /** A call without a key (what `measure` and `history` make), through the nodes in turn. */
  private turn = 0;
  async call<T>(object: string, key: string, handler: string, body: unknown): Promise<T> {
    const nodes = this.alive;
    const node = nodes[this.turn++ % nodes.length]!;
    return (await post(this.ingress(node, `/${object}/${key}/${handler}`), body)) as T;
  }

  /**
   * When each journaled step of `object`'s `key` was journaled, by its name (`model call 1`, `tool fast x-0`, …):
   * the time Restate appended the step's completion (`sys_journal`, through a live node's admin API; a `Command:
   * Run` and its `Notification: Run` share a completion id).
   */
  async journaled(key: string, object = 'chat'): Promise<Map<string, number>> {
    const query =
      'SELECT j.entry_type, j.name, j.appended_at, j.entry_lite_json FROM sys_journal j JOIN sys_invocation_status s ON j.id = s.id ' +
      `WHERE s.target_service_name = '${object}' AND s.target_service_key = '${key}' ORDER BY j.index`;
    const { rows } = (await post(`http://127.0.0.1:${this.alive[0]!.ports.admin}/query`, { query }, { accept: 'application/json' })) as {
      rows: { entry_type: string; name: string | null; appended_at: string; entry_lite_json: string }[];
    };
    const names = new Map<number, string>();
    const steps = new Map<string, number>();
    for (const row of rows) {
      const entry = JSON.parse(row.entry_lite_json) as { Command?: { Run?: { completion_id: number } }; Notification?: { id?: { CompletionId?: number } } };
      if (row.entry_type === 'Command: Run') names.set(entry.Command!.Run!.completion_id, row.name ?? '');
      const completed = row.entry_type === 'Notification: Run' ? names.get(entry.Notification!.id!.CompletionId!) : undefined;
      if (completed !== undefined) steps.set(completed, Date.parse(row.appended_at));
    }
    return steps;
  }

  /** Every "became Leader" a node's log announces, in time order. */
  leaderships(): Leadership[] {
    return this.nodes
      .flatMap((node) => {
        const log = `${node.dir}.log`;
        if (!existsSync(log)) return [];
        return readFileSync(log, 'utf8')
          .split('\n')
          .filter((line) => line.includes('became Leader'))
          .map((line) => JSON.parse(line) as { timestamp: string; fields: { partition_id: string } })
          .map((entry) => ({ partition: Number(entry.fields.partition_id), node: node.name, at: Date.parse(entry.timestamp) }));
      })
      .sort((a, b) => a.at - b.at);
  }
  /** Each partition's leader as the logs last said. */
  leaders(): Map<number, string> {
    return new Map(this.leaderships().map((lead) => [lead.partition, lead.node]));
  }

  /** SIGKILLs `node`'s process group; resolves the moment of the kill, once the process has exited. */
  async kill(node: ClusterNode): Promise<number> {
    const at = Date.now();
    await kill(node.process);
    return at;
  }

  /** The ids of every process this cluster started (nodes and endpoint). */
  get pids(): number[] {
    return [...this.nodes.map((node) => node.process.pid!), this.endpoint?.pid].filter((pid): pid is number => pid !== undefined);
  }

  async stop(): Promise<void> {
    await stopAll();
    await this.model.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
