'use strict';
// One workload in this process: `node --expose-gc bench/workload.js W1 [--contenders=a,b] [--interleaved] [--quick]`.
// run.js starts one such process per workload and reads the line `BENCH_RESULT {json}` it prints.
//
// Timing: contenders run in blocks (all of one contender's repetitions, then the next contender's),
// each block preceded by a gc() and a warm-up; there is no gc() inside a block (a forced gc()
// between repetitions deoptimises RxJS code). Heap measurements (which need gc()) come after every
// timing block of the process. `--interleaved` runs the repetitions round-robin instead (to see how
// one contender's garbage slows the next); the reported numbers use blocks. With BENCH_BASELINE (set
// by run.js, lib/baseline.js) the baseline build runs right after rx-tool-loop wherever it runs.
const { rxjs, checkOneRxjs, now, stats, gc, heapUsed, until } = require('./lib/env.js');
const S = require('./lib/script.js');
const W6 = require('./lib/w6-wire.js');
const { contender, baseline, withBaseline } = require('./lib/contenders.js');

const args = process.argv.slice(2);
const workload = args.find((arg) => !arg.startsWith('--'));
const flag = (name) => args.find((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`));
const flagValue = (name) => flag(name)?.split('=')[1];
const QUICK = flag('quick') !== undefined;
const INTERLEAVED = flag('interleaved') !== undefined;
const TIMING_ONLY = flag('timing-only') !== undefined;

/** One run of `spec` by `who`: milliseconds, after checking every count. */
async function once(who, spec) {
  const counters = S.newCounters();
  const echo = S.makeEcho(spec, counters);
  const cpu = process.cpuUsage();
  const start = now();
  const pending = who.run(spec, counters, echo);
  const synchronous = counters.ends === spec.conversations;
  let finals;
  try {
    finals = await (spec.microtasksOnly ? orStalled(pending) : pending);
  } catch (error) {
    throw new Error(`${error?.message ?? error} (after ${counters.model} model calls)`);
  }
  const ms = now() - start;
  const used = process.cpuUsage(cpu);
  S.checkCounts(spec, counters);
  // cpuMs: CPU time of the whole process (the GC's helper threads included): less sensitive than
  // the wall clock to other processes on the machine
  return { ms, cpuMs: (used.user + used.system) / 1000, synchronous, finals };
}

/**
 * For a run that uses only microtasks (W4: synchronous providers and tools): it has settled by the
 * time the next macrotask runs, or it never will. A loop that overflows the stack inside a Promise
 * callback can leave its Promise pending forever, and the process would then end quietly with code 0.
 */
function orStalled(pending) {
  return new Promise((resolve, reject) => {
    let settled = false;
    pending.then(
      (value) => {
        settled = true;
        resolve(value);
      },
      (error) => {
        settled = true;
        reject(error);
      },
    );
    setImmediate(() => {
      if (!settled) reject(new Error('the run stopped: it neither completed nor failed, and has nothing pending'));
    });
  });
}

/** Warm-up then timed repetitions, in one block; the value of each repetition is `perRep(ms)`. */
async function block(who, spec, { warmup, reps, perRep }) {
  gc();
  for (let i = 0; i < warmup; i++) await once(who, spec);
  const samples = [];
  const cpu = [];
  let synchronous = true;
  for (let i = 0; i < reps; i++) {
    const { ms, cpuMs, synchronous: sync } = await once(who, spec);
    synchronous &&= sync;
    samples.push(perRep(ms, spec));
    cpu.push(perRep(cpuMs, spec));
  }
  return { ...stats(samples), cpu: stats(cpu), synchronous };
}

/** The options (and spec) of `who`: the slowest peers may run fewer or smaller repetitions. */
function optionsFor(who, spec, options) {
  if (!SLOW.has(who.name) || !options.slow) return { spec, options };
  const { spec: smaller, ...fewer } = options.slow;
  return { spec: { ...spec, ...smaller }, options: { ...options, ...fewer }, scaled: smaller };
}

/** Times every contender on `spec`, in blocks (or round-robin with --interleaved). */
async function timeAll(names, spec, options) {
  const results = {};
  const contenders = [];
  for (const name of names) {
    try {
      const who = contender(name);
      await who.load();
      contenders.push(who);
    } catch (error) {
      results[name] = { error: `could not load: ${error.message}` };
    }
  }
  if (!INTERLEAVED) {
    for (const who of contenders) {
      log(`  ${who.name}…`);
      try {
        const mine = optionsFor(who, spec, options);
        results[who.name] = await block(who, mine.spec, mine.options);
        if (mine.scaled) results[who.name].scaled = mine.scaled;
      } catch (error) {
        results[who.name] = { error: String(error?.message ?? error) };
      }
      log(`  ${who.name}: ${describe(results[who.name])}`);
    }
    return results;
  }
  const samples = new Map(contenders.map((who) => [who.name, []]));
  for (const who of contenders) for (let i = 0; i < options.warmup; i++) await once(who, optionsFor(who, spec, options).spec).catch(() => {});
  for (let i = 0; i < options.reps; i++) {
    for (const who of contenders) {
      if (results[who.name]) continue;
      try {
        const mine = optionsFor(who, spec, options).spec;
        samples.get(who.name).push(options.perRep((await once(who, mine)).ms, mine));
      } catch (error) {
        results[who.name] = { error: String(error?.message ?? error) };
      }
    }
  }
  for (const who of contenders) results[who.name] ??= stats(samples.get(who.name));
  return results;
}

/**
 * rx-tool-loop against the baseline in pairs of repetitions run back to back, after both blocks, in
 * alternating order (an even number of pairs: each order as often). Each pair's time ratio (current
 * ÷ baseline) sees the same machine, so other work on it moves the median ratio far less than it moves
 * the ratio of two blocks' medians (A/A trials, the same code on both sides, on a busy machine: W1
 * 0.95–1.11 per process against 0.51–1.50).
 */
async function pairedWithBaseline(timing, spec, pairs, { collect = true } = {}) {
  if (!baseline) return undefined;
  return pairedRuns(timing, spec, pairs, 'rx-tool-loop', baseline.name, { collect });
}

/**
 * O4: rx-tool-loop with traceLoop on a no-op tracer against rx-tool-loop without it, paired the same way but
 * with no gc() before each run: right after a forced gc() a W1 run takes several times as long (as if its
 * code were cold), and then even a bare `tap` after the loop measured 1.12× (issue 25, findings.md): the
 * ratio said more about warming up again than about the operator. W1's heap is small: without the gc(), the
 * garbage a run leaves to the next is the same either way round, and the alternating order evens it out.
 */
function pairedWithOtel(timing, spec, pairs) {
  return pairedRuns(timing, spec, pairs, 'rx-tool-loop+otel', 'rx-tool-loop', { collect: false });
}

/** `ours` against `theirs` in pairs of repetitions (above): the median of ours ÷ theirs. */
async function pairedRuns(timing, spec, pairs, ours, theirs, { collect = true } = {}) {
  const ran = (name) => timing[name] && !timing[name].error;
  if (!ran(ours) || !ran(theirs)) return undefined;
  const [current, base] = [contender(ours), contender(theirs)];
  const ratios = [];
  try {
    // each run from a collected heap: otherwise the second of a pair pays for the garbage of the first,
    // which in W2 (a 1,000,000-delta turn) splits the ratios in two camps by order and skews the median
    const run = async (who) => {
      if (collect) gc();
      return (await once(who, spec)).ms;
    };
    for (let i = 0; i < pairs; i++) {
      if (i % 2 === 0) {
        const a = await run(current);
        ratios.push(a / (await run(base)));
      } else {
        const b = await run(base);
        ratios.push((await run(current)) / b);
      }
    }
  } catch (error) {
    return { error: String(error?.message ?? error) };
  }
  const paired = stats(ratios);
  log(`  ${ours} ÷ ${theirs}, ${pairs} paired repetitions: ${describe(paired)}`);
  return paired;
}

function describe(result) {
  return result.error ? `FAILED ${result.error}` : `median ${result.median.toFixed(2)} (min ${result.min.toFixed(2)}, max ${result.max.toFixed(2)})`;
}

function log(line) {
  process.stderr.write(`${line}\n`);
}

/** The contenders to run: --contenders=a,b or the workload's own, with the baseline beside rx-tool-loop. */
function names(defaults) {
  const chosen = flagValue('contenders');
  return withBaseline(chosen ? chosen.split(',') : defaults);
}

// the slowest peers (milliseconds per turn) get fewer repetitions, to keep the bench in its budget
const SLOW = new Set(['ai-streamText', 'openai-agents-run', 'openai-agents-stream']);

const W1_CONTENDERS = ['floor', 'rx-expand', 'rx-tool-loop', 'pi-runAgentLoop', 'pi-agentLoop', 'ai-generateText', 'ai-streamText'];

// ---------------------------------------------------------------------------------------------
// W1: per-turn overhead, and the live heap of a conversation paused at a tool call

async function inFlightHeap(who, spec) {
  const counters = S.newCounters();
  const echo = S.makeEcho(spec, counters);
  gc();
  const before = heapUsed();
  const done = who.run(spec, counters, echo);
  await until(() => echo.pending.length === spec.conversations);
  gc();
  const after = heapUsed();
  echo.release();
  await done;
  S.checkCounts(spec, counters);
  return (after - before) / spec.conversations;
}

async function w1() {
  const spec = { conversations: QUICK ? 20 : 200, turns: 10, deltas: 5, calls: 1, sequential: true };
  const turns = spec.conversations * spec.turns;
  // O4 and L6: W1 alone also runs rx-tool-loop traced on a no-op tracer, and with its provider limited, right after it
  const contenders = names(W1_CONTENDERS.flatMap((name) => (name === 'rx-tool-loop' ? [name, 'rx-tool-loop+otel', 'rx-tool-loop+limited'] : [name])));
  log(`W1: ${spec.conversations} conversations x ${spec.turns} turns (one after the other), µs per turn`);
  // a repetition of the fast contenders takes 10-50 ms: many of them, for a median that other
  // processes on the machine do not move much
  const timing = await timeAll(contenders, spec, { warmup: 5, reps: QUICK ? 5 : 21, slow: { warmup: 1, reps: 5 }, perRep: (ms) => (ms * 1000) / turns });

  // live heap per paused conversation, with 100 paused conversations (as the issue says) and with
  // 1,000: V8's heap moves by a few hundred KB from one measurement to the next (bytecode, feedback,
  // code), a few KiB per conversation at 100, a few hundred bytes at 1,000
  const heapSpec = { conversations: 100, turns: 10, deltas: 5, calls: 1, pauseAtTurn: 5 };
  const bigHeapSpec = { ...heapSpec, conversations: QUICK ? 200 : 1000 };
  // W1's pairs run without a gc() before each run, as O4's: a forced full GC discards the optimized code that
  // holds (weakly) objects of finished runs — 763 functions deoptimized for 'weak objects' over 30 runs of W1,
  // 13 deopts in all without it — so each run after one measured V8 optimizing the loop again (~30 µs a turn
  // instead of ~5), not the loop (findings.md, 'W1 against v2: what a gc() before each run measured')
  const paired = await pairedWithBaseline(timing, spec, 20, { collect: false });
  // 60 pairs: a W1 run takes 10–20 ms, and 20 pairs moved the median by ±0.2 on a busy machine
  const otel = await pairedWithOtel(timing, spec, 60);
  // L6: a limited provider with a free slot against the same loop without it, paired as O4
  const limited = await pairedRuns(timing, spec, 60, 'rx-tool-loop+limited', 'rx-tool-loop', { collect: false });
  if (TIMING_ONLY) return { spec, heapSpec, bigHeapSpec, timing, paired, otel, limited, heap: {}, bigHeap: {} };
  log(`W1 heap: ${heapSpec.conversations} and ${bigHeapSpec.conversations} conversations paused at the tool call of turn ${heapSpec.pauseAtTurn}, bytes per conversation`);
  const heap = {};
  const bigHeap = {};
  for (const name of contenders) {
    if (timing[name]?.error) continue;
    const who = contender(name);
    for (const [spec1, into] of [
      [heapSpec, heap],
      [bigHeapSpec, bigHeap],
    ]) {
      if (into === bigHeap && SLOW.has(name)) continue; // too slow to bring 1,000 conversations to turn 5
      try {
        await inFlightHeap(who, spec1); // warm
        const samples = [];
        for (let i = 0; i < 5; i++) samples.push(await inFlightHeap(who, spec1));
        into[name] = stats(samples);
      } catch (error) {
        into[name] = { error: String(error?.message ?? error) };
      }
      log(`  ${name}, ${spec1.conversations} paused: ${describe(into[name])}`);
    }
  }
  return { spec, heapSpec, bigHeapSpec, timing, paired, otel, limited, heap, bigHeap };
}

// ---------------------------------------------------------------------------------------------
// W1b: per-turn cost at 40 turns against 10, in the same process and block

async function w1b() {
  const contenders = names(W1_CONTENDERS);
  log('W1b: 200 conversations (20 for the slowest peers) x 10 and x 40 turns (one after the other), µs per turn');
  const results = {};
  for (const name of contenders) {
    try {
      const who = contender(name);
      await who.load();
      const slow = SLOW.has(name);
      const conversations = QUICK || slow ? 20 : 200;
      const reps = QUICK || slow ? 5 : name === 'ai-generateText' ? 9 : 15;
      const short = { conversations, turns: 10, deltas: 5, calls: 1, sequential: true };
      const long = { conversations, turns: 40, deltas: 5, calls: 1, sequential: true };
      const perTurn = (ms, spec) => (ms * 1000) / (spec.conversations * spec.turns);
      // one block per contender: warm both lengths, then alternate them, so that neither gets a
      // better-warmed JIT than the other
      gc();
      for (let i = 0; i < 2; i++) await once(who, short);
      await once(who, long);
      const tens = [];
      const forties = [];
      const tensCpu = [];
      const fortiesCpu = [];
      for (let i = 0; i < reps; i++) {
        const a = await once(who, short);
        tens.push(perTurn(a.ms, short));
        tensCpu.push(perTurn(a.cpuMs, short));
        const b = await once(who, long);
        forties.push(perTurn(b.ms, long));
        fortiesCpu.push(perTurn(b.cpuMs, long));
      }
      const ten = { ...stats(tens), cpu: stats(tensCpu) };
      const forty = { ...stats(forties), cpu: stats(fortiesCpu) };
      results[name] = { conversations, ten, forty, growth: forty.median / ten.median };
      log(`  ${name}: 10 turns ${describe(ten)}; 40 turns ${describe(forty)}; x${results[name].growth.toFixed(2)}`);
    } catch (error) {
      results[name] = { error: String(error?.message ?? error) };
      log(`  ${name}: FAILED ${results[name].error}`);
    }
  }
  return { results };
}

// ---------------------------------------------------------------------------------------------
// W2: one turn of 1,000,000 text deltas

/**
 * One streaming run: the heap it leaves while its final messages are still held, and the largest
 * heap sampled during the stream (every 65,536 deltas), both above the heap before. A function of
 * its own, so that nothing of a previous run is still referenced when "before" is read.
 */
async function streamHeap(who, spec) {
  const counters = S.newCounters();
  const echo = S.makeEcho(spec, counters);
  gc();
  const before = heapUsed();
  let peak = before;
  const finals = await who.run({ ...spec, sample: () => (peak = Math.max(peak, heapUsed())) }, counters, echo);
  gc();
  const after = heapUsed();
  S.checkCounts(spec, counters);
  const textBytes = S.turnText(spec).length; // one byte per character: the deltas are ASCII
  if (!JSON.stringify(finals[0]).includes(S.turnText({ deltas: 64 }))) throw new Error('the final messages do not hold the text');
  return { retained: after - before, peak: Math.max(peak, after) - before, textBytes };
}

async function w2() {
  const spec = { conversations: 1, turns: 1, deltas: QUICK ? 100_000 : 1_000_000, calls: 0 };
  const contenders = names(['floor', 'rx-expand', 'rx-tool-loop', 'pi-runAgentLoop', 'pi-agentLoop', 'ai-streamText']);
  log(`W2: one turn of ${spec.deltas} text deltas, deltas per second`);
  // AI SDK streamText: 10,000 deltas (it slows down as the stream grows: 1,000,000 take ~80 s a
  // repetition; Node 20's web streams dequeue with Array#shift and the SDK's streams queue the parts)
  const slow = { warmup: 1, reps: 5, spec: { deltas: 10_000 } };
  const timing = await timeAll(contenders, spec, { warmup: 1, reps: 5, slow, perRep: (ms, mine) => mine.deltas / (ms / 1000) });
  const paired = await pairedWithBaseline(timing, spec, 20); // 20: one pair is ~0.2 s, and W2's pairs scatter more than W4's
  const heap = {};
  for (const name of contenders) {
    if (timing[name]?.error) continue;
    try {
      const who = contender(name);
      const mySpec = optionsFor(who, spec, { slow }).spec;
      const samples = [];
      for (let i = 0; i < 3; i++) samples.push(await streamHeap(who, mySpec));
      const textBytes = samples[0].textBytes;
      heap[name] = { textBytes, retained: stats(samples.map((s) => s.retained / textBytes)), peak: stats(samples.map((s) => s.peak / textBytes)) };
      log(`  ${name}: heap growth x${heap[name].retained.median.toFixed(2)} of the text (peak sampled x${heap[name].peak.median.toFixed(2)})`);
    } catch (error) {
      heap[name] = { error: String(error?.message ?? error) };
      log(`  ${name}: heap FAILED ${heap[name].error}`);
    }
  }
  return { spec, timing, paired, heap };
}

// ---------------------------------------------------------------------------------------------
// W3: one reply with 8 tool calls, each a 50 ms timer

async function w3() {
  const spec = { conversations: 1, turns: 2, deltas: 5, calls: 8, toolDelayMs: 50 };
  const contenders = names(W1_CONTENDERS);
  log('W3: 8 tool calls of 50 ms in one reply (then an instant final turn), wall ms');
  const timing = await timeAll(contenders, spec, { warmup: 2, reps: 7, perRep: (ms) => ms });
  return { spec, timing };
}

// ---------------------------------------------------------------------------------------------
// W4: 10,000 synchronous turns in one loop; the stack must not grow

function freeStackDepth() {
  let depth = 0;
  const dive = () => {
    depth++;
    dive();
  };
  try {
    dive();
  } catch {
    // RangeError: the stack is full
  }
  return depth;
}

async function w4() {
  const turns = QUICK ? 2_000 : 10_000;
  const spec = { conversations: 1, turns, deltas: 5, calls: 1, microtasksOnly: true };
  const contenders = names(['floor', 'rx-expand', 'rx-tool-loop', 'pi-runAgentLoop']);
  log(`W4: ${turns} synchronous turns in one loop, total ms`);
  const timing = await timeAll(contenders, spec, { warmup: 1, reps: 5, perRep: (ms) => ms });
  const paired = await pairedWithBaseline(timing, spec, 8);
  // for information: the same with a provider that reads the history it is given on every turn, as a
  // real one does (a library that copies the history lazily pays for the copy here)
  for (const name of contenders.filter((n) => n === 'rx-tool-loop' || n === baseline?.name)) {
    const reading = { ...contender(name), name: `${name} (provider reads the history)` };
    log(`  ${reading.name}…`);
    try {
      await reading.load();
      timing[reading.name] = await block(reading, { ...spec, readHistory: true }, { warmup: 1, reps: 5, perRep: (ms) => ms });
    } catch (error) {
      timing[reading.name] = { error: String(error?.message ?? error) };
    }
    log(`  ${reading.name}: ${describe(timing[reading.name])}`);
  }
  const probeTurns = [1, 2, 10, 100, 1000, turns];
  const stack = {};
  Error.stackTraceLimit = Infinity;
  for (const name of contenders) {
    const probes = {};
    try {
      const who = contender(name);
      const probe = (turn) => {
        if (probeTurns.includes(turn)) probes[turn] = { frames: new Error().stack.split('\n').length - 1, free: freeStackDepth() };
      };
      await once(who, { ...spec, probe });
      stack[name] = { probes, flat: probes[turns].frames <= probes[2].frames + 10 };
    } catch (error) {
      stack[name] = { probes, error: String(error?.message ?? error) };
    }
    log(`  ${name}: stack ${JSON.stringify(stack[name])}`);
  }
  Error.stackTraceLimit = 10;
  return { spec, timing, paired, stack };
}

// ---------------------------------------------------------------------------------------------
// W5: 1,000 concurrent loops with asynchronous providers and tools; every loop's invariants checked

function mulberry32(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const W5_MAX_TURNS = 10;

/** The plan of each loop: per turn, its deltas and its calls (tool name per call); [] ends with `stop`. */
function w5Plans(loops, seed) {
  const random = mulberry32(seed);
  const int = (lo, hi) => lo + Math.floor(random() * (hi - lo + 1));
  return Array.from({ length: loops }, () => {
    const turns = int(1, 12);
    return Array.from({ length: turns }, (_, t) => ({
      deltas: int(1, 8),
      calls: t === turns - 1 ? [] : Array.from({ length: int(1, 3) }, () => (random() < 0.1 ? 'flaky' : random() < 0.05 ? 'missing' : 'echo')),
      delayMs: int(0, 3),
    }));
  });
}

/** An asynchronous provider: each event a macrotask after the previous one. */
function asyncProvider(plan, stats) {
  let turn = 0;
  return () =>
    new rxjs.Observable((subscriber) => {
      const t = turn++;
      stats.calls++;
      const step = plan[t];
      const events = [{ type: 'message_start' }];
      for (let i = 0; i < step.deltas; i++) events.push({ type: 'text_delta', text: S.delta(i) });
      step.calls.forEach((name, k) => events.push({ type: 'tool_call', call: { id: `c${t}_${k}`, name, input: { text: `x${t}.${k}`, ms: step.delayMs + k } } }));
      events.push({ type: 'message_end', stopReason: step.calls.length > 0 ? 'toolUse' : 'stop' });
      let i = 0;
      let handle = setImmediate(function tick() {
        if (i < events.length) {
          subscriber.next(events[i++]);
          handle = setImmediate(tick);
        } else {
          subscriber.complete();
        }
      });
      return () => clearImmediate(handle);
    });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function w5Registry(lib) {
  return new lib.ToolRegistry()
    .register({ name: 'echo', description: 'echo', input: { text: 'text' }, handler: async (input) => (await sleep(input.ms), input.text) })
    .register({
      name: 'flaky',
      description: 'always fails',
      input: { text: 'text' },
      handler: async (input) => {
        await sleep(input.ms);
        throw new Error(`flaky ${input.text}`);
      },
    });
}

/** Checks one loop's events and history; returns the problems found. */
function w5Check(plan, events, completed, errored, providerCalls, input) {
  const problems = [];
  const expectTurns = Math.min(plan.length, W5_MAX_TURNS);
  const ends = events.filter((event) => event.type === 'loop_end');
  if (!completed) problems.push('did not complete');
  if (errored) problems.push(`errored: ${errored}`);
  if (ends.length !== 1) problems.push(`${ends.length} loop_end`);
  if (events[events.length - 1]?.type !== 'loop_end') problems.push('loop_end is not last');
  if (providerCalls !== expectTurns) problems.push(`${providerCalls} provider calls, expected ${expectTurns}`);
  if (input.length !== 1) problems.push('the caller’s messages were mutated');
  const end = ends[0];
  const expectReason = plan.length > W5_MAX_TURNS ? 'maxTurns' : 'stop';
  if (end && end.reason !== expectReason) problems.push(`loop_end reason ${end.reason}, expected ${expectReason}`);
  const turnEnds = events.filter((event) => event.type === 'turn_end');
  if (turnEnds.length !== expectTurns) problems.push(`${turnEnds.length} turn_end, expected ${expectTurns}`);
  const lastTurnEnd = turnEnds[turnEnds.length - 1];
  if (end && lastTurnEnd && (end.messages.length !== lastTurnEnd.messages.length || end.messages.some((m, i) => m !== lastTurnEnd.messages[i]))) {
    problems.push('loop_end messages differ from the last turn_end');
  }
  // R4: user, then per turn the assistant and one result per call, in call order
  const history = end?.messages ?? [];
  if (history[0]?.role !== 'user') problems.push('history does not start with the user message');
  let i = 1;
  for (let t = 0; t < expectTurns && problems.length === 0; t++) {
    const assistant = history[i++];
    const calls = plan[t].calls;
    if (assistant?.role !== 'assistant') problems.push(`turn ${t + 1}: no assistant message`);
    else if ((assistant.toolCalls?.length ?? 0) !== calls.length) problems.push(`turn ${t + 1}: ${assistant.toolCalls?.length ?? 0} tool calls, expected ${calls.length}`);
    else if (assistant.content !== S.turnText({ deltas: plan[t].deltas })) problems.push(`turn ${t + 1}: text lost`);
    for (let k = 0; k < calls.length && problems.length === 0; k++) {
      const result = history[i++];
      if (result?.role !== 'toolResult' || result.toolCallId !== `c${t}_${k}`) problems.push(`turn ${t + 1}: result ${k} missing or out of order`);
      else if (calls[k] === 'echo' && (result.isError || result.content !== `x${t}.${k}`)) problems.push(`turn ${t + 1}: wrong echo result`);
      else if (calls[k] === 'flaky' && (!result.isError || !result.content.startsWith('error: '))) problems.push(`turn ${t + 1}: flaky result is not an error`);
      else if (calls[k] === 'missing' && (!result.isError || result.content !== 'unknown tool: missing')) problems.push(`turn ${t + 1}: unknown tool result wrong`);
    }
  }
  if (problems.length === 0 && i !== history.length) problems.push(`history has ${history.length} messages, expected ${i}`);
  const results = events.filter((event) => event.type === 'tool_result').length;
  const callsMade = plan.slice(0, expectTurns).reduce((sum, step) => sum + step.calls.length, 0);
  if (results !== callsMade) problems.push(`${results} tool_result events, expected ${callsMade}`);
  return problems;
}

async function w5Once(lib, loops, seed) {
  const plans = w5Plans(loops, seed);
  const registry = w5Registry(lib);
  gc();
  const before = heapUsed();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, heapUsed())), 5);
  const start = now();
  const outcomes = await Promise.all(
    plans.map(
      (plan) =>
        new Promise((resolve) => {
          const events = [];
          const counts = { calls: 0 };
          const input = [{ role: 'user', content: 'hi' }];
          lib
            .runEventedToolLoop({ provider: asyncProvider(plan, counts), registry, messages: input, maxTurns: W5_MAX_TURNS })
            .subscribe({
              next: (event) => events.push(event),
              error: (error) => resolve({ plan, events, completed: false, errored: String(error), counts, input }),
              complete: () => resolve({ plan, events, completed: true, errored: undefined, counts, input }),
            });
        }),
    ),
  );
  const ms = now() - start;
  clearInterval(sampler);
  peak = Math.max(peak, heapUsed());
  const failures = [];
  for (const [index, o] of outcomes.entries()) {
    const problems = w5Check(o.plan, o.events, o.completed, o.errored, o.counts.calls, o.input);
    if (problems.length > 0) failures.push(`loop ${index}: ${problems.join('; ')}`);
  }
  const turns = outcomes.reduce((sum, o) => sum + o.counts.calls, 0);
  const events = outcomes.reduce((sum, o) => sum + o.events.length, 0);
  return { ms, peakBytes: peak - before, failures, turns, events };
}

async function w5() {
  const loops = QUICK ? 200 : 1000;
  const libraries = names(['rx-tool-loop']);
  log(`W5: ${loops} concurrent loops, asynchronous providers and tools: ${libraries.join(', ')}`);
  const results = {};
  for (const name of libraries) {
    try {
      const lib = contender(name).library();
      await w5Once(lib, loops, 1); // warm-up
      const times = [];
      const peaks = [];
      let failures = [];
      let turns = 0;
      let events = 0;
      for (let rep = 0; rep < 5; rep++) {
        const result = await w5Once(lib, loops, 100 + rep);
        times.push(result.ms);
        peaks.push(result.peakBytes);
        failures = failures.concat(result.failures.map((line) => `rep ${rep + 1}, ${line}`));
        turns = result.turns;
        events = result.events;
      }
      results[name] = { turns, events, time: stats(times), peak: stats(peaks), failures: failures.slice(0, 20), failureCount: failures.length };
      log(`  ${name}: ${describe(results[name].time)} ms, peak heap +${(results[name].peak.median / 1048576).toFixed(1)} MiB, ${results[name].failureCount} invariant failures`);
    } catch (error) {
      results[name] = { error: String(error?.message ?? error) };
      log(`  ${name}: FAILED ${results[name].error}`);
    }
  }
  return { loops, maxTurns: W5_MAX_TURNS, results };
}

// ---------------------------------------------------------------------------------------------
// W6: over HTTP, against a loopback server in a child process (lib/w6-server.js): CPU per streamed
// chunk, the time from a tool call's last byte to its tool's start, the wall time of a three-turn
// conversation whose 200 ms tools run while the model streams

const W6_APIS = ['openai', 'anthropic', 'responses', 'gemini']; // OpenAI Chat Completions, Anthropic Messages, OpenAI Responses (P16), Gemini (P20)
const W6_CONTENDERS = ['sse-floor', 'rx-tool-loop', 'pi-runAgentLoop', 'ai-streamText', 'genai-generateContentStream'];

/** The two tools' bodies for one run: each records its start on the server's clock, then takes `toolMs`. */
function w6Tools(scenario, server) {
  const starts = [];
  const body = (name) => (input) => {
    starts.push({ name, turn: W6.turnOf(name, input), at: server.now() });
    const result = `${name}: done`;
    return scenario.toolMs > 0 ? new Promise((resolve) => setTimeout(resolve, scenario.toolMs, result)) : result;
  };
  return { tools: { lookup: body('lookup'), write_file: body('write_file') }, starts };
}

/** One conversation (the floor: one reply): its wall and CPU time, what the server wrote, the tools' starts; every count checked. */
async function w6Once(who, api, scenario, server) {
  const { tools, starts } = w6Tools(scenario, server);
  const cpu = process.cpuUsage();
  const start = now();
  const out = await who.run({ api, scenario, baseURL: server.baseURL, tools });
  const ms = now() - start;
  const used = process.cpuUsage(cpu);
  const records = await server.take();
  const failed = records.find((r) => r.error);
  if (failed) throw new Error(`the server refused a request: ${failed.error}`);
  const turns = out.oneReply ? 1 : scenario.turns;
  if (records.length !== turns || records.some((r, i) => r.turn !== i + 1 || r.aborted)) {
    throw new Error(`the server answered turns ${records.map((r) => r.turn + (r.aborted ? ' (aborted)' : '')).join(', ')}, expected 1 to ${turns}`);
  }
  const chars = out.oneReply ? W6.turnText(scenario, 1).length : W6.conversationChars(scenario);
  if (out.chars !== chars) throw new Error(`streamed ${out.chars} characters of text, expected ${chars}`);
  const calls = out.oneReply ? 0 : 2 * (scenario.turns - 1);
  if (starts.length !== calls) throw new Error(`${starts.length} tool runs, expected ${calls}`);
  if (!out.oneReply && records.some((r) => !r.includeUsage)) throw new Error('a request did not ask for the usage (stream_options.include_usage)');
  const chunks = records.reduce((sum, r) => sum + r.chunks, 0);
  // the time from each call's last byte (written by the server) to its tool's start
  const latency = { a: [], b: [] };
  for (const s of starts) {
    const record = records[s.turn - 1];
    const tag = s.name === 'lookup' ? 'a' : 'b';
    latency[tag].push(s.at - record.at[tag]);
  }
  // the tool time a loop can hide in the stream: per tool turn, from the last call's last byte to the
  // reply's last byte, at most the tools' time (both calls' tools run in parallel)
  let overlap = 0;
  for (const r of records) if (r.at.b !== undefined) overlap += Math.min(r.at.end - Math.max(r.at.a, r.at.b), scenario.toolMs);
  const serverCpuUs = records.reduce((sum, r) => sum + r.serverCpuUs, 0);
  // how long the server streamed, all replies together: the same for every contender (the server
  // keeps to its schedule), which the wall times can be compared on
  const streaming = records.reduce((sum, r) => sum + (r.at.end - r.at.first), 0);
  return { ms, cpuUs: used.user + used.system, chunks, latency, overlap, serverCpuUs, streaming };
}

async function w6() {
  const W6Server = require('./lib/w6-server.js');
  const { httpContender } = require('./contenders/http.js');
  // (a) has more rounds: its CPU times scatter more than (c)'s wall times, which timers set
  const rounds = { cpu: QUICK ? 2 : 9, memory: QUICK ? 2 : 15, conversation: QUICK ? 2 : 7 };
  const scenarios = { cpu: W6.SCENARIOS['w6-cpu'], conversation: W6.SCENARIOS['w6-conversation'] };
  const names6 = names(W6_CONTENDERS);
  log(`W6: over HTTP (loopback server in a child process), ${W6_APIS.join(' and ')}: ${names6.join(', ')}; ${rounds.cpu} and ${rounds.conversation} rounds, each contender once a round`);
  const server = await W6Server.start();
  const memory = W6Server.inMemory();
  const cpu = {};
  const cpuInMemory = {};
  const conversation = {};
  try {
    for (const api of W6_APIS) {
      cpu[api] = {};
      cpuInMemory[api] = {};
      conversation[api] = {};
      const loaded = [];
      for (const name of names6) {
        try {
          const who = httpContender(name);
          await who.load();
          if (who.supports && !who.supports(api)) continue; // a baseline from before this API: no row
          loaded.push(who);
        } catch (error) {
          cpu[api][name] = { error: `could not load: ${error.message}` };
        }
      }
      // round-robin, not blocks: a run takes about a second, and the machine's other work moves the CPU
      // time of a run by tens of %; each round runs every contender once (starting one further each
      // round), so that what the machine does meets every contender alike. One warm-up run each first.
      const rounds6 = async (kind, scenario, who6, server6 = server) => {
        const runs = new Map(who6.map((who) => [who.name, []]));
        const failures = new Map();
        const attempt = async (who) => {
          if (failures.has(who.name)) return undefined;
          try {
            return await w6Once(who, api, scenario, server6);
          } catch (error) {
            failures.set(who.name, String(error?.message ?? error));
            log(`  ${api} ${who.name}: ${kind} FAILED ${failures.get(who.name)}`);
            return undefined;
          }
        };
        gc();
        for (const who of who6) await attempt(who);
        for (let r = 0; r < rounds[kind]; r++) {
          for (let k = 0; k < who6.length; k++) {
            const who = who6[(r + k) % who6.length];
            const run = await attempt(who);
            if (run) runs.get(who.name).push(run);
          }
        }
        return { runs, failures };
      };

      // (a) CPU per streamed chunk: the long tool turn and the short final one, instant tools
      const a = await rounds6('cpu', scenarios.cpu, loaded);
      for (const who of loaded) {
        const runs = a.runs.get(who.name);
        cpu[api][who.name] = a.failures.has(who.name)
          ? { error: a.failures.get(who.name) }
          : { ...stats(runs.map((r) => r.cpuUs / r.chunks)), chunks: runs[0].chunks, wall: stats(runs.map((r) => r.ms)), server: stats(runs.map((r) => r.serverCpuUs / r.chunks)) };
        log(`  ${api} ${who.name}: CPU µs per chunk ${describe(cpu[api][who.name])}`);
      }
      // rx-tool-loop ÷ each other contender, round by round: the two runs of a round meet the same
      // machine, so the median of these ratios moves less with other work than the ratio of medians
      const ours = a.runs.get('rx-tool-loop');
      if (ours && !a.failures.has('rx-tool-loop')) {
        cpu[api]['rx-tool-loop'].paired = {};
        for (const who of loaded) {
          const theirs = a.runs.get(who.name);
          if (who.name === 'rx-tool-loop' || a.failures.has(who.name) || theirs.length !== ours.length) continue;
          cpu[api]['rx-tool-loop'].paired[who.name] = stats(ours.map((r, i) => r.cpuUs / r.chunks / (theirs[i].cpuUs / theirs[i].chunks)));
          log(`  ${api} rx-tool-loop ÷ ${who.name}, CPU per chunk, paired by round: ${describe(cpu[api]['rx-tool-loop'].paired[who.name])}`);
        }
      }

      // (a') the same, without the socket: the global fetch answers from memory (lib/w6-server.js)
      memory.install();
      let m;
      try {
        m = await rounds6('memory', scenarios.cpu, loaded, memory);
      } finally {
        memory.uninstall();
      }
      const inMemoryOurs = m.runs.get('rx-tool-loop');
      for (const who of loaded) {
        const runs = m.runs.get(who.name);
        const perChunk = runs.map((r) => r.cpuUs / r.chunks);
        cpuInMemory[api][who.name] = m.failures.has(who.name)
          ? { error: m.failures.get(who.name) }
          : {
              ...stats(perChunk),
              // rx-tool-loop ÷ this contender, round by round
              paired: inMemoryOurs && !m.failures.has('rx-tool-loop') && who.name !== 'rx-tool-loop' ? stats(inMemoryOurs.map((r, i) => r.cpuUs / r.chunks / perChunk[i])) : undefined,
            };
        log(`  ${api} ${who.name}: CPU µs per chunk without the socket ${describe(cpuInMemory[api][who.name])}`);
      }

      // (b) and (c): the three-turn conversation, 200 ms tools
      const talking = loaded.filter((who) => !who.cpuOnly);
      const c = await rounds6('conversation', scenarios.conversation, talking);
      for (const who of talking) {
        const runs = c.runs.get(who.name);
        conversation[api][who.name] = c.failures.has(who.name)
          ? { error: c.failures.get(who.name) }
          : {
              ...stats(runs.map((r) => r.ms)),
              a: stats(runs.flatMap((r) => r.latency.a)),
              b: stats(runs.flatMap((r) => r.latency.b)),
              overlap: stats(runs.map((r) => r.overlap)),
              streaming: stats(runs.map((r) => r.streaming)),
            };
        const x = conversation[api][who.name];
        if (!x.error) {
          log(`  ${api} ${who.name}: conversation ms ${describe(x)}; tool start after the call's last byte: A ${describe(x.a)}, B ${describe(x.b)}; overlap available ${x.overlap.median.toFixed(1)} ms, replies streamed for ${x.streaming.median.toFixed(1)} ms`);
        }
      }
    }
  } finally {
    await server.stop();
  }
  return { apis: W6_APIS, scenarios, rounds, cpu, cpuInMemory, conversation };
}

