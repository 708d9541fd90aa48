/**
 * R37: README.md is a front door. It holds at most 300 lines; its first screen (the first 40 lines) holds a
 * whole example of at most 20 lines on the scripted provider, which needs no network and no key; that example
 * runs, and prints what the README shows under it (a fixture, compared here with what it prints); and the
 * README maps every guide of docs/, each of which links to the rules in CONTRACT.md instead of restating them.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as rxjs from 'rxjs';
import ts from 'typescript';
import * as main from 'rx-tool-loop';
import * as testing from 'rx-tool-loop/testing';
import { type DocBlock, EXCERPT, docBlocks, isExcerpt, where } from './support/doc-blocks.js';

const root = resolve(__dirname, '..', '..');
const MAX_LINES = 300;
const FIRST_SCREEN = 40;
const MAX_EXAMPLE = 20;
/** What the example may import: the package's main entry and its testing kit, and rxjs. */
const MODULES: Record<string, unknown> = { 'rx-tool-loop': main, 'rx-tool-loop/testing': testing, rxjs };

/** The README's example: its first ```ts block. */
function exampleOf(blocks: DocBlock[]): DocBlock | undefined {
  return blocks.find((block) => block.lang === 'ts');
}

/** What keeps a README from being the front door, one line per problem. */
function frontDoorProblems(text: string, blocks: DocBlock[]): string[] {
  const problems: string[] = [];
  const lines = text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
  if (lines > MAX_LINES) problems.push(`README.md has ${lines} lines: at most ${MAX_LINES}`);
  const example = exampleOf(blocks);
  if (example === undefined) return [...problems, 'README.md has no ts block: the example is missing'];
  const length = example.text.split('\n').length;
  // the closing fence too must be on the first screen: the whole example is seen at once
  if (example.line + length > FIRST_SCREEN) problems.push(`${where(example)}: the example ends at line ${example.line + length}, past the first screen (${FIRST_SCREEN} lines)`);
  if (length > MAX_EXAMPLE) problems.push(`${where(example)}: the example has ${length} lines: at most ${MAX_EXAMPLE}`);
  if (isExcerpt(example)) problems.push(`${where(example)}: the example is marked an excerpt: it must be whole, to run`);
  if (/^\s*declare\s/m.test(example.text)) problems.push(`${where(example)}: the example declares what it takes as given: it must run as it stands`);
  if (!/\bscriptedProvider\(/.test(example.text)) problems.push(`${where(example)}: the example does not run on scriptedProvider (no network, no key)`);
  const next = blocks[blocks.indexOf(example) + 1];
  if (next === undefined || next.lang !== 'text' || !/^output of \S+$/.test(next.marker ?? '')) {
    problems.push(`${where(example)}: the example is not followed by what it prints (a text block under <!-- output of FILE -->)`);
  }
  return problems;
}

/** Runs the example as a CommonJS module, the package's entries its only imports, and returns what it printed. */
async function run(example: DocBlock): Promise<string> {
  const { outputText, diagnostics } = ts.transpileModule(example.text, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
    reportDiagnostics: true,
  });
  expect(diagnostics ?? []).toEqual([]);
  const printed: string[] = [];
  const load = (name: string): unknown => {
    if (!(name in MODULES)) throw new Error(`the README's example imports ${name}: it may import only ${Object.keys(MODULES).join(', ')}`);
    return MODULES[name];
  };
  const log = (...values: unknown[]) => printed.push(values.map(String).join(' '));
  // the example as a CommonJS module of its own: `require` gives the package's entries, `console` is ours
  new Function('require', 'exports', 'console', outputText)(load, {}, { log });
  await new Promise((done) => setImmediate(done)); // a run that is not synchronous gets to print too
  return printed.map((line) => `${line}\n`).join('');
}

const readme = readFileSync(join(root, 'README.md'), 'utf8');
const blocks = docBlocks(root, 'README.md');
const guides = readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).sort();

describe('R37: README.md is a front door', () => {
  it('R37: at most 300 lines, and on its first screen a whole example of at most 20 lines on scriptedProvider, then what it prints', () => {
    expect(frontDoorProblems(readme, blocks)).toEqual([]);
  });

  it('R37: a README too long, or an example too long, past the first screen, an excerpt, or without its output, is refused', () => {
    const example = (line: number, text: string, marker?: string): DocBlock => ({ file: 'README.md', line, lang: 'ts', marker, text });
    const output: DocBlock = { file: 'README.md', line: 30, lang: 'text', marker: 'output of spec/fixtures/x.txt', text: '' };
    const good = "import { scriptedProvider } from 'rx-tool-loop';\nconst provider = scriptedProvider([]);";
    expect(frontDoorProblems('a\n'.repeat(300), [example(10, good), output])).toEqual([]);
    expect(frontDoorProblems('a\n'.repeat(301), [example(10, good), output])).toEqual(['README.md has 301 lines: at most 300']);
    expect(frontDoorProblems('', [example(38, good), output])).toEqual([]); // its closing fence on line 40
    expect(frontDoorProblems('', [example(39, good), output])).toEqual(['README.md:39: the example ends at line 41, past the first screen (40 lines)']);
    expect(frontDoorProblems('', [example(5, Array(21).fill('scriptedProvider(x);').join('\n')), output])).toEqual(['README.md:5: the example has 21 lines: at most 20']);
    expect(frontDoorProblems('', [example(5, good, EXCERPT), output])).toEqual(['README.md:5: the example is marked an excerpt: it must be whole, to run']);
    expect(frontDoorProblems('', [example(5, `declare const x: number;\n${good}`), output])).toEqual(['README.md:5: the example declares what it takes as given: it must run as it stands']);
    expect(frontDoorProblems('', [example(5, "import { openAIChatProvider } from 'rx-tool-loop';"), output])).toEqual(['README.md:5: the example does not run on scriptedProvider (no network, no key)']);
    expect(frontDoorProblems('', [example(5, good)])).toEqual(['README.md:5: the example is not followed by what it prints (a text block under <!-- output of FILE -->)']);
  });

  it('R37: the example runs as it stands and prints, line for line, the output the README shows under it', async () => {
    const example = exampleOf(blocks)!;
    const shown = blocks[blocks.indexOf(example) + 1]!;
    const fixture = readFileSync(join(root, /^output of (\S+)$/.exec(shown.marker!)![1]!), 'utf8');
    // the README shows the whole output (spec/docs/text-pictures.spec.ts checks only that its lines are the fixture's)
    expect(await run(example)).toBe(fixture);
    expect(`${shown.text}\n`).toBe(fixture);
  });

  it('R37: the example fails here when it prints something else (a tool that answers otherwise)', async () => {
    const example = exampleOf(blocks)!;
    const edited = { ...example, text: example.text.replace("handler: () => '12:00'", "handler: () => '13:00'") };
    expect(edited.text).not.toBe(example.text);
    expect(await run(edited)).not.toBe(await run(example));
  });

  it('R37: the README links to every guide of docs/, and every guide links to the rules of CONTRACT.md by their sections', () => {
    expect(guides.length).toBeGreaterThanOrEqual(8);
    expect(guides.filter((guide) => !readme.includes(`](docs/${guide})`) && !readme.includes(`](docs/${guide}#`))).toEqual([]);
    const unlinked = guides.filter((guide) => !readFileSync(join(root, 'docs', guide), 'utf8').includes('](../CONTRACT.md'));
    expect(unlinked).toEqual([]);
  });
});
