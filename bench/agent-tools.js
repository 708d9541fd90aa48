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
//   loop      W1's loop, `echo` a plain tool (an outer turn: its time over its 2,000 turns)
//   alone     the plain echo also runs a one-turn inner loop of the same fake model to its end, nothing forwarded
//   progress  echo an Observable tool of 10 `toolProgress` values, then its result: the outer loop's share of forwarding
//   none      echo an `agentTool` of that one-turn loop, its 10 events forwarded, no signal given
//   signal    the same, `signal: context.signal` as the README wires it
const { lib: current } = require('./lib/env.js');
const { rxjs, gc } = require('./lib/env.js');
const { build } = require('./lib/baseline.js');
const { fakeProvider } = require('./lib/rx-provider.js');
const S = require('./lib/script.js');

const args = process.argv.slice(2);
const value = (name) => args.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
const rounds = Number(value('rounds') ?? 31);
const against = value('against');

const spec = { conversations: 200, turns: 10, deltas: 5, calls: 1 };
const turns = spec.conversations * spec.turns;
const calls = spec.conversations * (spec.turns - 1) * spec.calls;
const ROWS = ['loop', 'alone', 'progress', 'none', 'signal'];
// what the progress row's tool sends: as many updates as an inner turn forwards, the last one its result
const UPDATES = ['turn_start 1', 'message_start', 'tα ', 'tα tβ ', 'tα tβ tγ ', 'tα tβ tγ tδ ', 'tα tβ tγ tδ tε ', 'message_end stop', 'turn_end 1', 'loop_end stop'];

function registryFor(lib, row, echo, innerCounters) {
  const echoSpec = { name: 'echo', description: S.ECHO_DESCRIPTION, input: { text: 'the text to return', turn: 'the turn number' } };
  const inner = { conversations: 1, turns: 1, deltas: spec.deltas, calls: 0 };
  const none = new lib.ToolRegistry();
  const innerLoop = (text, signal) =>
    lib.runEventedToolLoop({ provider: fakeProvider(inner, innerCounters), registry: none, messages: [{ role: 'user', content: text }], ...(signal ? { signal } : {}) });
  const handlers = {
    loop: (input) => echo(input),
    alone: (input) => {
      const text = echo(input);
      innerLoop(input.text).subscribe({ next: (event) => event.type === 'text_delta' && innerCounters.deltas++ });
      return text;
    },
    progress: (input) =>
      new rxjs.Observable((subscriber) => {
        const text = echo(input);
        for (const update of UPDATES) subscriber.next(lib.toolProgress(update));
        innerCounters.deltas += spec.deltas;
        subscriber.next(text);
        subscriber.complete();
      }),
  };
  if (handlers[row]) return new lib.ToolRegistry().register({ ...echoSpec, handler: handlers[row] });
  if (typeof lib.agentTool !== 'function') return undefined; // a build before agent tools
  const agent = (input, context) => {
    echo(input); // counts the call, as W1's echo does
    return innerLoop(input.text, row === 'signal' ? context.signal : undefined);
  };
  return new lib.ToolRegistry().register(lib.agentTool({ ...echoSpec, agent }));
}

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