// ---------------------------------------------------------------------------------------------
// W7: sessions (S3). Two targets. (1) `persist`'s CPU per entry, into a store that keeps nothing, against a
// JSON.stringify of that entry: a recorded W1 conversation's events replayed through `persist` (its trees made
// before the clock starts) minus the bare replay, and the entries it made stringified, in interleaved rounds on
// the process's CPU time. (2) `jsonlStore` makes exactly one fsync per turn_end: fs's fsync functions are wrapped
// in this process and counted around every run of a JSONL row, its turn_ends counted as they pass. Beside it, its
// time per turn: W1's 10-turn conversation through `conversation()` + `persist` into a `jsonlStore` of its own,
// paired by round with `conversation()` alone, against the same bytes written by hand (the writes the store made
// for one conversation, recorded, replayed with appendFileSync and an fsync where the store made one). Every row
// runs once per round, round-robin (the machine is shared: pairs see the same load); the in-memory rows and W1's
// loop are shown for information. Then loading sessions of 10,000 and 100,000 entries (the tree and its
// context): linear when the time per entry stays the same.

function sessionsLibrary() {
  const fs = require('node:fs');
  const path = require('node:path');
  const { DIST } = require('./lib/paths.js');
  const file = path.join(DIST, 'sessions', 'index.js');
  if (!fs.existsSync(file)) throw new Error(`bench: ${file} is missing: this build has no rx-tool-loop/sessions`);
  return require(file);
}

