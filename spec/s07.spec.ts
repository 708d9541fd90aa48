import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..');

describe('npm run s07 (S6)', () => {
  it('S6: prints the session-tree demo exactly (spec/fixtures/s07.expected.txt): two prompts, a branch back to the first answer, a third prompt on it, the tree', () => {
    const output = execFileSync(process.execPath, [require.resolve('ts-node/dist/bin.js'), 'examples/s07.ts'], { cwd: root, encoding: 'utf8' });
    expect(output).toBe(readFileSync(join(root, 'spec/fixtures/s07.expected.txt'), 'utf8'));
    // on the branch the model does not see the second prompt: it is on the other path of the tree
    expect(output).toContain('[user]\nAnd what was my first question?\n[assistant]\nYou said "And what was my first question?". That is prompt 2 of this chat; the one before was "What time is it?".');
    expect(output).toContain('├─ 5 user: Thanks! What did I ask before?');
    expect(output).toContain('└─ 8 user: And what was my first question?');
  });
});
