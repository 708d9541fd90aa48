'use strict';
// Where things are, without loading anything: the root, this folder, and the library build to measure.
//
// The library is the root package's CommonJS entry as `require` finds it (package.json "main": today
// dist/cjs/index.js), or, with RX_TOOL_LOOP_DIST, another build: a folder holding index.js, or cjs/index.js.
const fs = require('node:fs');
const path = require('node:path');

const BENCH = path.resolve(__dirname, '..');
const ROOT = path.resolve(BENCH, '..');

function libraryEntry() {
  const other = process.env.RX_TOOL_LOOP_DIST;
  if (other) {
    const dir = path.resolve(other);
    const found = [path.join(dir, 'index.js'), path.join(dir, 'cjs', 'index.js')].find((file) => fs.existsSync(file));
    if (!found) throw new Error(`bench: RX_TOOL_LOOP_DIST=${other} holds neither index.js nor cjs/index.js`);
    return found;
  }
  try {
    return require.resolve(ROOT);
  } catch {
    throw new Error('bench: the library is not built: run `npm run build` at the root first');
  }
}

const ENTRY = libraryEntry();
/** The folder of the library's entry: its modules are "the library" in profiles. */
const DIST = path.dirname(ENTRY);

module.exports = { BENCH, ROOT, ENTRY, DIST };
