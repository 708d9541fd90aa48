/** The docs' code is the code that runs: the "Testing your agent" guide's test is the example file, as it is. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

test('docs/testing.md shows examples/testing-your-agent.spec.ts from its imports on, unchanged', () => {
  const example = readFileSync(join(root, 'examples/testing-your-agent.spec.ts'), 'utf8');
  const body = example.slice(example.indexOf('import '));
  expect(readFileSync(join(root, 'docs', 'testing.md'), 'utf8')).toContain('```ts\n' + body + '```');
});
