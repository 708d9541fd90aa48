'use strict';
// Where the bench gets the library and rxjs from, and the measuring helpers every workload shares.
//
// The library is the root's build (`npm run build`; lib/paths.js finds its CommonJS entry) and rxjs
// is the one that build resolves (the root's node_modules: the library's peer). Contenders that use rxjs themselves take
// it from here, so the whole process holds ONE rxjs instance; `checkOneRxjs` proves it.
const fs = require('node:fs');
const path = require('node:path');

const { ROOT, DIST, BENCH, ENTRY } = require('./paths.js');

function loadLibrary() {
  return require(ENTRY);
}

const lib = loadLibrary();
// resolve rxjs from the library's own folder: exactly the module the library's require('rxjs') gets
const rxjsPath = require.resolve('rxjs', { paths: [DIST] });
const rxjs = require(rxjsPath);

function checkOneRxjs() {
  const probe = lib.runEventedToolLoop({ provider: () => rxjs.EMPTY, registry: new lib.ToolRegistry(), messages: [] });
  if (!(probe instanceof rxjs.Observable)) {
    throw new Error(`bench: the library and the bench use two different rxjs instances (bench: ${rxjsPath})`);
  }
  if (fs.existsSync(path.join(BENCH, 'node_modules', 'rxjs'))) {
    throw new Error('bench: bench/node_modules/rxjs exists: rxjs must come from the root only (remove it from bench/package.json)');
  }
  return rxjsPath;
}

/** High-resolution clock in milliseconds. */
const now = () => performance.now();

function stats(samples) {
  const sorted = samples.slice().sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { median, min: sorted[0], max: sorted[sorted.length - 1], n: sorted.length, samples };
}

function gc() {
  if (typeof global.gc !== 'function') throw new Error('bench: run the workloads with --expose-gc');
  global.gc();
  global.gc();
}

function heapUsed() {
  return process.memoryUsage().heapUsed;
}

/** Resolves once `condition()` holds, checking after each macrotask; rejects after `timeoutMs`. */
function until(condition, timeoutMs = 30000) {
  const start = now();
  return new Promise((resolve, reject) => {
    const check = () => {
      if (condition()) return resolve();
      if (now() - start > timeoutMs) return reject(new Error('bench: timed out waiting for the conversations to pause'));
      setImmediate(check);
    };
    check();
  });
}

function versionOf(pkg) {
  try {
    return JSON.parse(fs.readFileSync(path.join(BENCH, 'node_modules', pkg, 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

module.exports = { ROOT, DIST, BENCH, lib, rxjs, rxjsPath, checkOneRxjs, now, stats, gc, heapUsed, until, versionOf };
