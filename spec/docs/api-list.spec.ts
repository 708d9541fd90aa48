/**
 * R32: the API guide (docs/api.md, which the README maps, R37) lists what the package exports: every name each
 * entry exports stands in it, in backticks (`name` or `name(…)`), so that an export added or renamed shows up in
 * the docs too; and the README's examples table has a row for every file of examples/.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { exportedNames } from './support/exported-names.js';

const root = resolve(__dirname, '..', '..');
const ENTRIES = ['src/index.ts', 'src/testing/index.ts', 'src/sessions/index.ts', 'src/sessions/testing/index.ts', 'src/mcp/index.ts', 'src/otel/index.ts', 'src/restate/index.ts', 'src/ai-sdk/index.ts', 'src/ui/index.ts', 'src/acp/index.ts'];

describe('R32: the API guide, docs/api.md', () => {
  const api = readFileSync(join(root, 'docs', 'api.md'), 'utf8');

  it('R32: names every export of every entry of the package', () => {
    const missing = ENTRIES.flatMap((entry) => exportedNames(join(root, entry)).filter((name) => !api.includes(`\`${name}\``) && !api.includes(`\`${name}(`)).map((name) => `${entry}: ${name}`));
    expect(missing).toEqual([]);
  });
});

describe('R32: the examples table of README.md', () => {
  it('R32: names every file of examples/, each on a row of its own', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const rows = readme.split('\n').filter((line) => line.startsWith('| `examples/'));
    const named = rows.map((row) => /^\| `(examples\/[^`]+)`/.exec(row)![1]!);
    const files = readdirSync(join(root, 'examples')).filter((name) => name.endsWith('.ts')).map((name) => `examples/${name}`);
    expect({ missing: files.filter((file) => !named.includes(file)), notThere: named.filter((file) => !files.includes(file)) }).toEqual({ missing: [], notThere: [] });
  });
});