/** A store that keeps nothing: what persist costs by itself, the tree and its batches included. */
function discardingStore() {
  return { load: () => rxjs.EMPTY, append: () => rxjs.of(undefined) };
}

/**
 * W1's conversation through `conversation()`, with `persist` into a store made per conversation (`makeStore`), or
 * alone; `tally.turnEnds` counts the turn_ends that pass.
 */
function sessionContender(name, makeStore, tally) {
  const { fakeProvider } = require('./lib/rx-provider.js');
  const lib = contender('rx-tool-loop').library();
  const sessions = sessionsLibrary();
  const { registryFor } = require('./contenders/rx-tool-loop.js');
  return {
    name,
    async load() {},
    run(spec, counters, echo) {
      const registry = registryFor(lib, echo);
      return S.many(spec, () => {
        const store = makeStore?.();
        let tree;
        if (store) sessions.SessionTree.load(store).subscribe((loaded) => (tree = loaded)); // an empty file or memory: at once
        const save = store ? sessions.persist(tree, store) : (events) => events;
        const counted = tally ? rxjs.tap((event) => event.type === 'turn_end' && tally.turnEnds++) : (events) => events;
        return S.consume(rxjs.of('hi').pipe(lib.conversation({ provider: fakeProvider(spec, counters), registry, maxTurns: spec.turns }), save, counted), counters);
      });
    },
  };
}

