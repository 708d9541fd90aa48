import ts from 'typescript';
import { readFileSync } from 'node:fs';

/**
 * The names a TypeScript file exports, read from its source: what it passes on (`export { a } from …`,
 * `export type { B }`) and what it declares with `export` (`export function c`, `export const d`).
 * `export *` is refused: the documents' checks need the names.
 */
export function exportedNames(path: string): string[] {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest);
  return source.statements.flatMap((statement) => {
    if (ts.isExportDeclaration(statement)) {
      if (statement.exportClause === undefined) throw new Error(`${path}: export * is not read here`);
      return ts.isNamedExports(statement.exportClause) ? statement.exportClause.elements.map((element) => element.name.text) : [];
    }
    const exported = ts.canHaveModifiers(statement) && ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    return exported ? declaredNames(statement) : [];
  });
}

/** The names a top-level statement declares, or imports. */
export function declaredNames(statement: ts.Statement): string[] {
  if (ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement) || ts.isEnumDeclaration(statement)) return [statement.name.text];
  if (ts.isClassDeclaration(statement) || ts.isFunctionDeclaration(statement)) return statement.name === undefined ? [] : [statement.name.text];
  if (ts.isModuleDeclaration(statement) && ts.isIdentifier(statement.name)) return [statement.name.text];
  if (ts.isVariableStatement(statement)) return statement.declarationList.declarations.flatMap((d) => (ts.isIdentifier(d.name) ? [d.name.text] : []));
  if (ts.isImportDeclaration(statement)) {
    const clause = statement.importClause;
    if (clause === undefined) return [];
    const named = clause.namedBindings;
    return [
      ...(clause.name === undefined ? [] : [clause.name.text]),
      ...(named === undefined ? [] : ts.isNamespaceImport(named) ? [named.name.text] : named.elements.map((element) => element.name.text)),
    ];
  }
  return [];
}
