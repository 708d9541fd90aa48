/**
 * R32: README's API section lists what the package exports: every name each entry exports stands in it, in
 * backticks (`name` or `name(…)`), so that an export added or renamed shows up in the README too; and its
 * examples table has a row for every file of examples/.
 */
import ts from 'typescript';
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(__dirname, '..', '..');
const ENTRIES = ['src/index.ts', 'src/testing/index.ts', 'src/sessions/index.ts', 'src/sessions/testing/index.ts', 'src/mcp/index.ts', 'src/otel/index.ts', 'src/restate/index.ts'];

/** The names an entry passes on (`export { a } from …`, `export type { B } from …`). */
function exported(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest);
  return source.statements.flatMap((statement) =>
    ts.isExportDeclaration(statement) && statement.exportClause !== undefined && ts.isNamedExports(statement.exportClause)
      ? statement.exportClause.elements.map((element) => element.name.text)
      : [],
  );
}

describe('R32: the API section of README.md', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const api = readme.slice(readme.indexOf('\n## API\n'));

  it('R32: names every export of every entry of the package', () => {
    expect(api.length).toBeLessThan(readme.length);
    const missing = ENTRIES.flatMap((entry) => exported(entry).filter((name) => !api.includes(`\`${name}\``) && !api.includes(`\`${name}(`)).map((name) => `${entry}: ${name}`));
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
