/**
 * R32: README.md and the guides of docs/ (R37) link to the rules instead of restating them, so their links
 * must land: every link to `CONTRACT.md#…` or to `#…` in them and in CONTRACT.md names a heading of that file
 * (its anchor as GitHub makes it), and every relative link, read from the folder of the file that holds it,
 * names a file of the repository; every `npm run NAME` names a script.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, posix, resolve } from 'node:path';
import { DOCUMENTS, GUIDES } from './support/doc-blocks.js';

const root = resolve(__dirname, '..', '..');

/** A heading's anchor, as GitHub makes it: lower case, punctuation dropped, spaces as hyphens; repeats get -1, -2 … */
function anchors(file: string): Set<string> {
  const text = readFileSync(join(root, file), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const match of text.matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = match[1]!.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    found.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return found;
}

/** The Markdown links of a file outside its code blocks, with their lines. */
function links(file: string): { target: string; line: number }[] {
  let fenced = false;
  return readFileSync(join(root, file), 'utf8')
    .split('\n')
    .flatMap((line, index) => {
      if (/^```/.test(line)) fenced = !fenced;
      return fenced ? [] : [...line.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => ({ target: match[1]!, line: index + 1 }));
    });
}

describe('R32: the links of README.md, CONTRACT.md and the guides', () => {
  it('R32, R37: README.md and the guides link to the rules of CONTRACT.md by their sections', () => {
    expect(links('README.md').filter(({ target }) => target.startsWith('CONTRACT.md#')).length).toBeGreaterThan(5);
    expect(GUIDES.flatMap((file) => links(file)).filter(({ target }) => target.startsWith('../CONTRACT.md#')).length).toBeGreaterThan(30);
  });

  it('R32: every link to a section names a heading of that file, and every relative link a file of the repository', () => {
    const broken = DOCUMENTS.flatMap((file) =>
      links(file).flatMap(({ target, line }) => {
        if (/^[a-z]+:/.test(target)) return []; // https:, mailto:
        const [path, anchor] = target.split('#') as [string, string | undefined];
        // a relative link is read from the folder of its file (docs/x.md's `../CONTRACT.md` is the root's)
        const into = path === '' ? file : posix.normalize(posix.join(dirname(file), path));
        if (into.startsWith('../')) return [`${file}:${line}: ${target}: leaves the repository`];
        if (!existsSync(join(root, into))) return [`${file}:${line}: ${target}: no file ${into}`];
        if (anchor === undefined || !into.endsWith('.md')) return [];
        return anchors(into).has(anchor) ? [] : [`${file}:${line}: ${target}: no heading of ${into} has the anchor #${anchor}`];
      }),
    );
    expect(broken).toEqual([]);
  });
});

describe('R32: the commands of README.md, CONTRACT.md and the guides', () => {
  it('R32: every `npm run NAME` names a script of package.json', () => {
    const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    const named = DOCUMENTS.flatMap((file) =>
      readFileSync(join(root, file), 'utf8')
        .split('\n')
        .flatMap((line, index) => [...line.matchAll(/\bnpm run ([\w:-]+)/g)].map((match) => ({ file, line: index + 1, script: match[1]! }))),
    );
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter(({ script }) => !(script in scripts)).map(({ file, line, script }) => `${file}:${line}: npm run ${script}: no such script`)).toEqual([]);
  });
});
