/**
 * M5: the official MCP client conformance suite (`@modelcontextprotocol/conformance`, pinned: 0.1.13, the
 * last release that runs on Node 20), scenario `tools_call`, against a client built on `mcpTools`
 * (spec/mcp/support/conformance-client.ts). The suite starts its own server on a free port and stops it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

jest.setTimeout(60_000);

const root = join(__dirname, '..', '..');
const suite = require.resolve('@modelcontextprotocol/conformance/dist/index.js');
const tsNode = require.resolve('ts-node/dist/bin.js');

interface Check { id: string; status: string; errorMessage?: string }

it('M5: the conformance suite\'s tools_call scenario passes against a client built on mcpTools', () => {
  const out = mkdtempSync(join(tmpdir(), 'rx-tool-loop-conformance-'));
  try {
    const command = `${process.execPath} ${tsNode} ${join(root, 'spec/mcp/support/conformance-client.ts')}`;
    execFileSync(process.execPath, [suite, 'client', '--command', command, '--scenario', 'tools_call', '-o', out], { cwd: root, stdio: 'pipe', encoding: 'utf8' });
    const [run] = readdirSync(out);
    const checks = JSON.parse(readFileSync(join(out, run!, 'checks.json'), 'utf8')) as Check[];
    expect(checks.filter((check) => check.status === 'FAILURE' || check.status === 'WARNING')).toEqual([]);
    expect(checks.find((check) => check.id === 'tool-add-numbers')).toMatchObject({ status: 'SUCCESS' });
    expect(readFileSync(join(out, run!, 'stdout.txt'), 'utf8')).toContain('The sum of 2 and 3 is 5');
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
