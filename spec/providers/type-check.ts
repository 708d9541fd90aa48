import { join } from 'node:path';
import * as ts from 'typescript';

const root = join(__dirname, '..', '..');

/**
 * The compiler's complaints about each of `bodies`, each written as an object literal of type `typeName` into a
 * source file that exists only in memory (`preamble`: its imports and type declarations), so that an official
 * SDK's request types check what a provider sends — excess property checks included: a field the API does not
 * know fails as much as a missing or mistyped one. `[]` for a body that type-checks.
 */
export function typeErrors(preamble: string, typeName: string, bodies: readonly object[]): string[][] {
  // the in-memory file sits in this folder, so that the SDK resolves from the repository's node_modules
  const virtualFile = join(__dirname, '__request-bodies__.ts');
  const lines = preamble.split('\n');
  const firstLines = bodies.map((body, n) => {
    const first = lines.length;
    lines.push(...`export const body${n}: ${typeName} = ${JSON.stringify(body, null, 2)};`.split('\n'));
    return first;
  });
  const source = lines.join('\n');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2023,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    types: [],
    rootDir: root,
  };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (name) => name === virtualFile || fileExists.call(host, name);
  host.readFile = (name) => (name === virtualFile ? source : readFile.call(host, name));
  host.getSourceFile = (name, version, onError, shouldCreate) =>
    name === virtualFile ? ts.createSourceFile(name, source, version, true) : getSourceFile.call(host, name, version, onError, shouldCreate);
  const program = ts.createProgram([virtualFile], options, host);
  const errors = bodies.map((): string[] => []);
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const line = diagnostic.file && diagnostic.start !== undefined ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line : -1;
    const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    // a complaint outside every body (the preamble) counts against all of them
    const owner = firstLines.findLastIndex((first) => first <= line);
    if (owner < 0) for (const list of errors) list.push(text);
    else errors[owner]!.push(`line ${line - firstLines[owner]! + 1}: ${text}`);
  }
  return errors;
}
