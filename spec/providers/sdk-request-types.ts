/**
 * Request bodies type-checked against an official SDK's request type (P13, J1): each body is written as an object
 * literal of that type into a source file that exists only in memory, and the TypeScript compiler checks it —
 * excess property checks included, so a field the API does not know fails as much as a missing or mistyped one.
 */
import { join } from 'node:path';
import * as ts from 'typescript';

const root = join(__dirname, '..', '..');
/** The in-memory file sits in this folder, so that the SDKs resolve from the repository's node_modules. */
const virtualFile = join(__dirname, '__request-bodies__.ts');

/** A body and the SDK type it must be: `type` exported by the module `from` (`openai/resources/responses/responses`). */
export interface TypedBody {
  type: string;
  from: string;
  body: object;
}

/** The compiler's complaints about each body, `[]` for one that type-checks; one program for all, so each SDK loads once. */
export function typeErrors(bodies: readonly TypedBody[]): string[][] {
  const imports = [...new Set(bodies.map(({ type, from }) => `import type { ${type} } from '${from}';`))];
  const lines = [...imports];
  const firstLines = bodies.map(({ type, body }, n) => {
    const first = lines.length;
    lines.push(...`export const body${n}: ${type} = ${JSON.stringify(body, null, 2)};`.split('\n'));
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
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'], // the SDKs name fetch's types
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
    // a complaint outside every body (an import) counts against all of them
    const owner = firstLines.findLastIndex((first) => first <= line);
    if (owner < 0) for (const list of errors) list.push(text);
    else errors[owner]!.push(`line ${line - firstLines[owner]! + 1}: ${text}`);
  }
  return errors;
}
