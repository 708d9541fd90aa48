'use strict';
// W9's parts, outside run.js: where an agent tool's inner turn goes, and one build against another in ONE process.
//
//   npm run build && node --expose-gc bench/agent-tools.js                 # the build under test (the root's dist/)
//   node --expose-gc bench/agent-tools.js --against=a564f6f --rounds=41     # and the build of a ref, interleaved
//
// W1's conversation (200 × 10 turns, 5 deltas a turn, one `echo` call a turn but the last), synchronous: each row is
// W1's loop with its `echo` changed, and its inner turn is what it adds over W1's loop, per call (1,800 calls), on the
// process's CPU time. Every round runs every row of every build once, the order reversed every other round, so each
// figure is taken against the W1 run of its own round; the medians of the rounds are printed.
// The rows are lib/agent-rows.js's (loop, alone, alone-signal, progress, none, signal); an outer turn is the loop
// row over its 2,000 turns. Then W9's target's parts (lib/agent-rows.js ownCost): an agent tool's own cost beyond
// the inner loop alone (wired the same way) and the forwarding (the progress row), and its share of the two.
const { lib: current } = require('./lib/env.js');
const { gc } = require('./lib/env.js');
const { build } = require('./lib/baseline.js');
const { fakeProvider } = require('./lib/rx-provider.js');
const { ROWS, echoRegistry, ownCost } = require('./lib/agent-rows.js');
const S = require('./lib/script.js');

const args = process.argv.slice(2);
const value = (name) => args.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
const rounds = Number(value('rounds') ?? 31);
const against = value('against');

const spec = { conversations: 200, turns: 10, deltas: 5, calls: 1 };
const turns = spec.conversations * spec.turns;
const calls = spec.conversations * (spec.turns - 1) * spec.calls;
const registryFor = (lib, row, echo, innerCounters) => echoRegistry(lib, row, echo, innerCounters, spec.deltas);

/** One run of W1's 200 conversations with `row`'s echo: CPU milliseconds, after checking every count. */
function once(lib, row) {
  const counters = S.newCounters();
  const innerCounters = S.newCounters();
  const echo = S.makeEcho(spec, counters);
  const registry = registryFor(lib, row, echo, innerCounters);
  const start = process.cpuUsage();
  for (let c = 0; c < spec.conversations; c++) {
    let done = false;
    lib.runEventedToolLoop({ provider: fakeProvider(spec, counters), registry, messages: [{ role: 'user', content: 'hi' }], maxTurns: spec.turns }).subscribe({
      next(event) {
        if (event.type === 'text_delta') {
          counters.deltas++;
          counters.chars += event.text.length;
        } else if (event.type === 'tool_update' && event.event?.type === 'text_delta') innerCounters.deltas++;
        else if (event.type === 'loop_end') counters.ends++;
      },
      error: (error) => {
        throw error;
      },
      complete: () => (done = true),
    });
    if (!done) throw new Error(`bench: ${row}: a conversation did not end synchronously`);
  }
  const used = process.cpuUsage(start);
  S.checkCounts(spec, counters);
  if (row !== 'loop' && innerCounters.deltas !== calls * spec.deltas) throw new Error(`bench: ${row}: ${innerCounters.deltas} inner deltas (expected ${calls * spec.deltas})`);
  return (used.user + used.system) / 1000;
}

const median = (values) => {
  const sorted = values.slice().sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

function main() {
  const builds = [{ name: 'this build', lib: current }];
  if (against) {
    const other = build(against);
    builds.push({ name: other.label, lib: require(other.entry) });
  }
  const runs = [];
  for (const b of builds) for (const row of ROWS) if (registryFor(b.lib, row, S.makeEcho(spec, S.newCounters()), S.newCounters())) runs.push({ build: b, row, ms: [] });
  gc();
  for (const run of runs) for (let i = 0; i < 5; i++) once(run.build.lib, run.row);
  for (let r = 0; r < rounds; r++) for (const run of r % 2 ? runs.slice().reverse() : runs) run.ms.push(once(run.build.lib, run.row));

  const lines = [`W9's parts: W1's ${spec.conversations} conversations × ${spec.turns} turns, CPU time, medians of ${rounds} interleaved rounds (Node ${process.version})`, ''];
  lines.push('| build | row | µs per inner turn | × an outer turn | × a one-turn loop (alone) |', '| --- | --- | ---: | ---: | ---: |');
  const innerOf = new Map();
  for (const b of builds) {
    const loop = runs.find((run) => run.build === b && run.row === 'loop').ms;
    const outer = loop.map((ms) => (ms * 1000) / turns);
    lines.push(`| ${b.name} | loop (an outer turn) | ${median(outer).toFixed(2)} | 1.00× | |`);
    const alone = runs.find((run) => run.build === b && run.row === 'alone').ms.map((ms, i) => ((ms - loop[i]) * 1000) / calls);
    for (const run of runs.filter((run) => run.build === b && run.row !== 'loop')) {
      const inner = run.ms.map((ms, i) => ((ms - loop[i]) * 1000) / calls);
      innerOf.set(`${b.name}:${run.row}`, inner);
      const ratio = median(inner.map((v, i) => v / outer[i])).toFixed(2);
      const perLoop = run.row === 'alone' ? '' : `${median(inner.map((v, i) => v / alone[i])).toFixed(2)}×`;
      lines.push(`| ${b.name} | ${run.row} | ${median(inner).toFixed(2)} | ${ratio}× | ${perLoop} |`);
    }
  }
  const msOf = (b, row) => runs.find((run) => run.build === b && run.row === row)?.ms;
  lines.push('', '| build | agent tool | inner loop alone | forwarding | own cost (µs per call) | own ÷ (inner + forwarding) |', '| --- | --- | ---: | ---: | ---: | ---: |');
  for (const b of builds) {
    for (const [agent, alone] of [['signal', 'alone-signal'], ['none', 'alone']]) {
      const [loop, a, p, g] = ['loop', alone, 'progress', agent].map((row) => msOf(b, row));
      if (!a || !p || !g) continue;
      const parts = loop.map((_, i) => ownCost({ loop: loop[i], alone: a[i], progress: p[i], agent: g[i] }, calls));
      const m = (key) => median(parts.map((x) => x[key]));
      lines.push(`| ${b.name} | ${agent} | ${m('inner').toFixed(2)} | ${m('forwarding').toFixed(2)} | ${m('own').toFixed(2)} | ${(m('share') * 100).toFixed(1)}% |`);
    }
  }
  if (builds.length === 2) {
    lines.push('', `this build ÷ ${builds[1].name}, per inner turn (medians of the rounds' ratios):`);
    for (const row of ROWS.slice(1)) {
      const [mine, theirs] = builds.map((b) => innerOf.get(`${b.name}:${row}`));
      if (mine && theirs) lines.push(`- ${row}: ${median(mine.map((v, i) => v / theirs[i])).toFixed(2)}×`);
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main();
