/**
 * R31: one implementation of each small thing, and no two functions named alike that do different things.
 *
 * - Every function of src/ declared at the top of its file (a `function` or a `const` holding an arrow or a
 *   function expression, exported or not) has a name no other file gives to a function with another body.
 *   Methods (`next`, `subscribe`, `unsubscribe`…: an interface's names, alike on purpose) and functions nested
 *   inside others (closures such as `fail` or `end`, local to their function) are not counted.
 * - The small things of src/util/README.md each have one home: the helper is defined there and nowhere else, and
 *   the way of doing it by hand (a head index, `isObservable` beside `isPromiseLike`, a phase's `hold`) appears
 *   nowhere else, but where the allow-list below says why.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { repoFiles } from './support/repo-files.js';

const root = resolve(__dirname, '..');

interface Declared {
  name: string;
  file: string;
  line: number;
  /** The text after the name: parameters and body, white space folded. */
  body: string;
}

/** The functions declared at the top of `text`: `function f`, `const f = (…) => …`, `const f = function …`. */
function topLevelFunctions(file: string, text: string): Declared[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: Declared[] = [];
  const add = (name: string, node: ts.Node) => {
    const body = node.getText(source).replace(/\s+/g, ' ');
    found.push({ name, file, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1, body });
  };
  for (const statement of source.statements) {
    if (ts.isFunctionDeclaration(statement) && statement.name !== undefined && statement.body !== undefined) {
      add(statement.name.text, statement.body);
      continue;
    }
    if (!ts.isVariableStatement(statement)) continue;
    for (const declaration of statement.declarationList.declarations) {
      const { name, initializer } = declaration;
      if (!ts.isIdentifier(name) || initializer === undefined) continue;
      if (ts.isArrowFunction(initializer) || ts.isFunctionExpression(initializer)) add(name.text, initializer);
    }
  }
  return found;
}

/** Names given to functions with different bodies in different files: `name: file:line, file:line`. */
function namesAlike(declared: readonly Declared[]): string[] {
  const byName = new Map<string, Declared[]>();
  for (const one of declared) byName.set(one.name, [...(byName.get(one.name) ?? []), one]);
  const alike: string[] = [];
  for (const [name, all] of byName) {
    if (new Set(all.map((one) => one.file)).size < 2 || new Set(all.map((one) => one.body)).size < 2) continue;
    alike.push(`${name}: ${all.map((one) => `${one.file}:${one.line}`).join(', ')}`);
  }
  return alike;
}

/**
 * Names that may stand in two files for two different functions, each with its reason. Empty: every case found
 * so far was a name that said too little, and was renamed for what its function does.
 */
const ALIKE_ON_PURPOSE: Record<string, string> = {};

const sources = repoFiles(root)
  .filter((file) => file.startsWith('src/') && file.endsWith('.ts'))
  .map((file) => ({ file, text: readFileSync(join(root, file), 'utf8') }));
const declared = sources.flatMap(({ file, text }) => topLevelFunctions(file, text));

/** The files of src/ whose text matches `pattern`, outside `allowed`. */
function filesMatching(pattern: RegExp, allowed: readonly string[]): string[] {
  return sources.filter(({ file, text }) => !allowed.includes(file) && pattern.test(text)).map(({ file }) => file);
}

