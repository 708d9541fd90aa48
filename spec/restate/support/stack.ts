import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { buildSync } from 'esbuild';
import { closedPort } from '../../providers/loopback-server.js';
import { ModelServer } from './model-server.js';
import { kill, restatePorts, startProcess, startRestate, stopAll } from './processes.js';
import { SDKS, type Sdk } from './sdks.js';

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/** D4, D7: the endpoint (endpoint.ts) bundled into `dir` with esbuild, with the SDK under test. */
export function bundleEndpoint(dir: string, sdk: Sdk): void {
  // the library imports '@restatedev/restate-sdk' as users do; the bundle takes it from the SDK under test (its
  // folder: esbuild resolves an alias's package name from the working directory, whichever that is)
  const folder = dirname(createRequire(__filename).resolve(`${sdk.module}/package.json`));
  const alias: Record<string, string> = sdk.module === '@restatedev/restate-sdk' ? {} : { '@restatedev/restate-sdk': folder };
  buildSync({ entryPoints: [join(__dirname, 'endpoint.ts')], bundle: true, platform: 'node', format: 'cjs', outfile: join(dir, 'endpoint.js'), logLevel: 'error', alias });
}

/** D4, D7: the bundled endpoint of `dir` on 127.0.0.1:`port`, its tools logging to `dir`/tools.jsonl. */
export function startEndpoint(dir: string, sdk: Sdk, port: number, model: ModelServer, slowMs: number): Promise<ChildProcess> {
  const env = { PORT: String(port), MODEL_URL: model.baseURL, TOOL_LOG: join(dir, 'tools.jsonl'), APPROVALS: join(dir, 'approvals.jsonl'), SLOW_MS: String(slowMs) };
  return startProcess(sdk.node, [join(dir, 'endpoint.js')], env, join(dir, 'endpoint.log'), () => listening(port));
}

/** A JSON POST; its JSON answer (undefined when empty), or an error naming the status. */
export async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<unknown> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await response.text();
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}: ${text}`);
  return text === '' ? undefined : JSON.parse(text);
}

/**
 * D4: everything a durable conversation needs, on 127.0.0.1, in a temporary folder: the model server, one
 * Restate node and the endpoint (spec/restate/support/endpoint.ts, bundled with esbuild, run by plain node),
 * registered through the admin API. `stop()` ends every process it started, by process group.
 */
export class Stack {
  server!: ChildProcess;
  endpoint!: ChildProcess;

  private constructor(
    readonly dir: string,
    readonly model: ModelServer,
    readonly ports: { ingress: number; admin: number; node: number },
    readonly endpointPort: number,
    readonly slowMs: number,
    readonly sdk: Sdk,
  ) {}

  /** `sdk`: which Restate SDK the endpoint is bundled with, and the Node it runs on (D6). */
  static async start(slowMs: number, sdk: Sdk = SDKS.oldest): Promise<Stack> {
    const dir = mkdtempSync(join(tmpdir(), 'rx-tool-loop-restate-'));
    bundleEndpoint(dir, sdk);
    const stack = new Stack(dir, await ModelServer.start(), await restatePorts(), await closedPort(), slowMs, sdk);
    try {
      await stack.startServer();
      await stack.startEndpoint();
      await stack.post(`http://127.0.0.1:${stack.ports.admin}/deployments`, { uri: `http://127.0.0.1:${stack.endpointPort}` });
    } catch (error) {
      await stack.stop(); // a start that failed halfway leaves nothing running either
      throw error;
    }
    return stack;
  }

  get toolLog(): string {
    return join(this.dir, 'tools.jsonl');
  }
  get approvals(): string {
    return join(this.dir, 'approvals.jsonl');
  }
  ingress(path: string): string {
    return `http://127.0.0.1:${this.ports.ingress}${path}`;
  }

  async startServer(): Promise<void> {
    this.server = await startRestate(join(this.dir, 'restate'), this.ports);
  }
  async startEndpoint(): Promise<void> {
    this.endpoint = await startEndpoint(this.dir, this.sdk, this.endpointPort, this.model, this.slowMs);
  }
  /** SIGKILLs the endpoint and starts it again on the same port. */
  async restartEndpoint(): Promise<void> {
    await kill(this.endpoint);
    await this.startEndpoint();
  }
  /** SIGKILLs the Restate server and starts it again on the same data folder and ports. */
  async restartServer(): Promise<void> {
    await kill(this.server);
    await this.startServer();
  }

  post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<unknown> {
    return post(url, body, headers);
  }

  /** Sends an `ask` to `object`'s conversation `key` (it runs on its own); its answer is `answer(id)`'s. */
  async send(key: string, prompt: string, object = 'chat'): Promise<string> {
    const sent = (await this.post(this.ingress(`/${object}/${key}/ask/send`), prompt, { 'idempotency-key': `${key} ${prompt}` })) as { invocationId: string };
    return sent.invocationId;
  }
  /** The answer of a sent `ask`, once it has one (attach again after a server restart). */
  answer<T>(id: string): Promise<T> {
    return this.attach<T>(`/restate/invocation/${id}/attach`);
  }
  /**
   * The answer of the call to `object`'s `handler` for `key` sent with `idempotencyKey`, found by that key alone
   * (Restate's attach by idempotency key): what a client whose request died learns it by.
   */
  answerByKey<T>(object: string, key: string, handler: string, idempotencyKey: string): Promise<T> {
    return this.attach<T>(`/restate/invocation/${object}/${encodeURIComponent(key)}/${handler}/${encodeURIComponent(idempotencyKey)}/attach`);
  }
  private async attach<T>(path: string): Promise<T> {
    // a node that just started may refuse or not yet lead the partition: ask again for a while
    for (let attempt = 1; ; attempt++) {
      const response = await fetch(this.ingress(path)).catch((error: unknown) => error as Error);
      if (!(response instanceof Error) && response.ok) return (await response.json()) as T;
      const why = response instanceof Error ? response.message : `HTTP ${response.status}: ${await response.text()}`;
      if (attempt === 60 || (!(response instanceof Error) && response.status < 500)) throw new Error(`attach ${path}: ${why}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  /** A call through the ingress that waits for its answer. */
  call<T>(object: string, key: string, handler: string, body: unknown): Promise<T> {
    return this.post(this.ingress(`/${object}/${key}/${handler}`), body) as Promise<T>;
  }

  async stop(): Promise<void> {
    await stopAll();
    await this.model.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
