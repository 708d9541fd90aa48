/**
 * R32: every ```ts block of README.md, CONTRACT.md and the guides of docs/ (R37) compiles against the package's exports, in one
 * TypeScript program (the entries mapped to src/ as tsconfig.json maps them), unless the line above it is
 * `<!-- excerpt -->` (or `<!-- excerpt: why -->`).
 *
 * - A block of code (a snippet that does something) is compiled as a module of its own: it imports what it
 *   uses, and declares what it takes as given (`declare const provider: Provider;`).
 * - A block of declarations only (interfaces, types, classes and functions without bodies, `const NAME: T;`)
 *   states the API: it is compiled as ambient declarations (`declare` added where TypeScript needs it), and
 *   each name it declares is compared with the export of that name from the package's entries — both ways
 *   assignable, with the same keys (so a field added, dropped, renamed or retyped on either side fails). Names
 *   it uses without declaring come from the entries (and `Observable` and friends from rxjs), as they do in
 *   the document's prose.
 */
import ts from 'typescript';
import { join, resolve } from 'node:path';
import { DOCUMENTS, GUIDES, type DocBlock, docBlocks, isExcerpt, where } from './support/doc-blocks.js';
import { declaredNames, exportedNames } from './support/exported-names.js';

const root = resolve(__dirname, '..', '..');
const here = join(root, 'spec', 'docs');

/** The package's entries, in the order a name is looked up (the main entry first). */
const ENTRIES: Record<string, string> = {
  'rx-tool-loop': 'src/index.ts',
  'rx-tool-loop/testing': 'src/testing/index.ts',
  'rx-tool-loop/sessions': 'src/sessions/index.ts',
  'rx-tool-loop/sessions/testing': 'src/sessions/testing/index.ts',
  'rx-tool-loop/mcp': 'src/mcp/index.ts',
  'rx-tool-loop/otel': 'src/otel/index.ts',
  'rx-tool-loop/ai-sdk': 'src/ai-sdk/index.ts',
  'rx-tool-loop/restate': 'src/restate/index.ts',
  'rx-tool-loop/ui': 'src/ui/index.ts',
  'rx-tool-loop/acp': 'src/acp/index.ts',
};
/** What the documents' declarations take from rxjs without importing it. */
const RXJS: Record<string, string[]> = {
  rxjs: ['MonoTypeOperatorFunction', 'Observable', 'ObservableInput', 'OperatorFunction', 'SchedulerLike'],
  'rxjs/testing': ['RunHelpers'],
};

/** Whether a statement only declares: no body, no initializer but a literal one (`const MAX_TURNS = 8;`). */
function onlyDeclares(statement: ts.Statement): boolean {
  if (ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement) || ts.isImportDeclaration(statement)) return true;
  if (ts.isModuleDeclaration(statement)) return true;
  if (ts.isFunctionDeclaration(statement)) return statement.body === undefined;
  if (ts.isClassDeclaration(statement))
    return statement.members.every((member) => !(ts.isMethodDeclaration(member) || ts.isConstructorDeclaration(member)) || member.body === undefined)
      && statement.members.every((member) => !ts.isPropertyDeclaration(member) || member.initializer === undefined);
  if (ts.isVariableStatement(statement))
    return statement.declarationList.declarations.every((d) => d.initializer === undefined || ts.isLiteralExpression(d.initializer));
  return false;
}

/** The suffix of a documented class's name in its block's file. */
const DOCUMENTED = '__documented';

const blocks = DOCUMENTS.flatMap((file) => docBlocks(root, file)).filter((block) => block.lang === 'ts');
const entryExports = Object.entries(ENTRIES).map(([entry, file]) => ({ entry, names: exportedNames(join(root, file)) }));
/** Each exported name, and the first entry that exports it. */
const entryOf = new Map<string, string>();
for (const { entry, names } of entryExports) for (const name of names) if (!entryOf.has(name)) entryOf.set(name, entry);
const alias = (entry: string) => `E_${entry.replace(/\W/g, '_')}`;

/** `import type { … } from …` of every name of rxjs and the entries that `local` does not declare, each from where it comes. */
function given(local: Set<string>): string {
  const lines: string[] = [];
  for (const [module, names] of Object.entries(RXJS)) {
    const missing = names.filter((name) => !local.has(name));
    if (missing.length > 0) lines.push(`import type { ${missing.join(', ')} } from '${module}';`);
  }
  for (const { entry, names } of entryExports) {
    const missing = names.filter((name) => !local.has(name) && entryOf.get(name) === entry);
    if (missing.length > 0) lines.push(`import type { ${missing.join(', ')} } from '${entry}';`);
  }
  return lines.join(' ');
}

