import { join } from 'node:path';
import * as ts from 'typescript';

const root = join(__dirname, '..', '..');

/**
 * The compiler's complaints about each of `bodies`, each written as an object literal of the official SDK's
 * request type (`typeName`, imported by `importLine`) into a source file that exists only in memory: `[]` for a
 * body that type-checks. Excess property checks included, so a field the API does not know fails as much as a
 * missing or mistyped one. The file sits in spec/providers, so that the SDK resolves from the repository's
 * node_modules.
 *
 * ```ts
 * typeErrors("import type { MessageCreateParamsStreaming } from '@anthropic-ai/sdk/resources/messages';", 'MessageCreateParamsStreaming', [body]);
 * ```
 */
export function typeErrors(importLine: string, typeName: string, bodies: readonly object[]): string[][] {
  const virtualFile = join(__dirname, `__${typeName}-bodies__.ts`);
  const lines = [importLine];
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

/** P19: every `cache_control` in a request body, as the path to the block that carries it (`['system.0', 'tools.1']`). */
export function breakpoints(body: unknown, path = ''): string[] {
  if (typeof body !== 'object' || body === null) return [];
  return Object.entries(body).flatMap(([key, value]) => (key === 'cache_control' ? [path] : breakpoints(value, path === '' ? key : `${path}.${key}`)));
}
