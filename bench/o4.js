'use strict';
// O4 in one process, paired: W1's workload (200 conversations × 10 turns, 5 deltas and one `echo` call a
// turn, one conversation after the other) through the loop alone, through a bare `tap` (the least any
// operator adds: one subscriber layer) and through `traceLoop` on a no-op tracer (@opentelemetry/api, no
// SDK). Each against the loop alone in pairs of repetitions run back to back, in alternating order; per pair
// the ratio of wall time and of CPU time (process.cpuUsage: this process's own, GC threads included, less
// moved than wall time by the machine's other work). No gc() between repetitions (workload.js: a forced
// gc() deoptimises RxJS code), unless --gc: then a gc() before each run, as workload.js's paired runs do.
// Prints the median ratios; writes nothing.
//
//   npm run build && node --expose-gc bench/o4.js [--pairs=200] [--gc] [--before=DIR]
//
// --before=DIR: also pairs the traceLoop of another build (DIR holds its otel/index.js, e.g. a copy of
// dist/cjs made before a change, kept inside the checkout so that it loads the root's rxjs) with this
// build's, both over this build's loop.
const path = require('node:path');
const { lib, rxjs, checkOneRxjs, gc, stats } = require('./lib/env.js');
const { DIST } = require('./lib/paths.js');
const S = require('./lib/script.js');
const { forLibrary } = require('./contenders/rx-tool-loop.js');

const flag = (name) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1];
const PAIRS = Number(flag('pairs') ?? 200);
const BEFORE = flag('before');
const GC = process.argv.includes('--gc');
const spec = { conversations: 200, turns: 10, deltas: 5, calls: 1, sequential: true };
const turns = spec.conversations * spec.turns;

/** traceLoop of the build in `dist` on the no-op tracer; its Observables must be the bench's rxjs. */
function noopTraced(dist) {
  const { traceLoop } = require(path.join(dist, 'otel', 'index.js'));
  const { trace } = require(require.resolve('@opentelemetry/api', { paths: [path.join(dist, 'otel')] }));
  const operator = traceLoop({ tracer: trace.getTracer('bench'), agentName: 'bench', model: 'fake' });
  if (!(operator(rxjs.EMPTY) instanceof rxjs.Observable)) throw new Error(`bench: ${dist} uses another rxjs instance than the bench`);
  return operator;
}

const contender = (name, loadThrough) => forLibrary({ name, label: name, loadLibrary: () => lib, loadThrough });
const alone = contender('alone');
const variants = [
  [contender('tap', () => rxjs.tap({ next() {} })), alone],
  [contender('traceLoop', () => noopTraced(DIST)), alone],
];
if (BEFORE) variants.push([variants[1][0], contender('before', () => noopTraced(path.resolve(BEFORE)))]);

async function once(who) {
  const counters = S.newCounters();
  const echo = S.makeEcho(spec, counters);
  if (GC) gc();
  const cpu = process.cpuUsage();
  const start = performance.now();
  await who.run(spec, counters, echo);
  const wall = performance.now() - start;
  const used = process.cpuUsage(cpu);
  S.checkCounts(spec, counters);
  return { wall, cpu: (used.user + used.system) / 1000 };
}

const fmt = (result) => `${result.median.toFixed(3)} (${result.min.toFixed(2)} – ${result.max.toFixed(2)})`;

(async () => {
  checkOneRxjs();
  const everyone = new Set(variants.flatMap(([who, base]) => [who, base]));
  for (const who of everyone) for (let i = 0; i < 10; i++) await once(who); // warm-up
  console.log(`O4: W1's workload, ${PAIRS} pairs each, alternating order${GC ? ', a gc() before each run' : ''}; median ratio (min – max), µs per turn (median)`);
  for (const [who, base] of variants) {
    const wall = [];
    const cpu = [];
    const us = { who: [], base: [] };
    for (let i = 0; i < PAIRS; i++) {
      const [a, b] = i % 2 === 0 ? [await once(who), await once(base)] : [await once(base), await once(who)].reverse();
      wall.push(a.wall / b.wall);
      cpu.push(a.cpu / b.cpu);
      us.who.push((a.wall * 1000) / turns);
      us.base.push((b.wall * 1000) / turns);
    }
    console.log(`${`${who.name} ÷ ${base.name}`.padEnd(20)} wall ${fmt(stats(wall))}, cpu ${fmt(stats(cpu))}; ${stats(us.who).median.toFixed(2)} vs ${stats(us.base).median.toFixed(2)} µs per turn`);
  }
})().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
