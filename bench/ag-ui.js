'use strict';
// U1's cost: what `toAgUi` (rx-tool-loop/ui) adds per event of a long scripted run, against the same events
// passed through bare. Run by run.js as workload U1 (it prints `BENCH_RESULT {json}`), or alone:
//
//   npm run build && node --expose-gc bench/ag-ui.js [--quick]
//
// The run is recorded once, before the clock: one loop of 200 turns of the scripted provider, each a reasoning
// delta, 20 text deltas and one call streamed in 4 argument deltas, its tool answering at once, usage on every
// reply; ~6,000 loop events. Each round replays them from an array, through `toAgUi` and bare (a `filter` that
// passes all, so both sides pay one operator's subscription), in alternating order, on CPU time; the cost per
// event is the median over rounds of (toAgUi − bare) ÷ the loop events. Target (U1's "Measured"): ≤ 2 µs an event.
const path = require('node:path');
const { DIST } = require('./lib/paths.js');

const QUICK = process.argv.includes('--quick');
const ROUNDS = QUICK ? 7 : 41;
const REPLAYS = QUICK ? 5 : 20; // replays of the run per side and round, so that a side takes milliseconds
const lib = require(DIST);
const ui = require(path.join(DIST, 'ui', 'index.js'));
const rxjs = require(require.resolve('rxjs', { paths: [DIST] }));

const TURNS = 200;
function recordRun() {
  const turns = [];
  for (let t = 0; t < TURNS; t++) {
    const id = `c${t}`;
    const events = [{ type: 'message_start' }, { type: 'reasoning_delta', text: 'thinking about it' }];
    for (let d = 0; d < 20; d++) events.push({ type: 'text_delta', text: `word${d} ` });
    const pieces = ['{"te', 'xt":', `"turn ${t}`, '"}'];
    pieces.forEach((argumentsDelta, i) => events.push(i === 0 ? { type: 'tool_call_delta', index: 0, id, name: 'echo', argumentsDelta } : { type: 'tool_call_delta', index: 0, argumentsDelta }));
    events.push({ type: 'tool_call', call: { id, name: 'echo', input: { text: `turn ${t}` } } });
    events.push({ type: 'message_end', stopReason: 'toolUse', usage: { inputTokens: 100, outputTokens: 30, cacheReadTokens: 60 } });
    turns.push(events);
  }
  turns.push([{ type: 'message_start' }, { type: 'text_delta', text: 'done' }, { type: 'message_end', stopReason: 'stop' }]);
  const registry = new lib.ToolRegistry().register({ name: 'echo', description: 'echoes', input: { text: 'what' }, handler: (input) => input.text });
  const events = [];
  lib
    .runEventedToolLoop({ provider: lib.scriptedProvider(turns), registry, messages: [{ role: 'user', content: 'go' }], maxTurns: TURNS + 1 })
    .subscribe((event) => events.push(event));
  if (events.at(-1)?.type !== 'loop_end' || events.at(-1).reason !== 'stop') throw new Error('bench U1: the scripted run did not end with stop');
  return events;
}

const events = recordRun();
let out = 0;
const sides = {
  toAgUi: () => {
    let runs = 0;
    const operator = () => ui.toAgUi({ threadId: 'bench', runId: () => `run${++runs}` });
    return (source) => source.pipe(operator());
  },
  bare: () => (source) => source.pipe(rxjs.filter(() => true)),
};

function cpu(side) {
  const pipe = sides[side]();
  const start = process.cpuUsage();
  for (let r = 0; r < REPLAYS; r++) pipe(rxjs.from(events)).subscribe(() => out++);
  const used = process.cpuUsage(start);
  return used.user + used.system;
}

// one replay's output, for the report
let emitted = 0;
sides.toAgUi()(rxjs.from(events)).subscribe(() => emitted++);

for (let i = 0; i < 3; i++) (cpu('toAgUi'), cpu('bare')); // warm both
const perEvent = [];
const bareSamples = [];
for (let round = 0; round < ROUNDS; round++) {
  global.gc?.();
  const order = round % 2 ? ['toAgUi', 'bare'] : ['bare', 'toAgUi'];
  const t = {};
  for (const side of order) t[side] = cpu(side);
  perEvent.push((t.toAgUi - t.bare) / (REPLAYS * events.length));
  bareSamples.push(t.bare / (REPLAYS * events.length));
}
const median = (xs) => {
  const s = xs.slice().sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const result = {
  workload: 'U1',
  quick: QUICK,
  rounds: ROUNDS,
  loopEvents: events.length,
  agUiEvents: emitted,
  perEvent: { median: median(perEvent), min: Math.min(...perEvent), max: Math.max(...perEvent) },
  bare: { median: median(bareSamples) },
};
if (process.env.BENCH_RUN) process.stdout.write(`BENCH_RESULT ${JSON.stringify(result)}\n`);
else {
  const f = (x) => x.toFixed(3);
  process.stdout.write(
    `toAgUi over ${events.length} loop events (${emitted} AG-UI events), ${ROUNDS} rounds, CPU:\n` +
      `  ${f(result.perEvent.median)} µs per loop event (min ${f(result.perEvent.min)}, max ${f(result.perEvent.max)}) beyond a bare operator (${f(result.bare.median)} µs); target ≤ 2 µs\n`,
  );
}
if (out < 0) throw new Error('unreachable'); // keeps the subscribers' work