/**
 * fs's fsync functions counted (every call, by name), and the writes of one fd recorded while `recording`: what
 * W7 checks jsonlStore by. The library calls them as properties of node:fs at each call, so wrapping them here
 * sees its calls. `restore()` puts the originals back.
 */
function fsProbe() {
  const fs = require('node:fs');
  const probe = { calls: { fsyncSync: 0, fsync: 0, fdatasyncSync: 0, fdatasync: 0 }, recording: false, log: [] };
  const originals = {};
  for (const name of [...Object.keys(probe.calls), 'writeSync']) {
    const original = (originals[name] = fs[name]);
    fs[name] = function counted(fd, buffer, offset, length) {
      if (name in probe.calls) probe.calls[name]++;
      if (probe.recording) {
        if (name === 'writeSync' && typeof buffer === 'string') {
          probe.log.push({ fd, bytes: Buffer.from(buffer, typeof length === 'string' ? length : 'utf8') }); // (fd, string, position, encoding)
        } else if (name === 'writeSync' && ArrayBuffer.isView(buffer)) {
          const bytes = Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength);
          const from = typeof offset === 'number' ? offset : 0;
          probe.log.push({ fd, bytes: Buffer.from(bytes.subarray(from, typeof length === 'number' ? from + length : undefined)) });
        } else if (name !== 'writeSync') probe.log.push({ fd, sync: name });
      }
      return original.apply(this, arguments);
    };
  }
  probe.total = () => Object.values(probe.calls).reduce((a, b) => a + b, 0);
  probe.restore = () => Object.assign(fs, originals);
  return probe;
}