function lineOf(source: ts.SourceFile, node: ts.Node): number {
  return source.getLineAndCharacterOfPosition(node.getStart(source)).line;
}

/** The type arguments that instantiate a declaration for comparison: each parameter's constraint, or a probe type. */
function probes(parameters: ts.NodeArray<ts.TypeParameterDeclaration> | undefined, source: ts.SourceFile): string {
  if (parameters === undefined || parameters.length === 0) return '';
  return `<${parameters.map((p) => (p.constraint === undefined ? 'Probe' : p.constraint.getText(source))).join(', ')}>`;
}

/** [what, the document's type, the export's type] for each thing a declaration states. */
function comparisonsOf(statement: ts.Statement, source: ts.SourceFile, doc: string, real: string): [string, string, string][] {
  if (ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement)) {
    const name = statement.name.text;
    const args = probes(statement.typeParameters, source);
    return [[`type ${name}`, `${doc}.${name}${args}`, `${real}.${name}${args}`]];
  }
  if (ts.isClassDeclaration(statement) && statement.name !== undefined) {
    const name = statement.name.text.slice(0, -DOCUMENTED.length);
    return [
      [`class ${name}`, `Members<${doc}.${name}${DOCUMENTED}>`, `Members<${real}.${name}>`],
      [`class ${name} (its static side)`, `Statics<typeof ${doc}.${name}${DOCUMENTED}>`, `Statics<typeof ${real}.${name}>`],
    ];
  }
  if (ts.isModuleDeclaration(statement) && ts.isIdentifier(statement.name) && statement.body !== undefined && ts.isModuleBlock(statement.body)) {
    const name = statement.name.text;
    return statement.body.statements.flatMap((member): [string, string, string][] => {
      if (!ts.isInterfaceDeclaration(member) && !ts.isTypeAliasDeclaration(member)) return [];
      const args = probes(member.typeParameters, source);
      return [[`type ${name}.${member.name.text}`, `${doc}.${name}.${member.name.text}${args}`, `${real}.${name}.${member.name.text}${args}`]];
    });
  }
  const kind = ts.isFunctionDeclaration(statement) ? 'function' : 'const';
  return declaredNames(statement).map((name): [string, string, string] => [`${kind} ${name}`, `typeof ${doc}.${name}`, `typeof ${real}.${name}`]);
}

interface Virtual {
  block: DocBlock;
  path: string;
  /** lines of the file before the block's first line */
  offset: number;
}

const virtual: Virtual[] = [];
const sources = new Map<string, string>();
/** Each line of the check file that compares something, and what it compares. */
const comparisons = new Map<number, string>();
const problems: string[] = [];
const checkPath = join(here, 'docs-declarations.check.ts');
const checkLines = [
  "type Shape<T> = T extends unknown ? [T, keyof T] : never; // each member of a union with its keys",
  'type Same<A, B> = [Shape<A>] extends [Shape<B>] ? ([Shape<B>] extends [Shape<A>] ? true : false) : false;',
  '// the public members of a class instance, a method that returns `this` read as returning "this"',
  "type Members<T> = { [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => [R] extends [T] ? 'this' : R : T[K] };",
  "type Statics<T> = { [K in Exclude<keyof T, 'prototype'>]: T[K] };",
  "interface Probe { readonly probe: 'probe' }",
  given(new Set()),
  ...Object.keys(ENTRIES).map((entry) => `import type * as ${alias(entry)} from '${entry}';`),
];

