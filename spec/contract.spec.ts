/**
 * The repository owns its contract: CONTRACT.md states the rules, and the code and the specs cite them
 * by number. This spec checks that the two agree and that nothing points outside the repository.
 *
 * - No file of the repository (what git knows, tracked or new and not ignored; in a copy without git, the
 *   tree but what it ignores: spec/support/repo-files.ts) names the brief the project was built from, or
 *   a path that leaves the repository: an absolute home or work folder, or a relative `../…` path that
 *   climbs above the root from where its file lives.
 * - Rules are numbered in order without gaps, but for numbers that a section heading's range keeps for
 *   rules still to come (`## Events and tools (R21–R28)` holding only R24 so far).
 * - Every rule number cited in src/, spec/, marbles/, examples/, README.md and docs/ is defined in CONTRACT.md.
 * - R32: a rule counts as tested only where the NAME of a test cites it — `it(`, `test(`, `describe(` (with
 *   `.each`, `.skip`, …) or a wrapper that passes its name on (`scenario(` of the marbles, `browserTest` of the
 *   playground), in spec/ or marbles/ — never a comment; every rule CONTRACT.md defines, H, C and D included,
 *   is cited so (ranges such as "R1–R17" prove nothing and do not count).
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { repoFiles } from './support/repo-files.js';

const root = resolve(__dirname, '..');
const self = relative(root, __filename).split(sep).join('/');

function read(file: string): string {
  return readFileSync(join(root, file), 'utf8');
}

const files = repoFiles(root); // git's list in a checkout; a walk of the tree in a copy without git

describe('the repository points at nothing outside itself', () => {
  // written so that this file does not match its own patterns
  const brief = /\bd[e]sign\.md\b/i;
  const sharedFolder = /\.\.\/s[h]ared\b/;
  const absolute = /(?:^|[\s'"`(=:])(\/(?:w[o]rk|h[o]me|r[o]ot|U[s]ers)\/[^\s'"`)]*)/m;
  const climbing = /(?:^|[^\w.\/-])((?:\.\.\/)+)/g;

  it('finds the files to check', () => {
    expect(files).toContain('CONTRACT.md');
    expect(files).toContain('README.md');
    expect(files).toContain(self);
  });

  it('no file names the brief, a shared folder beside the repository, or an absolute path on this machine', () => {
    const found: string[] = [];
    for (const file of files) {
      const lines = read(file).split('\n');
      lines.forEach((line, index) => {
        const hit = brief.exec(line)?.[0] ?? sharedFolder.exec(line)?.[0] ?? absolute.exec(line)?.[1];
        if (hit !== undefined) found.push(`${file}:${index + 1}: ${hit}`);
      });
    }
    expect(found).toEqual([]);
  });

  it('no relative path climbs above the repository root from the file that holds it', () => {
    const found: string[] = [];
    for (const file of files) {
      const lines = read(file).split('\n');
      lines.forEach((line, index) => {
        for (const match of line.matchAll(climbing)) {
          const target = resolve(root, dirname(file), match[1]!);
          const inside = target === root || target.startsWith(root + sep);
          if (!inside) found.push(`${file}:${index + 1}: ${match[1]} leaves the repository`);
        }
      });
    }
    expect(found).toEqual([]);
  });
});

describe('CONTRACT.md and the rule numbers cited in the repository agree', () => {
  const contract = read('CONTRACT.md');
  /** A rule is defined by a list item that opens with its number in bold: `- **R4 The history …**`. */
  const defined = [...contract.matchAll(/^- \*\*([RPTHCVSMOAFJLEU]\d+)\b/gm)].map((match) => match[1]!);
  const definedSet = new Set(defined);

  const rule = /\b([RPTHCVSMOAFJLEU])(\d+)\b/g;
  const range = /\b([RPTHCVSMOAFJLEU])(\d+)\s*[–-]\s*([RPTHCVSMOAFJLEU])(\d+)\b/g;
  /** Words that look like rule numbers and are not: V8 is the JavaScript engine, S04 the playground's name for scenario 01-s04 (a marble diagram's `(U1)`, a user message and a turn, reads as U1, a rule of its own). */
  const notRules = new Set(['V8', 'S04']);
  const isSource = (file: string) => /\.(ts|md|js|mjs|cjs)$/.test(file);
  const citing = files.filter(
    (file) => isSource(file) && (file === 'README.md' || /^(src|spec|marbles|examples|docs)\//.test(file)) && file !== self,
  );

  /** The rule numbers a text cites, each with the line it is on; a range counts only as its two ends. */
  function citations(text: string): { rule: string; line: number; inRange: boolean }[] {
    const found: { rule: string; line: number; inRange: boolean }[] = [];
    text.split('\n').forEach((line, index) => {
      const ranged = new Set<number>();
      for (const match of line.matchAll(range)) {
        const start = match.index;
        found.push({ rule: `${match[1]}${match[2]}`, line: index + 1, inRange: true });
        found.push({ rule: `${match[3]}${match[4]}`, line: index + 1, inRange: true });
        for (let i = start; i < start + match[0].length; i++) ranged.add(i);
      }
      for (const match of line.matchAll(rule)) {
        if (notRules.has(match[0])) continue;
        if (!ranged.has(match.index)) found.push({ rule: `${match[1]}${match[2]}`, line: index + 1, inRange: false });
      }
    });
    return found;
  }

  const cited = citing.flatMap((file) => citations(read(file)).map((citation) => ({ file, ...citation })));

  /** Numbers a section heading keeps for rules still to come: `## Events and tools (R21–R28)`. */
  const reserved = new Set(
    [...contract.matchAll(/^#+ .*\(([RPTHCVSMOAFJLEU])(\d+)\s*[–-]\s*\1(\d+)\)\s*$/gm)].flatMap((match) =>
      Array.from({ length: Number(match[3]) - Number(match[2]) + 1 }, (_, index) => `${match[1]}${Number(match[2]) + index}`),
    ),
  );

  it('defines each rule once, in order, numbered without gaps from 1 but for numbers a heading keeps', () => {
    expect(defined.length).toBeGreaterThan(0);
    expect(defined.length).toBe(definedSet.size);
    for (const letter of ['R', 'H', 'C', 'P', 'T', 'V', 'S', 'M', 'O', 'A', 'D', 'J', 'F', 'L', 'U', 'E']) {
      const numbers = defined.filter((id) => id[0] === letter).map((id) => Number(id.slice(1)));
      expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
      const gaps = Array.from({ length: Math.max(0, ...numbers) }, (_, index) => `${letter}${index + 1}`).filter(
        (id) => !definedSet.has(id) && !reserved.has(id),
      );
      expect(gaps).toEqual([]);
    }
  });

  it('defines every rule number that src/, spec/, marbles/, examples/, README.md or docs/ cites', () => {
    const undefinedRules = cited
      .filter(({ rule: id }) => !definedSet.has(id))
      .map(({ file, line, rule: id }) => `${file}:${line}: ${id} is not defined in CONTRACT.md`);
    expect(undefinedRules).toEqual([]);
  });

  it('R32: has every rule it defines, H and C included, cited by the name of a test', () => {
    const uncited = defined.filter((id) => !namedInTests.has(id));
    expect(uncited).toEqual([]);
  });
});

