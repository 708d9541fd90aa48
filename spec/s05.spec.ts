import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..');

describe('npm run s05 (H7)', () => {
  it('prints the tool-hooks demo exactly (spec/fixtures/s05.expected.txt): a command blocked before it runs, a secret redacted after', () => {
    const output = execFileSync(process.execPath, [require.resolve('ts-node/dist/bin.js'), 'examples/s05.ts'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(output).toBe(readFileSync(join(root, 'spec/fixtures/s05.expected.txt'), 'utf8'));
    // the transcript shows what the hooks did, where they did it
    expect(output).toContain('before: bash blocked\ntool_result: denied: dangerous command:');
    expect(output).toContain('after: read_file redacted\ntool_result: MODEL=gpt-4o-mini\nAPI_KEY=[redacted]');
    expect(output).not.toContain('sk-live');
  });
});
