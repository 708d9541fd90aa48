import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..');

describe('npm run s04', () => {
  it('prints the series demo exactly (spec/fixtures/s04.expected.txt)', () => {
    const output = execFileSync(process.execPath, [require.resolve('ts-node/dist/bin.js'), 'examples/s04.ts'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(output).toBe(readFileSync(join(root, 'spec/fixtures/s04.expected.txt'), 'utf8'));
  });
});
