import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { closedPort } from '../../providers/loopback-server.js';

/**
 * D4: the processes a spec starts — each in a process group of its own, stopped by that group's id
 * (`kill(-pid)`), also when the spec fails (`stopAll` in `afterAll`), so that `npm test` leaves nothing running.
 */
const running = new Set<ChildProcess>();

/** Starts `command` in its own process group, its output appended to `log`; resolves once `ready()` holds. */
export async function startProcess(command: string, args: string[], env: Record<string, string>, log: string, ready: () => Promise<boolean>): Promise<ChildProcess> {
  const child = spawn(command, args, { env: { ...process.env, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  child.on('exit', () => running.delete(child));
  const out = createWriteStream(log, { flags: 'a' });
  child.stdout!.pipe(out, { end: false });
  child.stderr!.pipe(out, { end: false });
  const deadline = Date.now() + 30_000;
  while (!(await ready())) {
    // the log's end goes into the message: the folder that holds it is removed when the spec stops
    const tail = () => (existsSync(log) ? readFileSync(log, 'utf8').slice(-2000) : '(no output)');
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${command} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${tail()}`);
    if (Date.now() > deadline) throw new Error(`${command} was not ready after 30 s:\n${tail()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return child;
}

/** SIGKILLs the process group of `child` and waits until the child has exited. */
export async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // the group is gone already
  }
  await exited;
}

/** Stops everything still running (afterAll). */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map(kill));
}

/** True when `url` answers 2xx. */
export async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(2000) })).ok;
  } catch {
    return false;
  }
}

/** The `restate-server` binary that `@restatedev/restate-server` installs for this platform. */
export function restateBinary(): string {
  return createRequire(__filename).resolve(`@restatedev/restate-server-${process.platform}-${process.arch}/bin/restate-server`);
}

/** Free ports on 127.0.0.1 for the server's ingress, admin API and node-to-node fabric. */
export async function restatePorts(): Promise<{ ingress: number; admin: number; node: number }> {
  return { ingress: await closedPort(), admin: await closedPort(), node: await closedPort() };
}

/**
 * D4, D6: one Restate node on 127.0.0.1 only — ingress, admin and node ports all set (by default they listen on
 * every interface), data in `dir`, no telemetry, invocations retried soon after an endpoint comes back.
 */
export function startRestate(dir: string, ports: { ingress: number; admin: number; node: number }): Promise<ChildProcess> {
  const env = {
    DO_NOT_TRACK: '1',
    RESTATE_INGRESS__BIND_PORT: String(ports.ingress),
    RESTATE_ADMIN__BIND_PORT: String(ports.admin),
    RESTATE_BIND_PORT: String(ports.node),
    RESTATE_DEFAULT_RETRY_POLICY__INITIAL_INTERVAL: '100ms',
    RESTATE_DEFAULT_RETRY_POLICY__MAX_INTERVAL: '500ms',
    RESTATE_DEFAULT_NUM_PARTITIONS: '4',
  };
  const args = ['--bind-ip', '127.0.0.1', '--node-name', 'n1', '--base-dir', dir];
  return startProcess(restateBinary(), args, env, `${dir}.log`, async () => (await answers(`http://127.0.0.1:${ports.admin}/health`)) && (await answers(`http://127.0.0.1:${ports.ingress}/restate/health`)));
}
