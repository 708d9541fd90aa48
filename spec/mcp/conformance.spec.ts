/**
 * M9: every client scenario of the official MCP conformance suite (`@modelcontextprotocol/conformance`, newest
 * 0.1.x: 0.1.16, which runs on Node 22) except `auth/*`, against a client built on `mcpTools`
 * (spec/mcp/support/conformance-client.ts, bundled once and run on the Node that runs jest). The suite starts its
 * own server for each scenario on a free port and stops it. Every failing check must be listed in
 * support/conformance-expected-failures.json with why, and every listed one must still fail.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildSync } from 'esbuild';
import { node22 } from '../restate/support/sdks';

jest.setTimeout(120_000);

const root = join(__dirname, '..', '..');
const suite = require.resolve('@modelcontextprotocol/conformance/dist/index.js');
const suiteVersion = (JSON.parse(readFileSync(join(suite, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;
const expected = (JSON.parse(readFileSync(join(__dirname, 'support', 'conformance-expected-failures.json'), 'utf8')) as { failures: Record<string, string> }).failures;

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

/** The client scenarios the suite lists, but `auth/*` (asked once: the suite takes seconds to start). */
let scenarios: string[] = [];
beforeAll(() => {
  scenarios = clientScenarios();
});

function clientScenarios(): string[] {
  const listed = execFileSync(node22(), [suite, 'list'], { cwd: root, encoding: 'utf8' });
  const clients = listed.slice(listed.indexOf('Client scenarios'));
  return [...clients.matchAll(/^\s+- (\S+)/gm)].map((match) => match[1]!).filter((name) => !name.startsWith('auth/'));
}

/**
 * `SCENARIO/CHECK-ID` of each check that failed, with what the suite said. A `WARNING` is not a failure (the suite
 * passes with it): sse-retry warns when the reconnection came more than 200 ms after the server's `retry`, which
 * on a loaded machine is the machine's doing, and fails when it came a whole `retry` late or early.
 */
function failures(scenario: string, checks: readonly Check[]): Record<string, string> {
  const found: Record<string, string> = {};
  for (const check of checks) if (check.status === 'FAILURE') found[`${scenario}/${check.id}`] = check.errorMessage ?? check.status;
  return found;
}

/** What disagrees with the expected-failures list: failures it does not name, and names that passed. */
function disagreements(failed: Record<string, string>, listed: Record<string, string>): { unlisted: Record<string, string>; passing: string[] } {
  const unlisted = Object.fromEntries(Object.entries(failed).filter(([key]) => !(key in listed)));
  return { unlisted, passing: Object.keys(listed).filter((key) => !(key in failed)) };
}

it('M9: the suite is the newest 0.1.x installed (0.1.16) and lists the four non-auth client scenarios the client scripts', () => {
  expect(suiteVersion).toBe('0.1.16');
  expect([...scenarios].sort()).toEqual(['elicitation-sep1034-client-defaults', 'initialize', 'sse-retry', 'tools_call']);
});

it('M9: a failure the list does not name, and a listed failure that passes, both disagree with it', () => {
  expect(disagreements({ 'sse-retry/client-sse-retry-timing': 'late' }, { 'initialize/x': 'why' })).toEqual({
    unlisted: { 'sse-retry/client-sse-retry-timing': 'late' },
    passing: ['initialize/x'],
  });
  expect(disagreements({ 'initialize/x': 'no' }, { 'initialize/x': 'why' })).toEqual({ unlisted: {}, passing: [] });
});

it('M9: every non-auth client scenario runs against the client on mcpTools; what fails is exactly the expected-failures list', async () => {
  const out = mkdtempSync(join(tmpdir(), 'rx-tool-loop-conformance-'));
  try {
    const client = join(out, 'client.cjs');
    buildSync({ entryPoints: [join(root, 'spec/mcp/support/conformance-client.ts')], bundle: true, platform: 'node', format: 'cjs', outfile: client, logLevel: 'warning' });
    const run = promisify(execFile);
    const failed: Record<string, string> = {};
    const stdout: Record<string, string> = {};
    // the scenarios run at once: each on a port of its own, in an output folder of its own
    await Promise.all(
      scenarios.map(async (scenario) => {
        const dir = join(out, scenario.replace(/\W/g, '_'));
        // the suite exits 1 when a check fails: its checks.json says which, and the list decides
        await run(node22(), [suite, 'client', '--command', `${process.execPath} ${client}`, '--scenario', scenario, '-o', dir], { cwd: root }).catch(() => undefined);
        const [result] = readdirSync(dir);
        const checks = JSON.parse(readFileSync(join(dir, result!, 'checks.json'), 'utf8')) as Check[];
        if (checks.length === 0) failed[`${scenario}/(no checks)`] = 'the scenario reported no checks';
        Object.assign(failed, failures(scenario, checks));
        stdout[scenario] = readFileSync(join(dir, result!, 'stdout.txt'), 'utf8');
      }),
    );
    expect(disagreements(failed, expected)).toEqual({ unlisted: {}, passing: [] });
    // the loop got each tool's answer: the client's last line is the model's reply, the tool result
    expect(stdout.tools_call).toContain('The sum of 2 and 3 is 5');
    expect(stdout['elicitation-sep1034-client-defaults']).toContain('Elicitation completed: {"name":"John Doe","age":30,"score":95.5,"status":"active","verified":true}');
    expect(stdout['sse-retry']).toContain('Reconnection test completed successfully');
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