blocks.filter((block) => !isExcerpt(block)).forEach((block, index) => {
  let parsed = ts.createSourceFile('block.ts', block.text, ts.ScriptTarget.Latest, true);
  const declarations = parsed.statements.length > 0 && parsed.statements.every(onlyDeclares);
  let text = block.text;
  if (declarations) {
    // A documented class is compared under a name of its own; everything else in the block refers to the real
    // one, whose private members make it a type no documented copy is assignable to.
    // It is compiled as a .ts file with `declare` before what has no body (a .d.ts would go unchecked under
    // skipLibCheck), so that a name it cannot resolve is an error, not a type that matches anything.
    for (const statement of [...parsed.statements].reverse()) {
      if (ts.isClassDeclaration(statement) && statement.name !== undefined) {
        text = text.slice(0, statement.name.getEnd()) + DOCUMENTED + text.slice(statement.name.getEnd());
      }
      const ambient = ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement) || ts.isVariableStatement(statement) || ts.isModuleDeclaration(statement);
      const declared = ts.canHaveModifiers(statement) && ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.DeclareKeyword);
      if (ambient && !declared) text = text.slice(0, statement.getStart(parsed)) + 'declare ' + text.slice(statement.getStart(parsed));
    }
    parsed = ts.createSourceFile('block.ts', text, ts.ScriptTarget.Latest, true);
  }
  const base = `${block.file.replace(/\W/g, '-')}-${block.line}`;
  // one line before the block: a declaration block takes what it does not declare from the entries and rxjs
  const local = new Set(parsed.statements.flatMap(declaredNames));
  const path = join(here, `${base}.ts`);
  // a declaration block exports what it declares, to be compared; a block of code is a module of its own
  const declared = [...new Set(parsed.statements.flatMap((s) => (ts.isImportDeclaration(s) ? [] : declaredNames(s))))];
  const exported = declarations ? `export { ${declared.join(', ')} };` : 'export {};';
  sources.set(path, `${declarations ? given(local) : ''}\n${text}\n${exported}\n`);
  virtual.push({ block, path, offset: 1 });
  if (!declarations) return;
  const doc = `D${index}`;
  checkLines.push(`import type * as ${doc} from './${base}.js';`);
  const seen = new Set<string>(); // overloads state one function
  for (const statement of parsed.statements) {
    if (ts.isImportDeclaration(statement)) continue;
    for (const declared of declaredNames(statement)) {
      const name = declared.endsWith(DOCUMENTED) ? declared.slice(0, -DOCUMENTED.length) : declared;
      const entry = entryOf.get(name);
      const at = where(block, lineOf(parsed, statement));
      if (entry === undefined) {
        problems.push(`${at}: ${name} is declared here, but no entry of the package exports it`);
        continue;
      }
      if (seen.has(name)) continue;
      seen.add(name);
      for (const [what, mine, theirs] of comparisonsOf(statement, parsed, doc, alias(entry))) {
        comparisons.set(checkLines.length, `${at}: ${what} differs from the one ${entry} exports`);
        checkLines.push(`export const c${checkLines.length}: Same<${mine}, ${theirs}> = true;`);
      }
    }
  }
});
sources.set(checkPath, checkLines.join('\n') + '\n');

/** The repository's compiler options, for a program that resolves the entries to src/ and allows top-level await. */
function compilerOptions(): ts.CompilerOptions {
  const parsed = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
  if (parsed === undefined) throw new Error('tsconfig.json could not be read');
  return {
    ...parsed.options,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    noUnusedLocals: false,
    isolatedModules: false, // a declaration block exports its types by name
    noEmit: true,
    declaration: false,
    sourceMap: false,
    types: ['node', 'jest'],
  };
}

function diagnostics(): string[] {
  const options = compilerOptions();
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (file) => sources.has(file) || fileExists.call(host, file);
  host.readFile = (file) => sources.get(file) ?? readFile.call(host, file);
  host.getSourceFile = (file, language, ...rest) => {
    const text = sources.get(file);
    return text === undefined ? getSourceFile.call(host, file, language, ...rest) : ts.createSourceFile(file, text, language, true);
  };
  const program = ts.createProgram([...sources.keys()], options, host);
  const found: string[] = [];
  // only the documents' files are checked: what they use of src/ is checked as they use it
  const own = [...sources.keys()].map((file) => program.getSourceFile(file)!);
  const all = [...program.getOptionsDiagnostics(), ...own.flatMap((file) => [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)])];
  for (const diagnostic of all) {
    const file = diagnostic.file?.fileName;
    const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    const line = diagnostic.file !== undefined && diagnostic.start !== undefined ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line : -1;
    if (file === checkPath) {
      found.push(comparisons.get(line) ?? `the check of the declarations, line ${line + 1}: ${text}`);
      continue;
    }
    const owner = virtual.find((entry) => entry.path === file);
    // a diagnostic outside the documents' blocks (a library's own types) is not theirs to answer for
    if (owner === undefined) continue;
    found.push(`${where(owner.block, line - owner.offset)}: TS${diagnostic.code} ${text}`);
  }
  return found;
}

describe('R32: the ts blocks of README.md, CONTRACT.md and the guides', () => {
  it('R32, R37: finds blocks of code and blocks of declarations in the README, CONTRACT and the guides', () => {
    expect(blocks.filter((block) => block.file === 'README.md').length).toBeGreaterThan(0);
    expect(blocks.filter((block) => block.file === 'CONTRACT.md').length).toBeGreaterThan(5);
    expect(blocks.filter((block) => GUIDES.includes(block.file)).length).toBeGreaterThan(10);
    expect(comparisons.size).toBeGreaterThan(50);
  });

  it('R32: every ts block not marked an excerpt compiles against the exports, and each declaration equals the exported one', () => {
    expect([...problems, ...diagnostics()]).toEqual([]);
  });
});
