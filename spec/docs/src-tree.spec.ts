/**
 * R32: the `src/` tree in docs/how-it-works.md (the text block under `<!-- tree of src/ -->`) is the real one. It lists
 * every folder of src/ and every file at its top, nothing else, nested by two spaces a level; each name in
 * backticks on a folder's line is exported by a file in that folder (or below it), each on a file's line by
 * that file. When the layout changes, the message names what is missing from the tree and what is not in src/.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SRC_TREE, docBlocks } from './support/doc-blocks.js';
import { exportedNames } from './support/exported-names.js';

const root = resolve(__dirname, '..', '..');
/** The guide that draws the tree (R37: the README maps the guides). */
const GUIDE = 'docs/how-it-works.md';

/** Every folder under src/ (`loop/`, `providers/http/`) and every file at its top, as paths relative to src/. */
function realTree(folder = join(root, 'src'), prefix = ''): string[] {
  return readdirSync(folder)
    .sort()
    .flatMap((name) => {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) return [`${prefix}${name}/`, ...realTree(path, `${prefix}${name}/`).filter((entry) => entry.endsWith('/'))];
      return prefix === '' ? [name] : [];
    });
}

/** The TypeScript files of a folder, at any depth. */
function sources(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    return statSync(path).isDirectory() ? sources(path) : name.endsWith('.ts') ? [path] : [];
  });
}

interface Row {
  path: string;
  names: string[];
  line: number;
}

/** The tree's rows: each entry's path relative to src/, built from the indentation, and its names in backticks. */
function drawnTree(): Row[] {
  const blocks = docBlocks(root, GUIDE).filter((block) => block.marker === SRC_TREE);
  expect(blocks).toHaveLength(1);
  const block = blocks[0]!;
  const [top, ...rows] = block.text.split('\n');
  expect(top).toBe('src/');
  const parents: string[] = [];
  return rows.map((row, index) => {
    const match = /^((?:  )+)(\S+)(.*)$/.exec(row);
    if (match === null) throw new Error(`${GUIDE}:${block.line + 1 + index}: not a row of the tree: ${row}`);
    const depth = match[1]!.length / 2 - 1;
    parents.length = depth;
    const path = parents.join('') + match[2]!;
    if (path.endsWith('/')) parents.push(match[2]!);
    return { path, names: [...match[3]!.matchAll(/`([A-Za-z_$][\w$]*)`/g)].map((m) => m[1]!), line: block.line + 1 + index };
  });
}

describe('R32: the src/ tree of docs/how-it-works.md', () => {
  const rows = drawnTree();

  it('R32: lists every folder of src/ and every file at its top, and nothing else', () => {
    const real = realTree();
    const drawn = rows.map((row) => row.path);
    expect({ missing: real.filter((entry) => !drawn.includes(entry)), notInSrc: drawn.filter((entry) => !real.includes(entry)) }).toEqual({ missing: [], notInSrc: [] });
  });

  it('R32: every name in backticks is exported where the tree puts it', () => {
    const wrong = rows.flatMap(({ path, names, line }) => {
      const files = path.endsWith('/') ? sources(join(root, 'src', path)) : [join(root, 'src', path)];
      return names.filter((name) => !files.some((file) => exportedNames(file).includes(name))).map((name) => `${GUIDE}:${line}: ${name} is not exported from src/${path}`);
    });
    expect(wrong).toEqual([]);
  });
});