/**
 * What the store wrote for one conversation, from `probe`'s record: the writes to the fd it fsynced, in order,
 * each marked when an fsync followed it. (A writeSync that wrote less than asked is recorded as written; the
 * store's own loop then writes the rest, recorded too.)
 */
function storeWrites(log) {
  const synced = log.find((x) => x.sync)?.fd;
  if (synced === undefined) throw new Error('W7: the JSONL store made no fsync while recorded');
  const writes = [];
  for (const x of log.filter((y) => y.fd === synced)) {
    if (x.bytes) writes.push({ bytes: x.bytes, sync: false });
    else if (writes.length > 0) writes[writes.length - 1].sync = true;
  }
  return writes;
}

/**
 * The same bytes by hand (node:fs alone, no library, no loop): a new file in `folder`, then each of `writes` with
 * appendFileSync and an fsync where the store made one. A contender of its own, timed in the same rounds.
 */
function byHand(name, folder, writes) {
  const fs = require('node:fs');
  const path = require('node:path');
  let files = 0;
  return {
    name,
    /** ms for `spec.conversations` of them. */
    time(spec) {
      const start = now();
      for (let c = 0; c < spec.conversations; c++) {
        const fd = fs.openSync(path.join(folder, `by-hand-${++files}.jsonl`), 'a');
        for (const write of writes) {
          fs.appendFileSync(fd, write.bytes);
          if (write.sync) fs.fsyncSync(fd);
        }
        fs.closeSync(fd);
      }
      return now() - start;
    },
  };
}

