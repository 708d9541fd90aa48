'use strict';
// L6, workload `L6` of run.js (a script of its own, `SCRIPTS` in run.js): 10,000 calls through one limiter, in
// their order and in memory that follows what waits, not how many passed. What a limited call with a free slot
// costs is W1's paired row `rx-tool-loop+limited` (workload.js, contenders/rx-tool-loop-limited.js): it runs there,
// paired with the same loop unlimited, as O4's operator is.
//
//   npm run build && node --expose-gc bench/limits.js [DIST]
//
// DIST is a CommonJS build of the library (default: the bench's, lib/paths.js). 10,000 calls through a limiter of
// `maxConcurrent: 1`, each released by hand: their start order is checked as they start, and the heap is read with
// 10,000 waiting at once, then after 10,000 and after 100,000 passed with ten always waiting.
//
// The free slot's cost in instructions is machinery.js's `W1L` against its `W1`, counted under callgrind at 4,000
// and 7,000 conversations (below 4,000, TurboFan's compiling is a large and shifting share: findings.md, L6).
const path = require('node:path');

const args = process.argv.slice(2);
const dist = args.find((arg) => !arg.startsWith('--')) ?? path.dirname(require('./lib/paths.js').ENTRY);
if (typeof global.gc !== 'function') throw new Error('run it with node --expose-gc');
const lib = require(path.resolve(dist));
const rxjs = require(require.resolve('rxjs', { paths: [path.resolve(dist)] }));

/** A limiter of one slot whose calls end when released, in order; `calls` pass with `waiting` always queued. */
function queue(calls, waiting) {
  const limiter = lib.createLimiter({ maxConcurrent: 1 });
  // the start order, counted as the calls start: nothing of the bench grows with `calls`
  let started = 0;
  let inOrder = 0;
  let release;
  const input = { messages: [{ role: 'user', content: 'hi' }], tools: [] };
  const call = (i) =>
    lib
      .limited(
        () =>
          new rxjs.Observable((subscriber) => {
            if (i === started++) inOrder++;
            release = () => subscriber.complete();
          }),
        limiter,
      )(input)
      .subscribe();
  let next = 0;
  for (; next < Math.min(calls, waiting + 1); next++) call(next);
  global.gc();
  const heapWaiting = process.memoryUsage().heapUsed;
  while (release !== undefined) {
    const go = release;
    release = undefined;
    if (next < calls) call(next++);
    go();
  }
  global.gc();
  const heapAfter = process.memoryUsage().heapUsed;
  const { state } = limiter;
  if (state.running !== 0 || state.waiting !== 0) throw new Error(`the limiter kept calls: ${JSON.stringify(state)}`);
  return { heapWaiting, heapAfter, started, inOrder };
}

global.gc();
const base = process.memoryUsage().heapUsed;
const allAtOnce = queue(10_000, 10_000);
const tenWaiting10k = queue(10_000, 10);
const tenWaiting100k = queue(100_000, 10);
const over = (bytes) => bytes - base;
const result = {
  workload: 'L6',
  calls: 10_000,
  // each call counted as it starts: how many started, and how many of them as the n-th call started n-th
  started: allAtOnce.started,
  inOrder: allAtOnce.inOrder,
  waitingAtOnce: { heap: over(allAtOnce.heapWaiting), perCall: over(allAtOnce.heapWaiting) / 10_000, after: over(allAtOnce.heapAfter) },
  tenWaiting: { after10k: over(tenWaiting10k.heapAfter), after100k: over(tenWaiting100k.heapAfter) },
};
if (process.env.BENCH_RUN) process.stdout.write(`BENCH_RESULT ${JSON.stringify(result)}\n`);
else {
  const kib = (bytes) => `${(bytes / 1024).toFixed(0)} KiB`;
  console.log(`L6 10,000 calls through one limiter (maxConcurrent 1): ${result.started} started, ${result.inOrder} of them in their order`);
  console.log(`  10,000 waiting at once: heap ${kib(result.waitingAtOnce.heap)} over the start (${result.waitingAtOnce.perCall.toFixed(0)} B a waiting call), after they all passed ${kib(result.waitingAtOnce.after)}`);
  console.log(`  ten always waiting: after 10,000 passed ${kib(result.tenWaiting.after10k)}, after 100,000 passed ${kib(result.tenWaiting.after100k)}`);
}