describe('one implementation of each small thing (R31)', () => {
  it('R31: no two functions of src/ share a name in different files with different bodies (methods and nested closures aside)', () => {
    expect(declared.length).toBeGreaterThan(300); // the scan reads the tree, not an empty folder
    const alike = namesAlike(declared).filter((line) => !(line.split(':')[0]! in ALIKE_ON_PURPOSE));
    expect(alike).toEqual([]);
  });

  it('R31: the scan tells a name shared by different functions from one repeated alike (its own check)', () => {
    const a = topLevelFunctions('a.ts', 'export function causeOf(e: unknown) { return (e as { cause?: unknown }).cause; }\nconst same = () => 1;');
    const b = topLevelFunctions('b.ts', 'function causeOf(e: unknown) { return { name: "Error", message: String(e) }; }\nconst same = () => 1;\nclass C { causeOf() {} }');
    const nested = topLevelFunctions('c.ts', 'function outer() { function causeOf() { return 2; } const fail = () => 3; return causeOf() + fail(); }');
    expect(namesAlike([...a, ...b, ...nested])).toEqual(['causeOf: a.ts:1, b.ts:1']);
  });

  const homes: [what: string, name: string, home: string][] = [
    ['the value / Promise / Observable adapter', 'subscribeAnswer', 'src/util/answer.ts'],
    ['the same, as an Observable', 'fromAnswer', 'src/util/answer.ts'],
    ['the text of anything thrown', 'errorText', 'src/util/values.ts'],
    ["a failure's cause as JSON (R25)", 'causeOf', 'src/tools/tool-result.ts'],
    ["the loop's options checked (R20, R21)", 'checkOptions', 'src/loop/loop-options.ts'],
    ['an integer >= 1 or Infinity (a count, a time in ms)', 'isCountOrInfinity', 'src/util/values.ts'],
    ['a listener on a signal the library was given', 'onAbort', 'src/util/abort-signal.ts'],
    ['the phase join', 'joinPhase', 'src/loop/turn-phase.ts'],
    ['a phase as an operator', 'phaseOperator', 'src/loop/turn-phase.ts'],
  ];

  it.each(homes)('R31: %s is defined once, as `%s` in %s', (_what, name, home) => {
    expect(declared.filter((one) => one.name === name).map((one) => one.file)).toEqual([home]);
  });

  it('R31: one head-index queue: the class HeadQueue in src/util/head-queue.ts, and no other `head` index in src/', () => {
    expect(filesMatching(/\bclass HeadQueue\b/, [])).toEqual(['src/util/head-queue.ts']);
    expect(filesMatching(/\bhead\s*(?:\+\+|\+=|=\s*0\b)/, ['src/util/head-queue.ts'])).toEqual([]);
  });

  it('R31: one adapter: no file but src/util/answer.ts turns a value or a PromiseLike into an Observable by hand', () => {
    // `isPromiseLike` asked elsewhere only to choose, never to adapt:
    const choosing = [
      'src/tools/execute-tool.ts', // which path a handler's return takes (a value straight to its result); the answer still goes through subscribeAnswer
      'src/util/standard-validate.ts', // a Standard Schema validator's verdict (a tool's input, R24; an answer, J2), a Promise to a Promise: no Observable
      'src/testing/marble-tools.ts', // an argument check (R21): is this a tool's answer at all
      'src/util/values.ts', // where it is defined
    ];
    expect(filesMatching(/\bisPromiseLike\(/, ['src/util/answer.ts', ...choosing])).toEqual([]);
    // rxjs's own adapters for it: `from(aPromise)` and `of(aValue)` beside an isObservable check
    expect(filesMatching(/isObservable\([^)]*\)\s*\?[^;]*\bfrom\(/, [])).toEqual([]);
  });

  it('R31: one count check: no file but src/util/values.ts asks "an integer, or Infinity" by hand', () => {
    expect(filesMatching(/Infinity\s*(?:\|\||&&)[^;{]*Number\.isInteger/, ['src/util/values.ts'])).toEqual([]);
  });

  it("R31: one listener on a given signal: no file but src/util/abort-signal.ts adds an 'abort' listener by hand", () => {
    expect(filesMatching(/addEventListener\(\s*'abort'/, ['src/util/abort-signal.ts'])).toEqual([]);
  });

  it('R31: one phase join: only joinPhase holds a phase or adds it to the subscriber after it', () => {
    expect(filesMatching(/\)\.hold\(/, ['src/loop/turn-phase.ts'])).toEqual([]);
    const turnPhase = sources.find(({ file }) => file === 'src/loop/turn-phase.ts')!.text;
    expect(turnPhase.match(/\)\.hold\(/g)).toHaveLength(1);
  });
});