/** The specs and marbles: where tests are. */
const testFiles = files.filter((file) => /^(spec|marbles)\/.*\.ts$/.test(file) && file !== self);

/**
 * Functions that define a test under the name they are given: `const browserTest = found ? it : it.skip`, or
 * `function scenario(name: string, …) { test(name, …) }`.
 */
const wrappers = new Set(
  testFiles.flatMap((file) => {
    const text = read(file);
    return [
      ...[...text.matchAll(/\bconst (\w+) = [^;\n]*\?\s*(?:it|test)(?:\.skip)?\s*:\s*(?:it|test)\b/g)].map((m) => m[1]!),
      ...[...text.matchAll(/\bfunction (\w+)\(name: string[^{]*\{\s*(?:it|test|describe)\(name\b/g)].map((m) => m[1]!),
    ];
  }),
);

/** The names of the tests of a file, as written (a template literal's text with its `${…}` left in). */
function testNames(text: string): string[] {
  const definers = ['it', 'test', 'describe', ...wrappers].join('|');
  const call = new RegExp(`(?<![\\w.])(?:${definers})(?:\\.(?:each\\((?:[^()]|\\([^()]*\\))*\\)|only|skip|concurrent|failing))*\\(\\s*(['"\`])((?:\\\\.|(?!\\1)[^\\\\])*)\\1`, 'g');
  return [...text.matchAll(call)].map((match) => match[2]!);
}

/** The rules test names cite; a range (`R1–R17`) cites nothing; D (Restate) only under spec/restate, where D1–D11 are not the property suite's defects. */
const namedInTests = new Set(
  testFiles.flatMap((file) =>
    testNames(read(file)).flatMap((name) =>
      [...name.replace(/\b([A-Z])\d+\s*[–-]\s*\1?\d+\b/g, ' ').matchAll(/\b([RPTHCVSMOAFJLEDU])(\d+)\b/g)]
        .map((match) => `${match[1]}${match[2]}`)
        .filter((id) => !id.startsWith('D') || file.startsWith('spec/restate/')),
    ),
  ),
);

describe('R32: rule coverage is read from test names', () => {
  it('R32: finds the names of it, test, describe and the wrappers, and only names', () => {
    expect([...wrappers].sort()).toEqual(expect.arrayContaining(['browserTest', 'scenario']));
    const names = testNames(
      [
        "// R9 in a comment is no test",
        "it('R1: cold', () => {});",
        'describe(`R2 and ${x}`, () => {});',
        "it.each([[1], [2]])('R3 %s', () => {});",
        "scenario('04 R4: a picture', () => {});",
        "expect(x).toEqual('R5');",
        "splitIt('R6');",
      ].join('\n'),
    );
    expect(names).toEqual(['R1: cold', 'R2 and ${x}', 'R3 %s', '04 R4: a picture']);
  });
});

describe('the durable rules (D1–D9) are cited where they are proven', () => {
  // D is not among the letters above: the property suite numbers its defects D1–D11 (spec/properties/defects.spec.ts)
  const contract = read('CONTRACT.md');
  const defined = [...contract.matchAll(/^- \*\*(D\d+)\b/gm)].map((match) => match[1]!);
  /** Numbers the section's heading keeps for rules still to come, as for the other letters: `(D1–D9)`. */
  const kept = new Set(
    [...contract.matchAll(/^#+ .*\(D(\d+)\s*[–-]\s*D(\d+)\)\s*$/gm)].flatMap((match) =>
      Array.from({ length: Number(match[2]) - Number(match[1]) + 1 }, (_, index) => `D${Number(match[1]) + index}`),
    ),
  );

  it('defines D1 onwards once, in order, without gaps but for numbers the heading keeps', () => {
    const numbers = defined.map((id) => Number(id.slice(1)));
    expect(new Set(defined).size).toBe(defined.length);
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
    const gaps = Array.from({ length: Math.max(0, ...numbers) }, (_, index) => `D${index + 1}`).filter((id) => !defined.includes(id) && !kept.has(id));
    expect(gaps).toEqual([]);
    expect(defined.length).toBeGreaterThan(0);
  });

  it('has every D rule cited by the name of a spec under spec/restate', () => {
    const names = files
      // the conversation specs run one suite per SDK (D6): its names are in spec/restate/support/conversation-suite.ts
      .filter((file) => /^spec\/restate\/(.*\.spec|support\/conversation-suite)\.ts$/.test(file))
      .flatMap((file) => [...read(file).matchAll(/\bit(?:\.each\([^)]*\))?\(\s*(['"`])((?:\\.|(?!\1).)*)\1/g)].map((match) => match[2]!));
    const cited = new Set(names.flatMap((name) => [...name.matchAll(/\bD(\d+)\b/g)].map((match) => `D${match[1]}`)));
    expect(defined.filter((id) => !cited.has(id))).toEqual([]);
  });
});
