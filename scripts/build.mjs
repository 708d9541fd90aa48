// Builds dist/cjs (CommonJS) and dist/esm (ES modules), each with its .d.ts, with tsc alone: every entry of
// package.json's "exports" (`.`, `./testing`, `./sessions`, `./sessions/testing`, `./restate`) is a file of that build.
// Each folder gets a package.json that says its module format, so that Node and TypeScript read
// dist/esm/*.js and *.d.ts as ES modules although the package itself is CommonJS.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
rmSync('dist', { recursive: true, force: true });
for (const [config, folder, type] of [
  ['tsconfig.build.json', 'dist/cjs', 'commonjs'],
  ['tsconfig.build.esm.json', 'dist/esm', 'module'],
]) {
  execFileSync(process.execPath, [tsc, '-p', config], { stdio: 'inherit' });
  mkdirSync(folder, { recursive: true });
  writeFileSync(`${folder}/package.json`, `${JSON.stringify({ type }, null, 2)}\n`);
}

// each file package.json points at was built: a new subpath must have its index.ts in src/
const { exports } = JSON.parse(readFileSync('package.json', 'utf8'));
const targets = Object.values(exports).flatMap((entry) => (typeof entry === 'string' ? [entry] : Object.values(entry).flatMap((side) => Object.values(side))));
const missing = targets.filter((file) => !existsSync(file));
if (missing.length > 0) throw new Error(`build: package.json exports files that were not built: ${missing.join(', ')}`);
