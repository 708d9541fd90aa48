'use strict';
// R33: what a piece of the turn's machinery buys, counted in instructions rather than timed (findings.md,
// 'R33: what the turn's machinery buys'). One workload, synchronous from end to end (the fake instant model
// of lib/script.js, a synchronous `echo`), so the process does nothing else while it runs:
//
//   node --single-threaded bench/machinery.js DIST W1 CONVERSATIONS   W1's conversation (10 turns, 5 deltas, 1 call)
//   node --single-threaded bench/machinery.js DIST W2 DELTAS          one turn of DELTAS text deltas
//   node --single-threaded bench/machinery.js DIST W4 TURNS           one loop of TURNS turns (W4's shape)
//   node --single-threaded bench/machinery.js DIST W1L CONVERSATIONS  W1's, each provider through `limited` (L6:
//                                                                     a free slot of one shared limiter)
//
// DIST is a CommonJS build of the library (dist/cjs, or `tsc -p tsconfig.build.json --outDir DIR` of another
// commit). Under `valgrind --tool=callgrind` the instruction count repeats to a fraction of a percent whatever
// else the machine runs; the count of two sizes, subtracted, is the cost of the extra turns (or deltas) alone,
// without Node's start. Without valgrind it prints the time per turn (or per delta), for a sanity check.
const path = require('node:path');
const S = require('./lib/script.js');
const { fakeProviderOn } = require('./lib/rx-provider.js');

const [dist, workload, size] = process.argv.slice(2);
if (dist === undefined || !['W1', 'W1L', 'W2', 'W4'].includes(workload) || !(Number(size) >= 0)) {
  throw new Error('usage: node bench/machinery.js DIST W1|W1L|W2|W4 SIZE');
}
const lib = require(path.resolve(dist));
const rxjs = require(require.resolve('rxjs', { paths: [path.resolve(dist)] }));

/** `spec`'s conversations one after the other, each provider through `wrap`. */
function run(spec, wrap = (provider) => provider) {
  const counters = S.newCounters();
  const echo = S.makeEcho(spec, counters);
  const registry = new lib.ToolRegistry().register({ name: 'echo', description: S.ECHO_DESCRIPTION, input: { text: 'the text', turn: 'the turn' }, handler: (input) => echo(input) });
  for (let c = 0; c < spec.conversations; c++) {
    const loop = lib.runEventedToolLoop({ provider: wrap(fakeProviderOn(rxjs, spec, counters)), registry, messages: [{ role: 'user', content: 'hi' }], maxTurns: spec.turns });
    let ended = false;
    loop.subscribe({ next: S.counting(counters, () => (ended = true)) });
    if (!ended) throw new Error('the loop did not end synchronously');
  }
  S.checkCounts(spec, counters);
}

const n = Number(size);
const specs = {
  W1: { conversations: n, turns: 10, deltas: 5, calls: 1 },
  W1L: { conversations: n, turns: 10, deltas: 5, calls: 1 },
  W2: { conversations: 1, turns: 1, deltas: n, calls: 0 },
  W4: { conversations: 1, turns: n, deltas: 5, calls: 1 },
};
const spec = specs[workload];
const start = process.hrtime.bigint();
const limiter = lib.createLimiter({ maxConcurrent: 4 });
run(spec, workload === 'W1L' ? (provider) => lib.limited(provider, limiter) : undefined);
const ns = Number(process.hrtime.bigint() - start);
const units = workload === 'W1' || workload === 'W1L' ? n * spec.turns : n;
console.log(`${workload} ${n}: ${(ns / units / 1000).toFixed(3)} µs per ${workload === 'W2' ? 'delta' : 'turn'}`);