/** W1's conversation through `conversation()` once, its events kept: what `persist` is replayed on. */
async function recordedConversation(spec) {
  const { fakeProvider } = require('./lib/rx-provider.js');
  const { registryFor } = require('./contenders/rx-tool-loop.js');
  const lib = contender('rx-tool-loop').library();
  const one = { ...spec, conversations: 1 };
  const counters = S.newCounters();
  const registry = registryFor(lib, S.makeEcho(one, counters));
  const events = [];
  const record = (event) => {
    events.push(event);
    if (event.type === 'text_delta') {
      counters.deltas++;
      counters.chars += event.text.length;
    } else if (event.type === 'loop_end') counters.ends++;
  };
  await new Promise((resolve, reject) =>
    rxjs.of('hi').pipe(lib.conversation({ provider: fakeProvider(one, counters), registry, maxTurns: one.turns })).subscribe({ next: record, error: reject, complete: resolve }),
  );
  S.checkCounts(one, counters);
  return events;
}

/**
 * `persist`'s CPU per entry into a store that keeps nothing, against a JSON.stringify of each entry it made, µs
 * per entry, in `rounds` interleaved rounds of `conversations` replays each (the order reversed every other round):
 * per round, (replay through persist − bare replay) ÷ entries, stringify ÷ entries, and their ratio.
 */
function persistPerEntry(sessions, events, conversations, rounds) {
  const kept = [];
  const keeping = { load: () => rxjs.EMPTY, append: (entries) => (kept.push(...entries), rxjs.of(undefined)) };
  const treeOf = (store) => {
    let tree;
    sessions.SessionTree.load(store).subscribe((loaded) => (tree = loaded)); // nothing to load: at once
    return tree;
  };
  rxjs.from(events).pipe(sessions.persist(treeOf(keeping), keeping)).subscribe({ error: (error) => { throw error; } });
  const entries = kept.slice();
  if (entries.length === 0) throw new Error('W7: persist made no entries of the recorded conversation');
  const count = conversations * entries.length;
  const cpu = () => {
    const used = process.cpuUsage();
    return used.user + used.system; // µs
  };
  const noop = () => {};
  let sink = 0;
  const rows = {
    bare: () => {
      for (let c = 0; c < conversations; c++) rxjs.from(events).subscribe(noop);
    },
    persist: (trees, store) => {
      for (let c = 0; c < conversations; c++) rxjs.from(events).pipe(sessions.persist(trees[c], store)).subscribe(noop);
    },
    stringify: () => {
      for (let c = 0; c < conversations; c++) for (const entry of entries) sink += JSON.stringify(entry).length;
    },
  };
  const samples = { persist: [], stringify: [], ratio: [] };
  gc();
  for (let round = -3; round < rounds; round++) {
    // the trees are made before the clock starts: a session's load is no part of persist's cost per entry
    const store = discardingStore();
    const trees = Array.from({ length: conversations }, () => treeOf(store));
    const us = {};
    for (const name of round % 2 ? ['stringify', 'persist', 'bare'] : ['bare', 'persist', 'stringify']) {
      const start = cpu();
      rows[name](trees, store);
      us[name] = cpu() - start;
    }
    if (round < 0) continue; // the first rounds warm up
    const persist = (us.persist - us.bare) / count;
    const stringify = us.stringify / count;
    samples.persist.push(persist);
    samples.stringify.push(stringify);
    samples.ratio.push(persist / stringify);
  }
  if (sink === 0) throw new Error('W7: nothing stringified');
  return { entries: entries.length, conversations, rounds, persist: stats(samples.persist), stringify: stats(samples.stringify), ratio: stats(samples.ratio) };
}

/** Milliseconds to load a session of `count` entries and take its context, median of `reps`. */
function loadTimes(sessions, folder, count, reps) {
  const path = require('node:path');
  const file = path.join(folder, `load-${count}.jsonl`);
  const entries = Array.from({ length: count }, (_, i) => ({
    id: String(i + 1),
    parentId: i === 0 ? null : String(i),
    type: 'message',
    message: i % 2 === 0 ? { role: 'user', content: `prompt ${i}: ${S.delta(i).repeat(8)}` } : { role: 'assistant', content: `answer ${i}: ${S.delta(i).repeat(16)}`, stopReason: 'stop' },
    at: '2026-01-01T00:00:00.000Z',
  }));
  sessions.jsonlStore(file).append(entries).subscribe({ error: (error) => { throw error; } });
  const samples = [];
  for (let rep = 0; rep <= reps; rep++) {
    // each load from a collected heap: otherwise a load of 100,000 entries pays for collecting the tree the one
    // before it left (the run of ce345d3 measured 1.94× per entry at 100,000, this one's loads 0.99–1.15×)
    gc();
    const start = now();
    let context;
    sessions.SessionTree.load(sessions.jsonlStore(file)).subscribe((tree) => (context = tree.context()));
    const ms = now() - start;
    if (context?.length !== count) throw new Error(`loaded ${context?.length} messages of ${count}`);
    if (rep > 0) samples.push(ms); // the first is the warm-up
  }
  return stats(samples);
}

