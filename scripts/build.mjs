// Builds dist/cjs (CommonJS) and dist/esm (ES modules), each with its .d.ts, with tsc alone.
// Each folder gets a package.json that says its module format, so that Node and TypeScript read
// dist/esm/*.js and *.d.ts as ES modules although the package itself is CommonJS.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
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
