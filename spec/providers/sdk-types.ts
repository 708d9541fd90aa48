/**
 * Request bodies type-checked against an official SDK's request type (a pinned devDependency): each body is
 * written as an object literal of that type into a source file that exists only in memory, and the TypeScript
 * compiler checks it — excess property checks included, so a field the API does not know fails as much as a
 * missing or mistyped one. One program for all the bodies: the compiler loads the SDK once.
 */
import { join } from 'node:path';
import * as ts from 'typescript';

const root = join(__dirname, '..', '..');
/** The in-memory file sits in this folder, so that the SDKs resolve from the repository's node_modules. */
const virtualFile = join(__dirname, '__sdk-bodies__.ts');

/**
 * The compiler's complaints about each of `bodies`, each typed as `typeName` imported from `module`: `[]` for one
 * that type-checks.
 *
 * ```ts
 * typeErrors('openai/resources/responses/responses', 'ResponseCreateParamsStreaming', [body]); // [[]]
 * ```
 */
export function typeErrors(module: string, typeName: string, bodies: readonly object[]): string[][] {
  return typeErrorsAfter(`import type { ${typeName} } from '${module}';`, typeName, bodies);
}

/**
 * The same, with `typeName` declared by `preamble` (imports and type declarations): for an API whose SDK has no
 * type of the REST body itself, assembled from the SDK's own types (Gemini's).
 */
export function typeErrorsAfter(preamble: string, typeName: string, bodies: readonly object[]): string[][] {
  return errorsOf(preamble, bodies.map((body) => ({ type: typeName, body })));
}

/** A body and the SDK type it must be: `type` exported by the module `from` (`openai/resources/responses/responses`). */
export interface TypedBody {
  type: string;
  from: string;
  body: object;
}

/** The same for bodies of several SDK types at once (J1: one request per API), in one program. */
export function typedBodyErrors(bodies: readonly TypedBody[]): string[][] {
  const imports = [...new Set(bodies.map(({ type, from }) => `import type { ${type} } from '${from}';`))];
  return errorsOf(imports.join('\n'), bodies);
}

function errorsOf(preamble: string, bodies: readonly { type: string; body: object }[]): string[][] {
  const lines = preamble.split('\n');
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
    lib: ['lib.es2023.d.ts'], // no DOM: less to load
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
    // a complaint outside every body (the import) counts against all of them
    const owner = firstLines.findLastIndex((first) => first <= line);
    if (owner < 0) for (const list of errors) list.push(text);
    else errors[owner]!.push(`line ${line - firstLines[owner]! + 1}: ${text}`);
  }
  return errors;
}
