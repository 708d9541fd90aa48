/**
 * R32: every ```text block of README.md, CONTRACT.md, the guides of docs/ (R37) and marbles/README.md says where it comes from, on the
 * line above it, and is checked against that source:
 *
 * - `<!-- drawn by FILE -->`: a marble picture. FILE is a marble scenario or a spec that jest runs; each line
 *   of the picture that opens with a label (`turn1:`, `loop:`) is a line of FILE under that name (a
 *   `label: '…'` entry, e.g. of a scenario's `diagram`), frame for frame: the marbles start at the picture's
 *   column (or between quotes), and what follows two spaces is commentary. Lines without a label explain.
 * - `<!-- output of FILE -->`: what a program prints; its lines are consecutive lines of FILE (a fixture that
 *   a spec compares the program's output with).
 * - `<!-- tree of src/ -->`: the source tree, which spec/docs/src-tree.spec.ts holds to the real one.
 * - `<!-- excerpt -->` (or `<!-- excerpt: why -->`): not checked.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DOCUMENTS, type DocBlock, SRC_TREE, docBlocks, isExcerpt, where } from './support/doc-blocks.js';

const root = resolve(__dirname, '..', '..');
const documents = [...DOCUMENTS, 'marbles/README.md'];
const pictures = documents.flatMap((file) => docBlocks(root, file)).filter((block) => block.lang === 'text');

/** The marble lines of a scenario or spec, by name: every `name: '…'` it holds. */
function linesOf(file: string): Map<string, string[]> {
  const lines = new Map<string, string[]>();
  for (const match of readFileSync(join(root, file), 'utf8').matchAll(/(?:^|[\s{,])(\w+):\s*'([^'\n]*)'/g)) {
    lines.set(match[1]!, [...(lines.get(match[1]!) ?? []), match[2]!]);
  }
  return lines;
}

/** A picture's labelled lines: [index in the block, label, marbles]. */
function drawn(block: DocBlock): [number, string, string][] {
  const rows = block.text.split('\n');
  const labelled = rows.flatMap((row, index) => {
    const match = /^([A-Za-z]\w*):( *)(\S.*)?$/.exec(row);
    return match === null ? [] : [{ index, label: match[1]!, column: match[1]!.length + 1 + match[2]!.length, rest: match[3] ?? '' }];
  });
  // unquoted pictures start their marbles at one column, the leftmost one a line starts at
  const column = Math.min(...labelled.filter((row) => !row.rest.startsWith("'")).map((row) => row.column));
  return labelled.map(({ index, label, rest }): [number, string, string] => {
    if (rest.startsWith("'")) return [index, label, rest.slice(1, rest.indexOf("'", 1))];
    const marbles = rows[index]!.slice(column);
    const first = marbles.search(/\S/);
    const end = marbles.indexOf('  ', first);
    return [index, label, (end === -1 ? marbles : marbles.slice(0, end)).trimEnd()];
  });
}

/** What is wrong with a picture, one line per problem. */
function problems(block: DocBlock): string[] {
  if (isExcerpt(block) || block.marker === SRC_TREE) return [];
  const drawnBy = /^drawn by (\S+)$/.exec(block.marker ?? '');
  const outputOf = /^output of (\S+)$/.exec(block.marker ?? '');
  const source = drawnBy?.[1] ?? outputOf?.[1];
  if (source === undefined) return [`${where(block)}: a text block needs <!-- drawn by FILE -->, <!-- output of FILE -->, <!-- tree of src/ --> or <!-- excerpt --> on the line above it`];
  if (!existsSync(join(root, source))) return [`${where(block)}: ${source} does not exist`];
  if (outputOf !== null) {
    const text = readFileSync(join(root, source), 'utf8');
    return text.includes(block.text + '\n') || text.endsWith(block.text) ? [] : [`${where(block)}: these lines are not lines of ${source}, one after the other`];
  }
  if (!/^marbles\/[^/]+\.marble\.ts$|^spec\/.+\.spec\.ts$/.test(source)) return [`${where(block)}: ${source} is no marble scenario or spec that jest runs`];
  const lines = linesOf(source);
  const rows = drawn(block);
  if (rows.length === 0) return [`${where(block)}: a marble picture without a labelled line`];
  return rows.flatMap(([index, label, marbles]) => {
    const theirs = lines.get(label);
    if (theirs === undefined) return [`${where(block, index)}: ${source} has no line ${label}`];
    return theirs.includes(marbles) ? [] : [`${where(block, index)}: ${label} is '${marbles}' here, but ${theirs.map((line) => `'${line}'`).join(' or ')} in ${source}`];
  });
}

describe('R32: the text pictures of README.md, CONTRACT.md, the guides and marbles/README.md', () => {
  it('R32: finds the marble pictures', () => {
    expect(pictures.filter((block) => block.marker?.startsWith('drawn by ')).length).toBeGreaterThan(5);
  });

  it('R32: every text block is drawn by a scenario or spec that jest runs, the output a spec compares, or marked an excerpt', () => {
    expect(pictures.flatMap(problems)).toEqual([]);
  });

  it('R32: a picture line one frame off, or under a name its scenario does not have, is found', () => {
    const picture = (text: string): DocBlock => ({ file: 'README.md', line: 1, lang: 'text', marker: 'drawn by marbles/03-delayed-tool.marble.ts', text });
    expect(problems(picture("turn1:    '-s-h-c---i-u|'\nloop:     '1s-h-(cγ)i-u-(RE2)s-t-e(FL|)'"))).toEqual([]);
    expect(problems(picture('turn1:   -s-h-c---i-u|     s = message_start\nweather:      --------(R|)   the tool'))).toEqual([]);
    expect(problems(picture('turn1:   -s-h-c---i-u|\nweather:       --------(R|)'))).toEqual([
      "README.md:2: weather is '      --------(R|)' here, but '     --------(R|)' in marbles/03-delayed-tool.marble.ts",
    ]);
    expect(problems(picture('turn 1:  -s-h-c---i-u|\ntool:    --------(R|)'))).toEqual(['README.md:2: marbles/03-delayed-tool.marble.ts has no line tool']);
  });
});