async function w7() {
  const fs = require('node:fs');
  const os = require('node:os');
  const path = require('node:path');
  const sessions = sessionsLibrary();
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'rx-tool-loop-bench-sessions-'));
  // the same on a RAM file system, where an fsync has no disk to wait for: the library's own cost of a write
  const shm = fs.existsSync('/dev/shm') ? fs.mkdtempSync(path.join('/dev/shm', 'rx-tool-loop-bench-')) : undefined;
  const probe = fsProbe();
  try {
    // W1's conversation (10 turns, 5 deltas, one call a turn but the last), 20 of them a round; 4 on the disk,
    // whose every fsync is a disk round trip (ms): its cost is per conversation all the same
    const spec = { conversations: QUICK ? 5 : 20, turns: 10, deltas: 5, calls: 1, sequential: true };
    const onDisk = { ...spec, conversations: QUICK ? 2 : 4 };

    // (1) persist's CPU per entry against JSON.stringify of the entry
    log(`W7 persist: W1's conversation (${spec.turns} turns) recorded, replayed through persist into a store that keeps nothing, against JSON.stringify of its entries; CPU µs per entry, interleaved rounds`);
    let perEntry;
    try {
      perEntry = persistPerEntry(sessions, await recordedConversation(spec), QUICK ? 50 : 500, QUICK ? 10 : 60);
      log(`  ${perEntry.entries} entries a conversation: persist ${describe(perEntry.persist)}, JSON.stringify ${describe(perEntry.stringify)}; persist ÷ stringify ${describe(perEntry.ratio)}`);
    } catch (error) {
      perEntry = { error: String(error?.message ?? error) };
      log(`  ${perEntry.error}`);
    }

    // (2) the bytes jsonlStore writes for one conversation, recorded, for the rows by hand
    let files = 0;
    const tallies = { disk: { turnEnds: 0, fsyncs: 0, runs: 0 }, tmpfs: { turnEnds: 0, fsyncs: 0, runs: 0 } };
    const jsonl = (name, dir, tally) => sessionContender(name, () => sessions.jsonlStore(path.join(dir, `session-${++files}.jsonl`)), tally);
    probe.log = [];
    probe.recording = true;
    try {
      await once(jsonl('recording', folder, undefined), { ...spec, conversations: 1 });
    } finally {
      probe.recording = false;
    }
    const writes = storeWrites(probe.log);
    probe.log = [];
    log(`  jsonlStore wrote one conversation in ${writes.length} writes (${writes.reduce((n, w) => n + w.bytes.length, 0)} bytes), ${writes.filter((w) => w.sync).length} fsyncs`);

    const loop = contender('rx-tool-loop');
    const alone = sessionContender('conversation', undefined);
    // two phases, each round-robin, the rows of each paired by round with the loop and conversation() of that round:
    // in memory and on tmpfs (fast rows, many rounds), then on the disk (slow rows, fewer)
    const phases = [
      {
        spec,
        rounds: QUICK ? 20 : 200,
        rows: [
          loop,
          alone,
          sessionContender('persist → a store that keeps nothing', () => discardingStore()),
          sessionContender('persist → memoryStore', () => sessions.memoryStore()),
          ...(shm ? [jsonl('persist → jsonlStore on tmpfs', shm, tallies.tmpfs), byHand('the same bytes by hand on tmpfs', shm, writes)] : []),
        ],
      },
      {
        spec: onDisk,
        rounds: QUICK ? 8 : 40,
        rows: [loop, alone, jsonl('persist → jsonlStore', folder, tallies.disk), byHand('the same bytes by hand', folder, writes)],
      },
    ];
    const tallyOf = (name) => (name === 'persist → jsonlStore' ? tallies.disk : name === 'persist → jsonlStore on tmpfs' ? tallies.tmpfs : undefined);
    log(`W7: W1's conversation (${spec.turns} turns) appended to a JSONL session of its own each (a write per batch, an fsync per turn_end), µs per conversation; round-robin, paired by round`);
    const timing = {};
    const shown = (x) => `${x.us.median.toFixed(1)} µs${x.share ? ` (${(x.share.median * 100).toFixed(0)}% of W1’s loop)` : ''}`;
    for (const [index, phase] of phases.entries()) {
      log(`  ${index === 0 ? 'in memory and on tmpfs' : 'on the disk'}: ${phase.spec.conversations} conversations a round, ${phase.rounds} rounds`);
      const samples = new Map(phase.rows.map((who) => [who.name, []]));
      const failures = {};
      gc();
      for (let round = -3; round < phase.rounds; round++) {
        for (const who of phase.rows) {
          if (failures[who.name]) continue;
          try {
            const tally = tallyOf(who.name);
            const [fsyncs, turnEnds] = [probe.total(), tally?.turnEnds];
            const ms = who.time ? who.time(phase.spec) : (await once(who, phase.spec)).ms;
            if (tally) {
              // every fsync of this run is the store's: nothing else runs while it does
              tally.fsyncs += probe.total() - fsyncs;
              tally.runs++;
              if (tally.turnEnds - turnEnds !== phase.spec.conversations * phase.spec.turns) throw new Error(`${tally.turnEnds - turnEnds} turn_ends in a run (expected ${phase.spec.conversations * phase.spec.turns})`);
            }
            if (round >= 0) samples.get(who.name).push((ms * 1000) / phase.spec.conversations); // the first rounds warm up
          } catch (error) {
            failures[who.name] = { error: String(error?.message ?? error) };
          }
        }
      }
      const base = failures.conversation ? undefined : samples.get('conversation');
      const loopTimes = failures['rx-tool-loop'] ? undefined : samples.get('rx-tool-loop');
      // paired, round by round: µs over conversation() alone, and that as a share of W1's loop in the same round
      const paired = (extra) => ({ us: stats(extra), share: loopTimes ? stats(extra.map((us, i) => us / loopTimes[i])) : undefined });
      for (const who of phase.rows) {
        if (index > 0 && timing[who.name]) continue; // the loop and conversation() as the first phase measured them
        if (failures[who.name]) {
          timing[who.name] = failures[who.name];
          log(`  ${who.name}: ${describe(timing[who.name])}`);
          continue;
        }
        const mine = samples.get(who.name);
        const t = (timing[who.name] = { ...stats(mine), rounds: phase.rounds, conversations: phase.spec.conversations });
        if (who.time) t.alone = paired(mine); // the bytes by hand: no conversation to take away
        else if (who.name.startsWith('persist') && base) t.over = paired(mine.map((us, i) => us - base[i]));
        // a JSONL row over conversation() and over the same bytes by hand in the same round: the library's own part
        const handName = who.name.replace('persist → jsonlStore', 'the same bytes by hand');
        const hand = who.name.startsWith('persist → jsonlStore') && !failures[handName] ? samples.get(handName) : undefined;
        if (hand && base) t.overHand = paired(mine.map((us, i) => us - base[i] - hand[i]));
        log(`  ${who.name}: ${describe(t)}${t.over ? `; over conversation() (paired) ${shown(t.over)}` : ''}${t.overHand ? `, and over the same bytes by hand ${shown(t.overHand)}` : ''}${t.alone ? `; ${shown(t.alone)}` : ''}`);
      }
    }
    const fsyncs = Object.fromEntries(
      Object.entries(tallies)
        .filter(([, x]) => x.runs > 0)
        .map(([where, x]) => [where, { ...x, perTurnEnd: x.turnEnds > 0 ? x.fsyncs / x.turnEnds : undefined }]),
    );
    for (const [where, x] of Object.entries(fsyncs)) log(`  fsyncs of jsonlStore (${where}): ${x.fsyncs} for ${x.turnEnds} turn_ends in ${x.runs} runs (${x.perTurnEnd?.toFixed(3)} per turn_end)`);
    const counts = QUICK ? [1_000, 10_000] : [10_000, 100_000];
    log(`W7 load: sessions of ${counts.map((n) => n.toLocaleString('en-US')).join(' and ')} entries, ms`);
    const load = {};
    for (const count of counts) {
      try {
        load[count] = loadTimes(sessions, folder, count, QUICK ? 2 : 7);
      } catch (error) {
        load[count] = { error: String(error?.message ?? error) };
      }
      log(`  ${count}: ${describe(load[count])}`);
    }
    return { spec, onDisk: onDisk.conversations, rounds: phases.map((phase) => phase.rounds), timing, load, counts, perEntry, fsyncs, writes: { count: writes.length, bytes: writes.reduce((n, w) => n + w.bytes.length, 0), fsyncs: writes.filter((w) => w.sync).length } };
  } finally {
    probe.restore();
    fs.rmSync(folder, { recursive: true, force: true });
    if (shm) fs.rmSync(shm, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// W9: agents as tools (A1–A5). W1's conversation with its `echo` tool an `agentTool` whose inner loop is
// one turn of the same fake model (5 deltas, then stop, its answer the echoed text), wired as the README
// shows (the call's context.signal passed on), every inner event forwarded to the outer subscriber as a
// tool_update. The target splits the agent tool's run (what its row adds over W1's loop) in three: the inner
// loop alone (the plain echo running the same loop, nothing forwarded), the forwarding any Observable tool
// pays (an Observable echo of as many progress values), and agentTool's own cost, what is left: at most 10%
// of the other two. Every row is W1's loop through the same harness, only its `echo` changed (lib/agent-rows.js).

const W9_ALONE = 'a one-turn loop per call, not forwarded';
const W9_ROWS = {
  'rx-tool-loop': 'loop',
  [W9_ALONE]: 'alone',
  'a one-turn loop per call, given the signal': 'alone-signal',
  'an Observable tool of 10 progress values': 'progress',
  'agent tools': 'signal',
  'agent tools, no signal': 'none',
};
// the agent tool rows and the rows their own cost is taken against: [agent, inner loop alone]
const W9_AGENTS = [
  ['agent tools', 'a one-turn loop per call, given the signal'],
  ['agent tools, no signal', W9_ALONE],
];
const W9_PROGRESS = 'an Observable tool of 10 progress values';

function agentToolContender(name, row) {
  const { echoRegistry } = require('./lib/agent-rows.js');
  const lib = contender('rx-tool-loop').library();
  const { fakeProvider } = require('./lib/rx-provider.js');
  if (!echoRegistry(lib, row, () => '', S.newCounters(), 5)) throw new Error(`bench: this build cannot make W9's ${row} row (no agentTool or toolProgress)`);
  return {
    name,
    async load() {},
    run(spec, counters, echo) {
      const innerCounters = S.newCounters();
      const registry = echoRegistry(lib, row, echo, innerCounters, spec.deltas);
      const want = row === 'loop' ? 0 : spec.conversations * (spec.turns - 1) * spec.calls;
      return S.many(spec, () =>
        new Promise((resolve, reject) => {
          let final;
          lib.runEventedToolLoop({ provider: fakeProvider(spec, counters), registry, messages: [{ role: 'user', content: 'hi' }], maxTurns: spec.turns }).subscribe({
            next(event) {
              if (event.type === 'text_delta') {
                counters.deltas++;
                counters.chars += event.text.length;
              } else if (event.type === 'tool_update' && event.event?.type === 'text_delta') {
                innerCounters.deltas++;
              } else if (event.type === 'loop_end') {
                counters.ends++;
                final = event.messages;
              }
            },
            error: reject,
            complete: () => resolve(final),
          });
        }),
      ).then((finals) => {
        // the rows that run an inner loop make one model call a call; every row makes (or forwards) its deltas
        const model = row === 'loop' || row === 'progress' ? 0 : want;
        if (innerCounters.model !== model || innerCounters.deltas !== want * spec.deltas) {
          throw new Error(`W9 ${row}: ${innerCounters.model} inner model calls and ${innerCounters.deltas} inner deltas (expected ${model} and ${want * spec.deltas})`);
        }
        return finals;
      });
    },
  };
}

async function w9() {
  const spec = { conversations: QUICK ? 20 : 200, turns: 10, deltas: 5, calls: 1, sequential: true };
  const turns = spec.conversations * spec.turns;
  const innerTurns = spec.conversations * (spec.turns - 1) * spec.calls;
  log(`W9: W1's ${spec.conversations} conversations x ${spec.turns} turns, each call an agent tool of one turn, µs per conversation`);
  const contenders = [];
  const failures = {};
  for (const [name, row] of Object.entries(W9_ROWS)) {
    try {
      contenders.push(agentToolContender(name, row));
    } catch (error) {
      failures[name] = String(error?.message ?? error);
    }
  }
  // round-robin in one process, the order reversed every other round: each round's runs see the same machine,
  // so every part is taken against the W1 run of its own round (the machine is shared)
  const ms = new Map(contenders.map((who) => [who.name, []]));
  const cpu = new Map(contenders.map((who) => [who.name, []]));
  const attempt = async (who, keep) => {
    if (failures[who.name]) return;
    try {
      const run = await once(who, spec);
      if (keep) {
        ms.get(who.name).push(run.ms);
        cpu.get(who.name).push(run.cpuMs);
      }
    } catch (error) {
      failures[who.name] = String(error?.message ?? error);
    }
  };
  gc();
  for (const who of contenders) for (let i = 0; i < 5; i++) await attempt(who, false);
  const rounds = QUICK ? 7 : 61;
  for (let r = 0; r < rounds; r++) for (const who of r % 2 ? contenders.slice().reverse() : contenders) await attempt(who, true);
  const perConversation = (v) => (v * 1000) / spec.conversations;
  const timing = {};
  for (const name of Object.keys(W9_ROWS)) {
    timing[name] = failures[name] ? { error: failures[name] } : { ...stats(ms.get(name).map(perConversation)), cpu: stats(cpu.get(name).map(perConversation)) };
    log(`  ${name}: ${describe(timing[name])}`);
  }
  if (failures['rx-tool-loop']) return { spec, innerTurns, rounds, timing };
  // per round, on CPU time (less moved than the wall clock by the other work on a shared machine) and on wall time
  const paired = { cpu: w9Paired(cpu, failures, turns, innerTurns), wall: w9Paired(ms, failures, turns, innerTurns) };
  for (const [clock, p] of Object.entries(paired)) {
    for (const [name, q] of Object.entries(p.own)) {
      log(`  ${clock}, ${name}: µs per call: the inner loop alone ${q.inner.median.toFixed(2)}, forwarding ${q.forwarding.median.toFixed(2)}, the agent tool ${q.agent.median.toFixed(2)}; its own cost ${q.own.median.toFixed(2)} µs, ${(q.share.median * 100).toFixed(1)}% of the other two (medians of ${rounds} rounds)`);
    }
  }
  return { spec, innerTurns, rounds, timing, paired };
}

/**
 * W9 per round: an outer turn (W1's loop over its turns), each row's cost per call (what it adds over W1's loop),
 * and each agent tool's parts (lib/agent-rows.js ownCost): medians of the rounds' own figures.
 */
function w9Paired(series, failures, turns, calls) {
  const { ownCost } = require('./lib/agent-rows.js');
  const loop = series.get('rx-tool-loop');
  const paired = { outerTurn: stats(loop.map((v) => (v * 1000) / turns)), perCall: {}, own: {} };
  for (const name of Object.keys(W9_ROWS).slice(1)) {
    if (!failures[name]) paired.perCall[name] = stats(series.get(name).map((v, i) => ((v - loop[i]) * 1000) / calls));
  }
  for (const [agent, alone] of W9_AGENTS) {
    if (failures[agent] || failures[alone] || failures[W9_PROGRESS]) continue;
    const parts = loop.map((_, i) => ownCost({ loop: loop[i], alone: series.get(alone)[i], progress: series.get(W9_PROGRESS)[i], agent: series.get(agent)[i] }, calls));
    paired.own[agent] = Object.fromEntries(['inner', 'forwarding', 'agent', 'own', 'share'].map((key) => [key, stats(parts.map((p) => p[key]))]));
  }
  return paired;
}

// ---------------------------------------------------------------------------------------------

const WORKLOADS = { W1: w1, W1b: w1b, W2: w2, W3: w3, W4: w4, W5: w5, W6: w6, W7: w7, W9: w9 };

async function main() {
  checkOneRxjs();
  const run = WORKLOADS[workload];
  if (!run) throw new Error(`bench: unknown workload ${workload} (have: ${Object.keys(WORKLOADS).join(', ')})`);
  const result = await run();
  process.stdout.write(`BENCH_RESULT ${JSON.stringify({ workload, interleaved: INTERLEAVED, quick: QUICK, ...result })}\n`);
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`${error?.stack ?? error}\n`);
    process.exit(1);
  },
);
