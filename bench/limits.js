'use strict';
// L6, outside run.js: what `limited` costs a call with a free slot, against W1's conversation without it, and
// 10,000 calls through one limiter in their order and in memory that follows what waits, not how many passed.
//
//   npm run build && node --expose-gc bench/limits.js [DIST] [--rounds=N]
//
// DIST is a CommonJS build of the library (default dist/cjs). W1's shape (lib/script.js: 10-turn conversations
// of the instant fake model, 5 deltas and one synchronous `echo` a turn) runs plain and through
// `limited(provider, createLimiter({ maxConcurrent: 4 }))`, in interleaved rounds on CPU time; the target is a
// ratio of at most 1.05 (L6). Then 10,000 calls through a limiter of `maxConcurrent: 1` (each released by hand):
// their start order is checked, and the heap after the queue passed 10,000 and 100,000 calls, with ten always
// waiting, is printed beside the heap with 10,000 waiting at once.
const path = require('node:path');
const S = require('./lib/script.js');
const { fakeProviderOn } = require('./lib/rx-provider.js');

const args = process.argv.slice(2);
const dist = args.find((arg) => !arg.startsWith('--')) ?? path.join(__dirname, '..', 'dist', 'cjs');
const rounds = Number((args.find((arg) => arg.startsWith('--rounds=')) ?? '--rounds=21').slice('--rounds='.length));
if (typeof global.gc !== 'function') throw new Error('run it with node --expose-gc');
const lib = require(path.resolve(dist));
const rxjs = require(require.resolve('rxjs', { paths: [path.resolve(dist)] }));

const spec = { conversations: 200, turns: 10, deltas: 5, calls: 1, usage: { inputTokens: 10, outputTokens: 5 } };

/** CPU µs per turn of W1's conversations, each through `wrap(provider)`. */
function w1(wrap) {
  const counters = S.newCounters();
  const echo = S.makeEcho(spec, counters);
  const registry = new lib.ToolRegistry().register({ name: 'echo', description: S.ECHO_DESCRIPTION, input: { text: 'the text', turn: 'the turn' }, handler: (input) => echo(input) });
  const start = process.cpuUsage();
  for (let c = 0; c < spec.conversations; c++) {
    const loop = lib.runEventedToolLoop({ provider: wrap(fakeProviderOn(rxjs, spec, counters)), registry, messages: [{ role: 'user', content: 'hi' }], maxTurns: spec.turns });
    let ended = false;
    loop.subscribe({ next: S.counting(counters, () => (ended = true)) });
    if (!ended) throw new Error('the loop did not end synchronously');
  }
  const used = process.cpuUsage(start);
  S.checkCounts(spec, counters);
  return (used.user + used.system) / (spec.conversations * spec.turns);
}

const median = (values) => values.slice().sort((a, b) => a - b)[Math.floor(values.length / 2)];

function freeSlot() {
  const limiter = lib.createLimiter({ maxConcurrent: 4 });
  const rows = { plain: [], limited: [], ratio: [] };
  for (let i = 0; i < 5; i++) (w1((p) => p), w1((p) => lib.limited(p, limiter))); // warm up
  for (let r = 0; r < rounds; r++) {
    global.gc();
    const first = r % 2 === 0;
    const a = first ? w1((p) => p) : w1((p) => lib.limited(p, limiter));
    global.gc();
    const b = first ? w1((p) => lib.limited(p, limiter)) : w1((p) => p);
    const [plain, limited] = first ? [a, b] : [b, a];
    rows.plain.push(plain);
    rows.limited.push(limited);
    rows.ratio.push(limited / plain);
  }
  if (limiter.state.running !== 0 || limiter.state.waiting !== 0) throw new Error('the limiter kept a call');
  return { plain: median(rows.plain), limited: median(rows.limited), ratio: median(rows.ratio), low: Math.min(...rows.ratio), high: Math.max(...rows.ratio) };
}

/** A limiter of one slot whose calls end when released, in order; `calls` pass with `waiting` always queued. */
function queue(calls, waiting) {
  const limiter = lib.createLimiter({ maxConcurrent: 1 });
  let expected = 0; // the start order, checked as the calls start: nothing of the bench grows with `calls`
  let release;
  const input = { messages: [{ role: 'user', content: 'hi' }], tools: [] };
  const call = (i) =>
    lib
      .limited(
        () =>
          new rxjs.Observable((subscriber) => {
            if (i !== expected++) throw new Error(`call ${i} started as call ${expected - 1}: not FIFO`);
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
  if (expected !== calls) throw new Error(`${expected} of ${calls} calls started`);
  return { heapWaiting, heapAfter, state: limiter.state };
}

// --count=plain|limited --conversations=N: run W1's conversations once and exit, to be counted under callgrind
// (`valgrind --tool=callgrind node --single-threaded --predictable --hash-seed=1 --random-seed=1 --expose-gc
// bench/limits.js --count=limited --conversations=7000`; the count at 7,000 less the count at 4,000 is the cost of
// 3,000 conversations alone, without Node's start and most of TurboFan's compiling, which still weighs ~5,600
// instructions a turn between 1,600 and 4,000 and moves with what gets inlined: see findings.md, L6)
const counting = args.find((arg) => arg.startsWith('--count='))?.slice('--count='.length);
if (counting !== undefined) {
  if (counting !== 'plain' && counting !== 'limited') throw new Error('--count=plain|limited');
  spec.conversations = Number((args.find((arg) => arg.startsWith('--conversations=')) ?? '--conversations=200').slice('--conversations='.length));
  const limiter = lib.createLimiter({ maxConcurrent: 4 });
  w1(counting === 'plain' ? (p) => p : (p) => lib.limited(p, limiter));
  process.exit(0);
}

const slot = freeSlot();
console.log(`L6 a limited provider with a free slot, W1 (${spec.conversations} conversations of ${spec.turns} turns, ${rounds} interleaved rounds, CPU):`);
console.log(`  plain ${slot.plain.toFixed(3)} µs/turn, limited ${slot.limited.toFixed(3)} µs/turn: ${slot.ratio.toFixed(3)}× (rounds ${slot.low.toFixed(3)}–${slot.high.toFixed(3)}); target ≤ 1.05 ${slot.ratio <= 1.05 ? 'met' : 'MISSED'}`);

global.gc();
const base = process.memoryUsage().heapUsed;
const allAtOnce = queue(10_000, 10_000);
const tenWaiting10k = queue(10_000, 10);
const tenWaiting100k = queue(100_000, 10);
const kb = (bytes) => `${((bytes - base) / 1024).toFixed(0)} KiB`;
console.log('L6 10,000 calls through one limiter (maxConcurrent 1): started in their order (checked)');
console.log(`  10,000 waiting at once: heap ${kb(allAtOnce.heapWaiting)} over the start (${((allAtOnce.heapWaiting - base) / 10_000).toFixed(0)} B a waiting call), after they all passed ${kb(allAtOnce.heapAfter)}`);
console.log(`  ten always waiting: after 10,000 passed ${kb(tenWaiting10k.heapAfter)}, after 100,000 passed ${kb(tenWaiting100k.heapAfter)}`);
