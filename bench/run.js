'use strict';
// `npm run bench`: runs every workload, each in a Node process of its own, prints the tables and
// writes them to bench/results.md with the targets (met / missed) and, for each missed target, a
// profile of rx-tool-loop on that workload.
//
//   node bench/run.js                   # everything (about 8 minutes on 2 cores)
//   node bench/run.js --openai-agents   # also the OpenAI Agents SDK, in processes of its own
//   node bench/run.js --only=W1,W3      # some workloads; prints, does not write results.md
//   node bench/run.js --only=SSE        # U3: writeSse and sseResponse beside the AI SDK's SSE writers (bench/sse.js)
//   node bench/run.js --quick           # small sizes, a smoke test; does not write results.md
//   node bench/run.js --no-profile      # no profiles of missed targets
//   RX_TOOL_LOOP_DIST=path/to/dist node bench/run.js --out=/tmp/candidate.md
//                                       # a candidate build of the library (results.md untouched)
//   node bench/run.js --baseline=REF    # the baseline beside rx-tool-loop: the library at a git ref
//                                       # (default v3, or RX_TOOL_LOOP_BASELINE=REF); --baseline=none: no baseline
//   node bench/run.js --w10-10000       # W10 at 10,000 conversations too (~6 minutes more)
//   node bench/run.js --help            # this list
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const baseline = require('./lib/baseline.js');

const BENCH = __dirname;
const ROOT = path.resolve(BENCH, '..');
const args = process.argv.slice(2);
// --help prints the usage above; a flag run.js does not know is refused before anything runs (a typo would
// otherwise start the whole bench, ~8 minutes)
const USAGE = fs
  .readFileSync(__filename, 'utf8')
  .split('\n')
  .filter((line) => line.startsWith('//   '))
  .map((line) => line.slice(2))
  .join('\n');
const FLAGS = ['--openai-agents', '--quick', '--no-profile', '--w10-10000', '--help'];
const VALUED = ['--only=', '--out=', '--baseline='];
if (args.includes('--help') || args.includes('-h')) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const unknown = args.filter((arg) => !FLAGS.includes(arg) && !VALUED.some((flag) => arg.startsWith(flag)));
if (unknown.length > 0) {
  process.stderr.write(`bench: unknown option ${unknown.join(', ')}; run.js takes:\n${USAGE}\n`);
  process.exit(2);
}
const has = (name) => args.includes(`--${name}`);
const only = args.find((arg) => arg.startsWith('--only='))?.slice('--only='.length).split(',');
const QUICK = has('quick');
const OPENAI = has('openai-agents');
const PROFILE = !has('no-profile');
const OUT = args.find((arg) => arg.startsWith('--out='))?.slice('--out='.length);
// results.md is for full runs of the root's build; a candidate build (RX_TOOL_LOOP_DIST) or a partial
// run writes only where --out says
const WRITE = OUT ? path.resolve(OUT) : !QUICK && !only && !process.env.RX_TOOL_LOOP_DIST ? path.join(BENCH, 'results.md') : undefined;

const BASELINE_REF = baseline.refFrom(args);
// set by main(): the built baseline ({ name, label, ref, commit, entry }), or why there is none
let BASELINE;
let BASELINE_NOTE = 'none (--baseline=none)';
// "no feature may make the loop slower than the baseline": W2 and W4 allow this much measurement noise
// (on the paired ratio, see pairedWithBaseline in workload.js)
const NOISE = 0.05;

const ALL_WORKLOADS = ['W1', 'W1b', 'W2', 'W3', 'W4', 'W5', 'W6', 'W7', 'W9', 'L6', 'U1', 'U2', 'SSE', 'W10'];
// workloads that are a script of their own rather than a row of workload.js
const SCRIPTS = { L6: 'limits.js', U1: 'ag-ui.js', U2: 'ui-message-stream.js' };
if (only?.some((w) => !ALL_WORKLOADS.includes(w))) {
  process.stderr.write(`bench: unknown workload in --only: ${only.filter((w) => !ALL_WORKLOADS.includes(w)).join(', ')} (have: ${ALL_WORKLOADS.join(', ')})\n`);
  process.exit(2);
}
const WORKLOADS = ALL_WORKLOADS.filter((w) => !only || only.includes(w));
const OPENAI_WORKLOADS = ['W1', 'W1b', 'W3'].filter((w) => WORKLOADS.includes(w));
const OPENAI_CONTENDERS = 'openai-agents-run,openai-agents-stream';
// W1's fast contenders run in this many processes in all, their repetitions pooled: the per-turn
// median of one process moves by up to ±30% from one process to the next (JIT and GC timing)
const W1_PROCESSES = QUICK ? 1 : 3;
const W1_FAST = 'floor,rx-expand,rx-tool-loop,rx-tool-loop+otel,rx-tool-loop+limited,pi-runAgentLoop,pi-agentLoop,ai-generateText';
const PEERS = ['@mariozechner/pi-agent-core', '@mariozechner/pi-ai', 'ai', '@ai-sdk/openai', '@ai-sdk/anthropic', '@openai/agents'];

const LABELS = {
  floor: 'hand-written async-generator loop (floor)',
  'rx-expand': 'minimal RxJS expand loop (reference)',
  'rx-tool-loop': '**rx-tool-loop** (runEventedToolLoop + ToolRegistry)',
  'rx-tool-loop+otel': 'rx-tool-loop + traceLoop on a no-op tracer (O4)',
  'rx-tool-loop+limited': 'rx-tool-loop, its provider through `limited` with a free slot (L6)',
  'pi-runAgentLoop': 'Pi agent core runAgentLoop (callback)',
  'pi-agentLoop': 'Pi agent core agentLoop (EventStream)',
  'ai-generateText': 'AI SDK generateText',
  'ai-streamText': 'AI SDK streamText (fullStream)',
  'openai-agents-run': 'OpenAI Agents SDK run()',
  'openai-agents-stream': 'OpenAI Agents SDK run({ stream: true })',
};
const PEER_CONTENDERS = ['pi-runAgentLoop', 'pi-agentLoop', 'ai-generateText', 'ai-streamText', 'openai-agents-run', 'openai-agents-stream'];

function log(line = '') {
  process.stderr.write(`${line}\n`);
}

// ---------------------------------------------------------------------------------------------
// environment

function preflight() {
  require('./lib/paths.js'); // throws when the library is not built
  for (const peer of ['@mariozechner/pi-agent-core', 'ai']) {
    if (!fs.existsSync(path.join(BENCH, 'node_modules', peer, 'package.json'))) {
      throw new Error(`bench: ${peer} is not installed: run \`npm ci --prefix bench\` at the root first`);
    }
  }
}

function readVersion(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')).version;
  } catch {
    return undefined;
  }
}

function git(...gitArgs) {
  const out = spawnSync('git', ['-C', ROOT, ...gitArgs], { encoding: 'utf8' });
  return out.status === 0 ? out.stdout.trim() : undefined;
}

function environment() {
  const { DIST, ENTRY } = require('./lib/paths.js');
  const rxjsPath = require.resolve('rxjs/package.json', { paths: [DIST] });
  const commit = git('rev-parse', '--short', 'HEAD');
  const dirty = git('status', '--porcelain', '--', 'src');
  const cpus = os.cpus();
  return {
    date: new Date().toISOString(),
    entry: path.relative(ROOT, ENTRY),
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    cpus: `${cpus.length} × ${cpus[0]?.model?.trim() ?? 'unknown CPU'}`,
    library: readVersion(path.join(ROOT, 'package.json')),
    commit: process.env.RX_TOOL_LOOP_DIST
      ? `RX_TOOL_LOOP_DIST=${path.relative(ROOT, DIST)}`
      : commit
        ? `${commit}${dirty ? ' + uncommitted changes in src/' : ''}`
        : 'unknown',
    rxjs: `${readVersion(rxjsPath)} (${path.relative(ROOT, path.dirname(rxjsPath))})`,
    peers: Object.fromEntries(PEERS.map((peer) => [peer, readVersion(path.join(BENCH, 'node_modules', peer, 'package.json')) ?? 'not installed'])),
  };
}

// ---------------------------------------------------------------------------------------------
// running the workloads

// W10 is a script of its own (w10.js: a server and a client process per contender), its sizes from the flags
const W10_ARGS = [path.join(BENCH, 'w10.js'), `--conversations=${QUICK ? '100' : has('w10-10000') ? '1000,10000' : '1000'}`, '--result'];

function runWorkload(workload, extra = []) {
  return new Promise((resolve) => {
    const script = SCRIPTS[workload];
    // SSE (U3) and W10 are scripts of their own too, each with a server here and a client in a process of its own
    const childArgs =
      workload === 'W10'
        ? W10_ARGS
        : workload === 'SSE'
          ? [path.join(BENCH, 'sse.js'), path.dirname(require('./lib/paths.js').ENTRY), ...(QUICK ? ['--events=20000', '--rounds=1'] : [])]
          : ['--expose-gc', path.join(BENCH, script ?? 'workload.js'), ...(script ? [] : [workload]), ...extra, ...(QUICK ? ['--quick'] : [])];
    const started = Date.now();
    const load = os.loadavg()[0];
    const child = spawn(process.execPath, childArgs, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, BENCH_RUN: '1' } });
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => process.stderr.write(chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), (workload === 'W10' ? 40 : 8) * 60_000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.split('\n').find((l) => l.startsWith('BENCH_RESULT '));
      const meta = { seconds: Math.round((Date.now() - started) / 1000), loadBefore: load, loadAfter: os.loadavg()[0] };
      if (code !== 0 || !line) {
        const how = signal ? `was killed (${signal})` : `ended with code ${code}`;
        resolve({ workload, error: `the ${workload} process ${how}${line ? '' : ' without printing its result'}`, ...meta });
      } else {
        resolve({ ...JSON.parse(line.slice('BENCH_RESULT '.length)), ...meta });
      }
    });
  });
}

function statsOf(samples) {
  const sorted = samples.slice().sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { median, min: sorted[0], max: sorted[sorted.length - 1], n: sorted.length, samples };
}

/** Pools the repetitions of W1's extra timing processes into the main one's. */
function pool(main, extra) {
  if (!extra || extra.error) return;
  for (const key of ['paired', 'otel', 'limited']) {
    const [m, x] = [main[key], extra[key]];
    if (m && !m.error && x && !x.error) main[key] = { ...statsOf(m.samples.concat(x.samples)), perProcess: (m.perProcess ?? [m.median]).concat(x.median) };
  }
  for (const [name, t] of Object.entries(extra.timing)) {
    const m = main.timing[name];
    if (!m || m.error || t.error) {
      if (t.error && m && !m.error) main.timing[name] = t;
      continue;
    }
    const perProcess = (m.perProcess ?? [m.median]).concat(t.median);
    main.timing[name] = {
      ...statsOf(m.samples.concat(t.samples)),
      cpu: statsOf(m.cpu.samples.concat(t.cpu.samples)),
      synchronous: m.synchronous && t.synchronous,
      perProcess,
    };
  }
}

/** Adds the OpenAI Agents SDK rows (run in their own process) to the main results. */
function merge(main, extra) {
  if (!extra || extra.error) return;
  for (const key of ['timing', 'heap', 'bigHeap', 'results']) {
    if (extra[key]) main[key] = { ...main[key], ...extra[key] };
  }
}

// ---------------------------------------------------------------------------------------------
// formatting

const fmt = (value, digits = 2) => (value === undefined || Number.isNaN(value) ? '–' : value.toFixed(digits));
const int = (value) => (value === undefined ? '–' : Math.round(value).toLocaleString('en-US'));
const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;
const mib = (bytes) => `${(bytes / 1048576).toFixed(1)} MiB`;
const spread = (s, f = fmt) => `${f(s.median)} (${f(s.min)} – ${f(s.max)})`;
const label = (name) => LABELS[name] ?? (BASELINE && name.startsWith(BASELINE.name) ? BASELINE.label + name.slice(BASELINE.name.length) : name);
const ok = (x) => x && !x.error;
const ratio = (a, b) => `${fmt(a / b)}×`;

/** The ratio of the paired repetitions (workload.js): median (min – max) of current ÷ baseline time. */
const pairedText = (p) => (ok(p) ? `${fmt(p.median)}× (${fmt(p.min)} – ${fmt(p.max)}, ${p.n} pairs${p.perProcess ? `; each process ${p.perProcess.map((m) => fmt(m)).join(', ')}` : ''})` : p ? failed(p) : '–');

/** The line under a table that compares rx-tool-loop with the baseline: `parts` are [what, ratio text]. */
function vsBaseline(parts) {
  if (!BASELINE) return '';
  const said = parts.filter(Boolean).map(([what, text]) => `${what} ${text}`);
  return `\n\n**rx-tool-loop ÷ ${BASELINE.label}** (the baseline): ${said.length > 0 ? said.join('; ') : 'not comparable, one of them failed'}.`;
}

/** A markdown table: the first column left-aligned, the others right-aligned unless `left`. */
function table(header, rows, left = false) {
  const lines = [`| ${header.join(' | ')} |`, `|${header.map((h, i) => (i === 0 || left ? ' --- ' : ' ---: ')).join('|')}|`];
  for (const row of rows) lines.push(`| ${row.join(' | ')} |`);
  return lines.join('\n');
}

function failed(result) {
  return `failed: ${String(result.error).split('\n')[0]}`; // one line: it goes into a table cell
}

function w1Table(r) {
  const floor = r.timing.floor?.median;
  const heapCell = (h) => (h ? (h.error ? failed(h) : `${kib(h.median)} (${kib(h.min)} – ${kib(h.max)})`) : '–');
  const rows = Object.entries(r.timing).map(([name, t]) => {
    if (t.error) return [label(name), failed(t), '', '', '', '', ''];
    return [
      label(name),
      fmt(t.median),
      `${fmt(t.min)} – ${fmt(t.max)}`,
      (t.perProcess ?? [t.median]).map((m) => fmt(m)).join(', '),
      floor ? `${fmt(t.median / floor, 1)}×` : '–',
      heapCell(r.heap?.[name]),
      heapCell(r.bigHeap?.[name]),
    ];
  });
  const big = r.bigHeapSpec?.conversations ?? 1000;
  const [cur, base] = [r.timing['rx-tool-loop'], r.timing[BASELINE?.name]];
  const perProcess = ok(cur) && ok(base) ? (cur.perProcess ?? [cur.median]).map((m, i) => ratio(m, (base.perProcess ?? [base.median])[i])) : [];
  const heapRatio = (h, paused) => ok(h?.['rx-tool-loop']) && ok(h[BASELINE?.name]) && [`live heap, ${paused} paused,`, ratio(h['rx-tool-loop'].median, h[BASELINE.name].median)];
  return (
    table(
      ['contender', 'µs per turn (median)', 'min – max', 'median of each process', '× floor', 'live heap per paused conversation, 100 paused', `the same, ${int(big)} paused`],
      rows,
    ) +
    vsBaseline([
      ok(cur) && ok(base) && ['time per turn (block medians)', `${ratio(cur.median, base.median)} (each process: ${perProcess.join(', ')})`],
      r.paired && ['paired repetitions', pairedText(r.paired)],
      heapRatio(r.heap, '100'),
      heapRatio(r.bigHeap, int(big)),
    ])
  );
}

function w1bTable(r) {
  const rows = Object.entries(r.results).map(([name, x]) =>
    x.error ? [label(name), failed(x), '', '', ''] : [label(name), String(x.conversations), spread(x.ten), spread(x.forty), `${fmt(x.growth)}×`],
  );
  const [cur, base] = [r.results['rx-tool-loop'], r.results[BASELINE?.name]];
  const both = ok(cur) && ok(base);
  return (
    table(['contender', 'conversations', 'µs/turn at 10 turns', 'µs/turn at 40 turns', '40 / 10'], rows) +
    vsBaseline([both && ['time per turn at 10 turns', ratio(cur.ten.median, base.ten.median)], both && ['at 40 turns', ratio(cur.forty.median, base.forty.median)]])
  );
}

function w2Table(r) {
  const rows = Object.entries(r.timing).map(([name, t]) => {
    if (t.error) return [label(name), failed(t), '', '', ''];
    const h = r.heap[name];
    const deltas = t.scaled?.deltas ?? r.spec.deltas;
    return [
      label(name),
      int(deltas),
      spread(t, int),
      h ? (h.error ? failed(h) : `${fmt(h.retained.median)}× (${fmt(h.retained.min)} – ${fmt(h.retained.max)})`) : '–',
      h && !h.error ? `${fmt(h.peak.median)}×` : '–',
    ];
  });
  const [cur, base] = [r.timing['rx-tool-loop'], r.timing[BASELINE?.name]];
  const [curHeap, baseHeap] = [r.heap['rx-tool-loop'], r.heap[BASELINE?.name]];
  return (
    table(['contender', 'deltas', 'deltas per second (min – max)', 'heap growth ÷ text size', 'peak (sampled) ÷ text size'], rows) +
    vsBaseline([
      ok(cur) && ok(base) && ['deltas per second', ratio(cur.median, base.median)],
      r.paired && ['time, paired repetitions', pairedText(r.paired)],
      ok(curHeap) && ok(baseHeap) && ['heap growth', ratio(curHeap.retained.median, baseHeap.retained.median)],
    ])
  );
}

/** U2: `toUiMessageStream` an event, beside the AI SDK's own translation a part of the same run (µs, CPU, median of the rounds). */
function u2Table(r) {
  const us = (x) => `${fmt(x.median, 3)} (${fmt(x.min, 3)} – ${fmt(x.max, 3)})`;
  const rows = [['**rx-tool-loop** `toUiMessageStream()` (an Observable operator)', `${int(r.rx.events)} events → ${int(r.rx.chunksPerRun)} chunks`, us(r.rx.perEvent)]];
  if (r.aiSdk.error) rows.push(['AI SDK', failed(r.aiSdk), '']);
  else {
    rows.push([`AI SDK ${r.aiSdk.version} \`toUIMessageStream({ stream })\` (streamText's parts through its ReadableStream)`, `${int(r.aiSdk.parts)} parts → ${int(r.aiSdk.chunks)} chunks`, us(r.aiSdk.streamPerPart)]);
    rows.push([`AI SDK ${r.aiSdk.version} \`toUIMessageChunk(part)\` (its translation alone, no stream)`, `${int(r.aiSdk.parts)} parts`, us(r.aiSdk.chunkPerPart)]);
  }
  return table(['translation', 'run', 'µs an event or part (min – max)'], rows);
}

function w3Table(r) {
  const rows = Object.entries(r.timing).map(([name, t]) => (t.error ? [label(name), failed(t)] : [label(name), spread(t, (v) => fmt(v, 1))]));
  const [cur, base] = [r.timing['rx-tool-loop'], r.timing[BASELINE?.name]];
  return table(['contender', 'wall ms (min – max)'], rows) + vsBaseline([ok(cur) && ok(base) && ['wall time', ratio(cur.median, base.median)]]);
}

function w4Table(r) {
  const turns = r.spec.turns;
  const rows = Object.entries(r.timing).map(([name, t]) => {
    const stack = r.stack[name];
    const frames = stack?.probes ? Object.entries(stack.probes).map(([turn, p]) => `${turn}: ${p.frames}`).join(', ') : '–';
    const flat = !stack ? '–' : stack.error ? `no, ${failed(stack)}` : stack.flat ? 'yes' : 'no';
    if (t.error) return [label(name), failed(t), '', frames, flat];
    return [label(name), spread(t, (v) => fmt(v, 0)), t.synchronous ? 'yes' : 'no', frames, flat];
  });
  const B = BASELINE?.name;
  const [cur, base] = [r.timing['rx-tool-loop'], r.timing[B]];
  const [reading, baseReading] = [r.timing['rx-tool-loop (provider reads the history)'], r.timing[`${B} (provider reads the history)`]];
  const [stack, baseStack] = [r.stack['rx-tool-loop'], r.stack[B]];
  return [
    table(['contender', `total ms for ${int(turns)} turns (min – max)`, 'completes synchronously', 'stack frames in the provider, by turn', 'flat'], rows) +
      vsBaseline([
        ok(cur) && ok(base) && ['total time', ratio(cur.median, base.median)],
        r.paired && ['paired repetitions', pairedText(r.paired)],
        ok(reading) && ok(baseReading) && ['with a provider that reads the history', ratio(reading.median, baseReading.median)],
        ok(stack) && ok(baseStack) && ['stack frames at the last turn', `${stack.probes[turns]?.frames} vs ${baseStack.probes[turns]?.frames}`],
      ]),
    '',
    'Free stack depth (frames a probe could still recurse) inside the provider: ' +
      Object.entries(r.stack)
        .filter(([, s]) => s.probes && s.probes[turns])
        .map(([name, s]) => `${name} ${s.probes[2]?.free} at turn 2, ${s.probes[turns].free} at turn ${turns}`)
        .join('; ') +
      '.',
  ].join('\n');
}

function w5Table(r) {
  const rows = Object.entries(r.results).map(([name, x]) =>
    x.error
      ? [label(name), int(r.loops), failed(x), '', '', '', '']
      : [label(name), int(r.loops), int(x.turns), int(x.events), spread(x.time, (v) => fmt(v, 0)), spread(x.peak, mib), String(x.failureCount)],
  );
  const [cur, base] = [r.results['rx-tool-loop'], r.results[BASELINE?.name]];
  const out = [
    table(['contender', 'loops', 'turns (last rep)', 'events (last rep)', 'total ms (min – max)', 'peak heap above baseline', 'invariant failures'], rows) +
      vsBaseline([ok(cur) && ok(base) && ['total time', ratio(cur.time.median, base.time.median)], ok(cur) && ok(base) && ['peak heap', ratio(cur.peak.median, base.peak.median)]]),
  ];
  for (const [name, x] of Object.entries(r.results)) {
    if (x.failureCount > 0) out.push('', `First failures of ${label(name)}:`, '', ...x.failures.map((f) => `- ${f}`));
  }
  return out.join('\n');
}

const W7_LABELS = {
  'rx-tool-loop': 'W1’s loop: **rx-tool-loop** runEventedToolLoop, nothing saved',
  conversation: 'the same through `conversation()`, nothing saved',
  'persist → a store that keeps nothing': '`conversation()` + `persist` → a store that keeps nothing (the operator and its tree)',
  'persist → memoryStore': '`conversation()` + `persist` → `memoryStore()` (JSON copies)',
  'persist → jsonlStore': '`conversation()` + `persist` → `jsonlStore(file)`: a write per batch, an fsync per turn_end',
  'the same bytes by hand': 'the same bytes by hand (node:fs alone, no loop): a new file, the store’s writes with `appendFileSync`, an `fsync` where it made one',
  'persist → jsonlStore on tmpfs': 'the JSONL row on tmpfs (`/dev/shm`: an fsync with no disk to wait for)',
  'the same bytes by hand on tmpfs': 'the same bytes by hand on tmpfs',
};

/**
 * W7: what appending a conversation to a session costs over `conversation()` alone, paired by round (µs and a
 * share of W1's loop in the same round), and the time per entry of a load.
 */
function w7Costs(r) {
  const t = (name) => (ok(r.timing[name]) ? r.timing[name] : undefined);
  const median = (x) => x?.median;
  const over = (name) => t(name)?.over;
  const [small, big] = r.counts.map((count) => r.load[count]);
  const perEntry = (x, count) => (ok(x) ? (x.median * 1000) / count : undefined);
  const growth = ok(small) && ok(big) ? perEntry(big, r.counts[1]) / perEntry(small, r.counts[0]) : undefined;
  return {
    loop: median(t('rx-tool-loop')),
    base: median(t('conversation')),
    persist: over('persist → a store that keeps nothing'),
    memory: over('persist → memoryStore'),
    jsonl: over('persist → jsonlStore'),
    jsonlLibrary: t('persist → jsonlStore')?.overHand,
    hand: t('the same bytes by hand')?.alone,
    ram: over('persist → jsonlStore on tmpfs'),
    ramLibrary: t('persist → jsonlStore on tmpfs')?.overHand,
    ramHand: t('the same bytes by hand on tmpfs')?.alone,
    growth,
    perEntry: r.counts.map((count) => perEntry(r.load[count], count)),
  };
}

/** `N µs` per turn of a paired cost per conversation, or `–`. */
const w7Turn = (x, turns) => (x ? `${fmt(x.us.median / turns, 1)} µs` : '–');

/** `N µs (P% of W1's loop)` of a paired cost, or `–`. */
const w7Cost = (x) => (x ? `${int(x.us.median)} µs${x.share ? ` (${fmt(x.share.median * 100, 0)}% of W1’s loop)` : ''}` : '–');

function w7Table(r) {
  const c = w7Costs(r);
  const turns = r.spec.turns;
  const rows = Object.entries(r.timing).map(([name, t]) => {
    const extra = t.over ?? t.alone;
    return t.error
      ? [W7_LABELS[name] ?? name, failed(t), '', '', '']
      : [W7_LABELS[name] ?? name, spread(t, (v) => fmt(v, 0)), fmt(t.median / turns, 1), extra ? `${int(extra.us.median)}${t.alone ? ' (all of it: no loop)' : ''}` : '', extra?.share ? `${fmt(extra.share.median * 100, 0)}%` : ''];
  });
  const loads = r.counts.map((count, i) => {
    const x = r.load[count];
    return ok(x) ? [int(count), spread(x, (v) => fmt(v, 1)), fmt(c.perEntry[i], 2)] : [int(count), failed(x ?? { error: 'missing' }), ''];
  });
  return [
    `Two phases, each round-robin (every row once a round): in memory and on tmpfs ${r.spec.conversations} conversations a round${Array.isArray(r.rounds) ? `, ${r.rounds[0]} rounds` : ''}; on the disk ${r.onDisk ?? r.spec.conversations}${Array.isArray(r.rounds) ? `, ${r.rounds[1]} rounds` : ''}, with the loop and \`conversation()\` again. A row’s cost is the median of its per-round difference to \`conversation()\` alone in its phase, its share the median of that difference over W1’s loop in the same round.`,
    '',
    table(['contender', `µs per ${turns}-turn conversation (min – max)`, 'µs per turn', 'µs over `conversation()` (paired)', '÷ W1’s loop (paired)'], rows),
    '',
    `Appending to a JSONL session on disk costs ${w7Cost(c.jsonl)} per conversation over \`conversation()\` alone, ${w7Turn(c.jsonl, turns)} per turn; the same bytes by hand (${r.writes ? `${r.writes.count} appendFileSync, ${r.writes.fsyncs} fsyncs, ${int(r.writes.bytes)} bytes` : 'its writes and fsyncs'}) ${w7Cost(c.hand)}, ${w7Turn(c.hand, turns)} per turn; the library’s part over it ${w7Cost(c.jsonlLibrary)}. On tmpfs: ${w7Cost(c.ram)} (${w7Turn(c.ram, turns)} per turn), by hand ${w7Cost(c.ramHand)} (${w7Turn(c.ramHand, turns)} per turn), the library’s part ${w7Cost(c.ramLibrary)}. \`persist\` in the loop (into a store that keeps nothing): ${w7Cost(c.persist)}; into \`memoryStore\` (its JSON copies too): ${w7Cost(c.memory)}.`,
    '',
    `fsyncs counted (fs's \`fsyncSync\`, \`fsync\`, \`fdatasyncSync\`, \`fdatasync\` wrapped in the workload's process) around every run of a JSONL row, against the turn_ends that passed: ${Object.entries(r.fsyncs ?? {}).map(([where, x]) => `${where === 'disk' ? 'on the disk' : 'on tmpfs'} ${int(x.fsyncs)} for ${int(x.turnEnds)} turn_ends in ${x.runs} runs`).join('; ') || '–'}.`,
    '',
    ok(r.perEntry)
      ? `\`persist\`’s CPU per entry, outside the loop: W1’s conversation recorded once (${r.perEntry.entries} entries), replayed ${int(r.perEntry.conversations)} times a round through \`persist\` into a store that keeps nothing (the trees made before the clock starts), minus the bare replay, ÷ the entries; against \`JSON.stringify\` of each entry it made, the same number of times; ${r.perEntry.rounds} interleaved rounds on the process’s CPU time: persist ${spread(r.perEntry.persist, (v) => fmt(v, 3))} µs, JSON.stringify ${spread(r.perEntry.stringify, (v) => fmt(v, 3))} µs per entry; persist ÷ stringify, round by round, ${spread(r.perEntry.ratio)}.`
      : `\`persist\`’s CPU per entry: ${r.perEntry ? failed(r.perEntry) : '–'}.`,
    '',
    table(['entries', 'ms to load the tree and its context (min – max)', 'µs per entry'], loads),
    '',
    `Time per entry at ${int(r.counts[1])} ÷ at ${int(r.counts[0])}: ${c.growth !== undefined ? `${fmt(c.growth)}×` : '–'} (linear: about 1).`,
  ].join('\n');
}

const W9_LABELS = {
  'rx-tool-loop': 'W1’s loop: **rx-tool-loop**, `echo` a plain tool',
  'a one-turn loop per call, not forwarded': 'the same, the plain `echo` also running the inner one-turn loop to its end, its events dropped (the inner loop alone, nothing forwarded)',
  'a one-turn loop per call, given the signal': 'the same, the inner loop given the call’s `context.signal`',
  'an Observable tool of 10 progress values': 'the same, `echo` an Observable tool of 10 progress values, then its result (the forwarding any Observable tool pays)',
  'agent tools': 'the same, `echo` an `agentTool` of one inner turn (its 10 events forwarded, `signal: context.signal` as the README wires it)',
  'agent tools, no signal': 'the same without the signal (unsubscription alone tears the inner loop down, A3)',
};
// the agent tool rows, each against its inner loop alone wired the same way
const W9_AGENTS = [
  ['agent tools', 'a one-turn loop per call, given the signal'],
  ['agent tools, no signal', 'a one-turn loop per call, not forwarded'],
];

/**
 * W9: an agent tool's parts, µs per call on `clock` (medians of the rounds, workload.js w9Paired): the inner loop
 * alone, the forwarding, the agent tool's whole run and its own cost beyond the other two, and that as their share.
 */
function w9Costs(r, name = 'agent tools', clock = 'cpu') {
  const own = r.paired?.[clock]?.own?.[name];
  if (!own) return {};
  return Object.fromEntries(Object.entries(own).map(([key, value]) => [key, value.median]));
}

function w9Table(r) {
  const rows = Object.entries(r.timing).map(([name, t]) => (t.error ? [W9_LABELS[name] ?? name, failed(t)] : [W9_LABELS[name] ?? name, spread(t, (v) => fmt(v, 0)), ok(t.cpu) ? fmt(t.cpu.median, 0) : '–']));
  const perCall = r.paired?.cpu?.perCall ?? {};
  const callRows = Object.entries(perCall).map(([name, x]) => [W9_LABELS[name] ?? name, fmt(x.median, 2), `${fmt(x.min, 2)} – ${fmt(x.max, 2)}`]);
  const ownRows = W9_AGENTS.map(([name, alone]) => {
    const c = w9Costs(r, name);
    if (c.share === undefined) return [W9_LABELS[name] ?? name, '–', '–', '–', '–', '–'];
    return [W9_LABELS[name] ?? name, `${fmt(c.inner, 2)} (${alone.endsWith('signal') ? 'given the signal' : 'no signal'})`, fmt(c.forwarding, 2), fmt(c.agent, 2), fmt(c.own, 2), `${fmt(c.share * 100, 1)}%`];
  });
  if (!r.paired) return table(['contender', `µs per ${r.spec.turns}-turn conversation, wall (min – max)`, 'CPU'], rows);
  return [
    table(['contender', `µs per ${r.spec.turns}-turn conversation, wall (min – max)`, 'CPU'], rows),
    '',
    `Per call (${int(r.innerTurns)} calls a run), on CPU time: what each row adds over W1’s loop in the same round (${r.rounds} rounds, every row once a round, interleaved; medians of the rounds, min – max); an outer turn (W1’s loop over its turns) ${fmt(r.paired.cpu.outerTurn.median, 2)} µs, for information:`,
    '',
    table(['contender', 'µs per call over W1’s loop', 'min – max'], callRows),
    '',
    'An agent tool’s run in three parts, µs per call, medians of the rounds’ own figures: the inner loop alone (its row, wired as the agent’s), the forwarding any Observable tool pays (the progress row), and agentTool’s own cost, what its run adds beyond both (agent − inner loop − forwarding, each over W1’s loop of the round); the target: the own cost ≤ 10% of inner loop + forwarding, as the README wires it.',
    '',
    table(['agent tool', 'inner loop alone', 'forwarding', 'the agent tool’s run', 'own cost', 'own ÷ (inner + forwarding)'], ownRows),
  ].join('\n');
}

// W6's contenders are the loops over their own HTTP providers (contenders/http.js)
const W6_LABELS = {
  'sse-floor': 'fetch + SSE split + JSON.parse of one reply (floor)',
  'rx-tool-loop': '**rx-tool-loop** (runEventedToolLoop + openAIChatProvider / anthropicProvider / openAIResponsesProvider / geminiProvider)',
  'pi-runAgentLoop': 'Pi: pi-agent-core runAgentLoop + pi-ai providers',
  'ai-streamText': 'AI SDK streamText + @ai-sdk/openai (chat, responses) / @ai-sdk/anthropic / @ai-sdk/google',
  'genai-generateContentStream': '@google/genai generateContentStream in a hand-written loop that starts each tool as its call arrives (Gemini)',
};
const W6_PEERS = ['pi-runAgentLoop', 'ai-streamText', 'genai-generateContentStream'];
const W6_API = { openai: 'OpenAI Chat Completions', anthropic: 'Anthropic Messages', responses: 'OpenAI Responses', gemini: 'Gemini' };
const w6Label = (name) => W6_LABELS[name] ?? label(name);

function w6Table(r) {
  const names = [...new Set(r.apis.flatMap((api) => Object.keys(r.cpu[api] ?? {})))];
  const cell = (x, digits = 1) => (!x ? '–' : x.error ? failed(x) : spread(x, (v) => fmt(v, digits)));
  const cpuRows = names.map((name) => [
    w6Label(name),
    ...r.apis.flatMap((api) => [cell(r.cpu[api]?.[name]), cell(r.cpuInMemory?.[api]?.[name])]),
    r.apis.map((api) => (ok(r.cpu[api]?.[name]) ? int(r.cpu[api][name].chunks) : '–')).join(' / '),
    r.apis.map((api) => (ok(r.cpu[api]?.[name]) ? fmt(r.cpu[api][name].wall.median, 0) : '–')).join(' / '),
  ]);
  const serverCpu = r.apis.map((api) => {
    const x = Object.values(r.cpu[api] ?? {}).find(ok);
    return x ? `${W6_API[api]} ${fmt(x.server.median, 1)} µs` : undefined;
  });
  const pairedCpu = r.apis.map((api) => {
    const paired = r.cpu[api]?.['rx-tool-loop']?.paired;
    if (!paired) return undefined;
    return `${W6_API[api]}: ${Object.entries(paired).map(([name, p]) => `÷ ${name} ${pairedText(p)}`).join(', ')}`;
  });
  const pairedMemory = r.apis.map((api) => {
    const rows = Object.entries(r.cpuInMemory?.[api] ?? {}).filter(([, x]) => ok(x) && x.paired);
    return rows.length > 0 ? `${W6_API[api]}: ${rows.map(([name, x]) => `${name} ${fmt(x.paired.median)}×`).join(', ')}` : undefined;
  });
  const talking = names.filter((name) => r.apis.some((api) => r.conversation[api]?.[name]));
  const latencyRows = talking.map((name) => [
    w6Label(name),
    ...r.apis.flatMap((api) => {
      const c = r.conversation[api]?.[name];
      return !c ? ['–', '–'] : c.error ? [failed(c), ''] : [spread(c.a, (v) => fmt(v, 2)), spread(c.b, (v) => fmt(v, 2))];
    }),
  ]);
  const wallRows = talking.map((name) => [
    w6Label(name),
    ...r.apis.flatMap((api) => {
      const c = r.conversation[api]?.[name];
      return [cell(c, 0), ok(c) ? fmt(c.streaming.median, 0) : '–'];
    }),
  ]);
  const overlap = r.apis.map((api) => {
    const c = r.conversation[api]?.['rx-tool-loop'];
    return ok(c) ? `${W6_API[api]} ${fmt(c.overlap.median, 0)} ms` : undefined;
  });
  const B = BASELINE?.name;
  const base = (api, what) => {
    const [cur, old] = [r[what][api]?.['rx-tool-loop'], r[what][api]?.[B]];
    return ok(cur) && ok(old) && [`${what === 'cpu' ? 'CPU per chunk' : 'conversation wall time'} (${W6_API[api]})`, ratio(cur.median, old.median)];
  };
  const s = r.scenarios;
  return [
    `**CPU per streamed chunk** (µs of the client process's CPU per server-sent event; the server runs in a process of its own). One conversation: a tool turn of ${int(s.cpu.lead)} text tokens, call A in ${s.cpu.aPieces} pieces, call B in ${s.cpu.bPieces}, ${s.cpu.tail} tokens of text after the calls, then a final turn of ${s.cpu.final} tokens; one event every ${s.cpu.paceMs} ms, instant tools.`,
    '',
    table(['contender', ...r.apis.flatMap((api) => [`${W6_API[api]}: µs per chunk (min – max)`, 'the same without the socket']), 'chunks per run', 'wall ms per run'], cpuRows) +
      vsBaseline(r.apis.map((api) => base(api, 'cpu'))),
    '',
    `"Without the socket" (a′, for information): the same replies in the same process, the global \`fetch\` answering from memory, one event per macrotask (${r.rounds.memory} rounds): what each client does per chunk above Node's HTTP client and the kernel, which cost every contender alike over HTTP. rx-tool-loop ÷ each there, paired by round: ${pairedMemory.filter(Boolean).join('; ')}.`,
    '',
    `rx-tool-loop ÷ each contender, CPU per chunk over HTTP, paired by round (the median of the ${r.rounds.cpu} rounds' ratios; the two runs of a round meet the same machine): ${pairedCpu.filter(Boolean).join('; ')}.`,
    '',
    `The server's own CPU per chunk, in its process (not counted above): ${serverCpu.filter(Boolean).join(', ')}.`,
    '',
    `**Tool start after the call's last byte** (ms from the server writing the call's last byte to the tool's body starting, both on the system's monotonic clock; ${s.conversation.turns - 1} tool turns × ${r.rounds.conversation} runs → ${(s.conversation.turns - 1) * r.rounds.conversation} samples per call). The call's last byte: OpenAI Chat Completions, its last arguments piece (the format has no event that closes a call); Anthropic, its \`content_block_stop\`; OpenAI Responses, its item's \`response.output_item.done\`. Call A (\`lookup\`) completes early, call B (\`write_file\`) after ${s.conversation.bPieces} pieces of arguments; ${s.conversation.tail} tokens of text follow the calls.`,
    '',
    table(['contender', ...r.apis.flatMap((api) => [`${W6_API[api]}: call A`, `${W6_API[api]}: call B`])], latencyRows),
    '',
    `**Three-turn conversation** (wall ms; two tool turns, each two calls whose tools take ${s.conversation.toolMs} ms, then a final turn; one event every ${s.conversation.paceMs} ms, on a fixed schedule: the server's three replies take the same time for every contender, shown beside).`,
    '',
    table(['contender', ...r.apis.flatMap((api) => [`${W6_API[api]}: wall ms (min – max)`, 'the server streaming (ms)'])], wallRows) +
      vsBaseline(r.apis.map((api) => base(api, 'conversation'))),
    '',
    `Overlap available (the tool time a loop can run inside the stream: per tool turn, from the last call's last byte to the reply's end, at most ${s.conversation.toolMs} ms; median of rx-tool-loop's runs): ${overlap.filter(Boolean).join(', ')}.`,
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// targets

/**
 * W10 (D8), at each size: rx-tool-loop ahead of both peers on heap and RSS per conversation, delay p99 and CPU per
 * turn; at 1,000 conversations, its delay p99 < 5 ms. A miss is profiled by hand (`node bench/w10.js --cpu-prof`).
 */
function w10Targets(W10, add) {
  if (!W10 || W10.error) return;
  for (const n of [...new Set(W10.rows.map((r) => r.conversations))]) {
    const rows = W10.rows.filter((r) => r.conversations === n);
    const ours = rows.find((r) => r.contender === 'rx-tool-loop');
    const size = n.toLocaleString('en');
    if (!ours || ours.error) {
      add('W10', `rx-tool-loop runs (${size})`, ours?.error ?? 'missing', false, undefined);
      continue;
    }
    const peers = rows.filter((r) => ['pi-runAgentLoop', 'ai-streamText'].includes(r.contender) && !r.error);
    for (const [key, what, unit, digits] of [
      ['heapPerConversationKB', 'heap per conversation', 'KB', 1],
      ['rssPerConversationKB', 'RSS per conversation', 'KB', 1],
      ['delayP99ms', 'delay p99', 'ms', 2],
      ['cpuPerTurnUs', 'CPU per turn', 'µs', 0],
    ]) {
      const measured = `${fmt(ours[key], digits)} ${unit} (${peers.map((r) => `${r.contender} ${fmt(r[key], digits)}`).join(', ') || 'no peer ran'})`;
      add('W10', `${what} below both peers (${size})`, measured, peers.length === 2 && peers.every((r) => ours[key] < r[key]), undefined);
    }
    if (n === 1000) add('W10', 'delay p99 < 5 ms (1,000)', `${fmt(ours.delayP99ms, 2)} ms (p50 ${fmt(ours.delayP50ms, 2)} ms)`, ours.delayP99ms < 5, undefined);
  }
}

function targets(results) {
  const list = [];
  const add = (workload, target, measured, met, profile) => list.push({ workload, target, measured, met, profile });
  const W1 = results.W1;
  if (W1 && !W1.error) {
    const t = W1.timing;
    const us = (name) => (t[name] && !t[name].error ? t[name].median : undefined);
    const ours = us('rx-tool-loop');
    const floor = us('floor');
    if (ours === undefined) add('W1', 'rx-tool-loop runs', failed(t['rx-tool-loop'] ?? { error: 'missing' }), false, ['cpu', 'W1']);
    else {
      add('W1', 'rx-tool-loop ≤ 4× the floor', `${fmt(ours / floor, 1)}× (${fmt(ours)} µs vs ${fmt(floor)} µs)`, ours <= 4 * floor, ['cpu', 'W1']);
      const peers = PEER_CONTENDERS.filter((name) => us(name) !== undefined);
      const fastest = peers.reduce((a, b) => (us(a) <= us(b) ? a : b), peers[0]);
      add('W1', 'faster than every entry point of every peer', fastest ? `fastest peer: ${fastest} ${fmt(us(fastest))} µs` : 'no peer ran', fastest !== undefined && ours < us(fastest), ['cpu', 'W1']);
      if (us('pi-agentLoop') !== undefined) {
        add('W1', '≥ 3× faster than Pi agentLoop', `${fmt(us('pi-agentLoop') / ours, 1)}× (${fmt(us('pi-agentLoop'))} µs)`, us('pi-agentLoop') >= 3 * ours, ['cpu', 'W1']);
      }
      if (us('ai-generateText') !== undefined) {
        add('W1', '≥ 10× faster than AI SDK generateText', `${fmt(us('ai-generateText') / ours, 1)}× (${fmt(us('ai-generateText'))} µs)`, us('ai-generateText') >= 10 * ours, ['cpu', 'W1']);
      }
    }
    // the per-conversation heap from 1,000 paused conversations when measured (100 give the same
    // mean, but a few KiB of noise per conversation), else from 100
    const heapOf = (name) => {
      const h = W1.bigHeap?.[name] && !W1.bigHeap[name].error ? W1.bigHeap[name] : W1.heap[name];
      return h && !h.error ? h.median : undefined;
    };
    const pis = ['pi-runAgentLoop', 'pi-agentLoop'].filter((name) => heapOf(name) !== undefined);
    if (heapOf('rx-tool-loop') !== undefined && pis.length > 0) {
      const pi = pis.reduce((a, b) => (heapOf(a) <= heapOf(b) ? a : b));
      const paused = W1.bigHeap?.['rx-tool-loop'] ? int(W1.bigHeapSpec.conversations) : '100';
      add('W1', 'live heap per in-flight conversation ≤ Pi’s (the smaller of its two entry points)', `${kib(heapOf('rx-tool-loop'))} vs ${kib(heapOf(pi))} (${pi}; ${paused} paused)`, heapOf('rx-tool-loop') <= heapOf(pi), ['heap', 'W1']);
    }
    // O4: tracing costs nothing much when nothing records: judged on the paired repetitions
    const traced = t['rx-tool-loop+otel'];
    if (traced !== undefined && ours !== undefined) {
      if (!ok(traced)) add('W1', 'rx-tool-loop + traceLoop (no-op tracer) runs', failed(traced), false, undefined);
      else add('W1', 'with traceLoop on a no-op tracer ≤ 1.10× without it (O4; paired)', ok(W1.otel) ? pairedText(W1.otel) : `paired repetitions: ${W1.otel ? failed(W1.otel) : 'missing'}`, ok(W1.otel) ? W1.otel.median <= 1.1 : undefined, ['cpu', 'W1']);
    }
    // L6: a limited provider with a free slot, paired as O4 (bench/findings.md, L6, for its count in instructions)
    const limited = t['rx-tool-loop+limited'];
    if (limited !== undefined && ours !== undefined) {
      if (!ok(limited)) add('W1', 'rx-tool-loop with a limited provider runs', failed(limited), false, undefined);
      else add('L6', 'a limited provider with a free slot ≤ 1.05× W1 without it (paired)', ok(W1.limited) ? pairedText(W1.limited) : `paired repetitions: ${W1.limited ? failed(W1.limited) : 'missing'}`, ok(W1.limited) ? W1.limited.median <= 1.05 : undefined, ['cpu', 'W1']);
    }
  }
  const W1b = results.W1b;
  if (W1b && !W1b.error) {
    const x = W1b.results['rx-tool-loop'];
    if (x && !x.error) add('W1b', 'per-turn cost at 40 turns ≤ 1.3× that at 10', `${fmt(x.growth)}× (${fmt(x.ten.median)} → ${fmt(x.forty.median)} µs)`, x.growth <= 1.3, ['cpu', 'W1b']);
    else add('W1b', 'rx-tool-loop runs', failed(x ?? { error: 'missing' }), false, ['cpu', 'W1b']);
  }
  const W2 = results.W2;
  if (W2 && !W2.error) {
    const t = W2.timing['rx-tool-loop'];
    const h = W2.heap['rx-tool-loop'];
    if (t && !t.error) add('W2', '≥ 2,000,000 deltas per second', `${int(t.median)} /s`, t.median >= 2_000_000, ['cpu', 'W2']);
    else add('W2', 'rx-tool-loop runs', failed(t ?? { error: 'missing' }), false, ['cpu', 'W2']);
    if (h && !h.error) add('W2', 'heap growth ≤ 3× the text size', `${fmt(h.retained.median)}× of ${mib(h.textBytes)}`, h.retained.median <= 3, ['heap', 'W2']);
  }
  const W3 = results.W3;
  if (W3 && !W3.error) {
    const t = W3.timing['rx-tool-loop'];
    if (t && !t.error) add('W3', '8 parallel 50 ms tools: the turn ≤ 60 ms', `${fmt(t.median, 1)} ms`, t.median <= 60, ['cpu', 'W3']);
    else add('W3', 'rx-tool-loop runs', failed(t ?? { error: 'missing' }), false, ['cpu', 'W3']);
  }
  const W4 = results.W4;
  if (W4 && !W4.error) {
    const t = W4.timing['rx-tool-loop'];
    const s = W4.stack['rx-tool-loop'];
    const turns = W4.spec.turns;
    if (t && !t.error) add('W4', `${int(turns)} synchronous turns < 1 s`, `${fmt(t.median, 0)} ms${t.synchronous ? ', synchronous' : ', NOT synchronous'}`, t.median < 1000 && t.synchronous, ['cpu', 'W4']);
    else add('W4', 'rx-tool-loop runs', failed(t ?? { error: 'missing' }), false, ['cpu', 'W4']);
    if (s) add('W4', 'flat stack', s.error ? failed(s) : `${s.probes[2]?.frames} frames at turn 2, ${s.probes[turns]?.frames} at turn ${int(turns)}`, s.flat === true, ['cpu', 'W4']);
  }
  const W5 = results.W5;
  if (W5 && !W5.error) {
    const x = W5.results['rx-tool-loop'];
    if (x && !x.error) add('W5', `${int(W5.loops)} concurrent loops complete, every loop’s invariants hold`, `${fmt(x.time.median, 0)} ms, peak heap +${mib(x.peak.median)}, ${x.failureCount} failures`, x.failureCount === 0, ['cpu', 'W5']);
    else add('W5', 'rx-tool-loop runs', failed(x ?? { error: 'missing' }), false, ['cpu', 'W5']);
  }
  const W6 = results.W6;
  if (W6 && !W6.error) {
    for (const api of W6.apis) {
      const A = W6_API[api];
      const cpu = W6.cpu[api] ?? {};
      const ours = cpu['rx-tool-loop'];
      if (!ok(ours)) {
        add('W6', `rx-tool-loop runs (${A})`, failed(ours ?? { error: 'missing' }), false, ['cpu', 'W6']);
        continue;
      }
      const peers = W6_PEERS.filter((name) => ok(cpu[name]));
      const fastest = peers.reduce((a, b) => (cpu[a].median <= cpu[b].median ? a : b), peers[0]);
      // judged on the ratio paired by round (workload.js) against the peer with the lowest median
      const paired = fastest && ours.paired?.[fastest];
      add(
        'W6',
        `CPU per chunk ≤ the fastest peer’s (${A}; paired by round)`,
        fastest ? `${fmt(ours.median, 1)} µs vs ${fmt(cpu[fastest].median, 1)} µs (${fastest}); paired ${paired ? pairedText(paired) : 'missing'}` : 'no peer ran',
        paired ? paired.median <= 1 : undefined,
        ['cpu', 'W6'],
      );
      const talk = W6.conversation[api] ?? {};
      const c = talk['rx-tool-loop'];
      if (!ok(c)) {
        add('W6', `rx-tool-loop’s conversation runs (${A})`, failed(c ?? { error: 'missing' }), false, undefined);
        continue;
      }
      add('W6', `tool start ≤ 1 ms after the call’s last byte (${A})`, `call A ${fmt(c.a.median, 2)} ms, call B ${fmt(c.b.median, 2)} ms (medians; max ${fmt(c.a.max, 2)}, ${fmt(c.b.max, 2)})`, c.a.median <= 1 && c.b.median <= 1, undefined);
      // "faster than every peer by the overlapped tool time": each peer's wall time minus ours at least
      // the overlap available (1 ms of tool-start latency allowed per tool turn)
      const turns = W6.scenarios.conversation.turns - 1;
      const talked = W6_PEERS.filter((name) => ok(talk[name]));
      const gaps = talked.map((name) => `${name} ${fmt(talk[name].median, 0)} ms (−${fmt(talk[name].median - c.median, 0)})`);
      add(
        'W6',
        `three-turn conversation faster than every peer by the overlapped tool time (${A})`,
        `${fmt(c.median, 0)} ms; ${gaps.join(', ') || 'no peer ran'}; overlap ${fmt(c.overlap.median, 0)} ms`,
        talked.length > 0 && talked.every((name) => talk[name].median - c.median >= c.overlap.median - turns),
        undefined,
      );
    }
  }
  if (BASELINE) baselineTargets(results, add);
  const W7 = results.W7;
  if (W7 && !W7.error) {
    const c = w7Costs(W7);
    const e = W7.perEntry;
    if (!ok(e)) add('W7', '`persist` into a store that keeps nothing runs', failed(e ?? { error: 'missing' }), false, undefined);
    else {
      add(
        'W7',
        '`persist`’s CPU per entry, into a store that keeps nothing, ≤ 1.5× a `JSON.stringify` of that entry',
        `${fmt(e.ratio.median)}× (${fmt(e.persist.median, 3)} µs vs ${fmt(e.stringify.median, 3)} µs per entry; ${e.entries} entries a conversation, medians of ${e.rounds} rounds)`,
        e.ratio.median <= 1.5,
        undefined,
      );
    }
    const disk = W7.fsyncs?.disk;
    if (!ok(W7.timing['persist → jsonlStore']) || !disk) add('W7', 'appending to a JSONL session runs', failed(W7.timing['persist → jsonlStore'] ?? { error: 'missing' }), false, undefined);
    else {
      const all = Object.values(W7.fsyncs);
      const hand = c.hand && c.jsonl ? `; per turn ${w7Turn(c.jsonl, W7.spec.turns)} over \`conversation()\`, beside ${w7Turn(c.hand, W7.spec.turns)} for the same bytes by hand (appendFileSync + fsync)` : '';
      add(
        'W7',
        '`jsonlStore` makes exactly one `fsync` per `turn_end` (counted)',
        `${all.map((x) => `${int(x.fsyncs)} fsyncs for ${int(x.turnEnds)} turn_ends`).join(', ')} (${Object.keys(W7.fsyncs).join(', ')})${hand}`,
        all.every((x) => x.turnEnds > 0 && x.fsyncs === x.turnEnds),
        undefined,
      );
    }
    if (c.growth !== undefined) add('W7', `loading ${int(W7.counts[1])} entries is linear (time per entry ≤ 1.5× that at ${int(W7.counts[0])})`, `${fmt(c.growth)}× (${fmt(c.perEntry[0], 2)} → ${fmt(c.perEntry[1], 2)} µs per entry)`, c.growth <= 1.5, undefined);
  }
  const W9 = results.W9;
  if (W9 && !W9.error) {
    const c = w9Costs(W9);
    if (c.share === undefined) add('W9', 'agent tools run', failed(W9.timing['agent tools'] ?? W9.timing['an Observable tool of 10 progress values'] ?? { error: 'missing' }), false, undefined);
    else {
      const bare = w9Costs(W9, 'agent tools, no signal');
      add(
        'W9',
        'an agent tool’s own cost ≤ 10% of the inner loop it runs + the forwarding any Observable tool pays (W1’s workload, each call an agent tool of one turn, as the README wires it)',
        `${fmt(c.share * 100, 1)}% (${fmt(c.own, 2)} µs per call beyond the inner loop ${fmt(c.inner, 2)} µs + forwarding ${fmt(c.forwarding, 2)} µs; CPU, medians of ${W9.rounds} rounds${bare.share === undefined ? '' : `; without the signal ${fmt(bare.share * 100, 1)}%`})`,
        c.share <= 0.1,
        undefined,
      );
    }
  }
  const L6 = results.L6;
  if (L6 && !L6.error) {
    const { waitingAtOnce: at, tenWaiting: ten } = L6;
    add('L6', `${int(L6.calls)} calls through one limiter start first in, first out`, `${int(L6.started)} started, ${int(L6.inOrder)} in their order (counted as each started)`, L6.started === L6.calls && L6.inOrder === L6.calls, undefined);
    // constant memory: what the limiter holds follows what waits; 90,000 more calls through it may not add a byte each
    add(
      'L6',
      'constant memory: ten always waiting, the heap after 100,000 calls passed ≤ 1 B a call over the heap after 10,000',
      `${kib(ten.after100k)} after 100,000, ${kib(ten.after10k)} after 10,000 (${fmt((ten.after100k - ten.after10k) / 90_000, 2)} B a call); ${int(at.perCall)} B a call while 10,000 wait`,
      ten.after100k - ten.after10k <= 90_000,
      undefined,
    );
  }
  const U1 = results.U1;
  if (U1 && !U1.error) {
    const p = U1.perEvent;
    add('U1', '`toAgUi` ≤ 2 µs an event (a 200-turn scripted run replayed, beyond a bare operator)', `${fmt(p.median, 3)} µs (${fmt(p.min, 3)} – ${fmt(p.max, 3)}; CPU, medians of ${U1.rounds} rounds, ${int(U1.loopEvents)} loop events → ${int(U1.agUiEvents)} AG-UI events)`, p.median <= 2, undefined);
  }
  const U2 = results.U2;
  if (U2 && !U2.error) {
    const x = U2.rx.perEvent;
    add('U2', '`toUiMessageStream` ≤ 2 µs an event (a 100-turn scripted run replayed, CPU, against the bare replay)', `${fmt(x.median, 3)} µs (${fmt(x.min, 3)} – ${fmt(x.max, 3)}, ${x.n} rounds)`, x.median <= 2, undefined);
  }
  const SSE = results.SSE;
  if (SSE && !SSE.error) {
    const row = SSE.rows.find((r) => r.name === 'rx-tool-loop writeSse');
    const sdk = SSE.rows.find((r) => r.name === 'AI SDK pipeUIMessageStreamToResponse');
    add('SSE', '`writeSse` carries ≥ 50,000 events/s over a loopback socket (U3)', `${int(row.wall)} events/s (wall; ${int(row.cpu)} on the server's CPU), the AI SDK's pipeUIMessageStreamToResponse ${int(sdk.wall)}`, row.wall >= 50_000, undefined);
  }
  w10Targets(results.W10, add);
  for (const w of WORKLOADS) if (results[w]?.error) add(w, 'the workload runs', results[w].error, false, undefined);
  return list.sort((a, b) => WORKLOADS.indexOf(a.workload) - WORKLOADS.indexOf(b.workload)); // stable: by workload, then as added
}

/**
 * "No feature may make the loop slower by more than 10% than the baseline", judged on the paired
 * repetitions (workload.js): W1's time within 10%, W2's and W4's no worse up to NOISE; W2's heap
 * growth no worse up to NOISE; W4's stack flat. A target that cannot be checked (the
 * baseline failed) says so, neither met nor missed.
 */
function baselineTargets(results, add) {
  const B = BASELINE.name;
  const check = (workload, target, cur, base, measure, profile) => {
    if (!ok(cur)) return; // rx-tool-loop's own "runs" target is missed already
    if (!ok(base)) add(workload, target, `the baseline: ${failed(base ?? { error: 'missing' })}`, undefined, undefined);
    else add(workload, target, ...measure(cur, base), profile);
  };
  const paired = (workload, target, r, limit, profile) =>
    check(workload, target, r.timing['rx-tool-loop'], r.timing[B], () => (ok(r.paired) ? [pairedText(r.paired), r.paired.median <= limit] : [`paired repetitions: ${r.paired ? failed(r.paired) : 'missing'}`, undefined]), profile);
  const W1 = results.W1;
  if (W1 && !W1.error) paired('W1', 'time per turn ≤ 1.10× the baseline’s', W1, 1.1, ['cpu', 'W1']);
  const W2 = results.W2;
  if (W2 && !W2.error) {
    paired('W2', `time for the deltas ≤ ${fmt(1 + NOISE)}× the baseline’s (no worse, up to noise)`, W2, 1 + NOISE, ['cpu', 'W2']);
    check('W2', `heap growth ≤ ${fmt(1 + NOISE)}× the baseline’s`, W2.heap['rx-tool-loop'], W2.heap[B], (c, b) => [`${ratio(c.retained.median, b.retained.median)} (${fmt(c.retained.median)}× vs ${fmt(b.retained.median)}× the text)`, c.retained.median <= (1 + NOISE) * b.retained.median], ['heap', 'W2']);
  }
  const W4 = results.W4;
  if (W4 && !W4.error) {
    const turns = W4.spec.turns;
    paired('W4', `time for ${int(turns)} turns ≤ ${fmt(1 + NOISE)}× the baseline’s (no worse, up to noise)`, W4, 1 + NOISE, ['cpu', 'W4']);
    // flat is the promise (R12); the depth itself is shown beside the baseline's, for information: a
    // constant few dozen frames more or less is the shape of the call chain, not a leak of stack
    check('W4', 'stack flat, as the baseline’s', W4.stack['rx-tool-loop'], W4.stack[B], (c, b) => {
      const [frames, baseFrames] = [c.probes[turns]?.frames, b.probes[turns]?.frames];
      return [`${frames} frames at turn ${int(turns)} (baseline: ${baseFrames})${c.flat ? '' : ', not flat'}`, c.flat === true && b.flat === true];
    }, ['cpu', 'W4']);
  }
}

// ---------------------------------------------------------------------------------------------
// the report

function methodText(env) {
  return `## Method

- Every workload runs in a Node process of its own (\`node --expose-gc bench/workload.js W…\`), one after
  the other. Within a process the contenders run **in blocks**, in the order of the tables: a gc(), a
  warm-up, then every timed repetition of one contender, then the next contender. There is no gc()
  inside a block (a forced gc() between repetitions deoptimises RxJS code and makes it look 5–6×
  slower). The AI SDK runs last, because its garbage slows whoever runs after it. Heap measurements,
  which need gc(), come after all the timing blocks of the process.
- Reported: the median of the repetitions, with min and max. W1: every contender but the AI SDK's
  streamText runs in ${W1_PROCESSES} processes (5 warm-ups + 21 repetitions in each), and their repetitions
  are pooled: the median of one process moves by up to ±30% from one process to the next (JIT and GC
  timing), the table shows each; streamText runs in the first process only (1 + 5). W1b: 3 warm-ups,
  then 15 repetitions alternating 10 and 40 turns (generateText 9, streamText 5). W2: 1 + 5 (heap: 3).
  W3: 2 + 7. W4: 1 + 5. W5: 1 + 5. W6: per API and scenario, 1 warm-up run each, then 9 rounds ((a)) or 7 ((b), (c)) in which every contender runs once (round-robin, each round starting one further, not blocks: see W6 below).
- Every contender checks, after every run, that it made T model calls and T−1 tool executions (×
  calls per turn) and delivered every delta (count and characters); a contender that fails is
  reported as failed and not timed.
- The fake instant model plays the same script for everyone, in each contender's native format,
  making fresh event objects on every call: per turn 5 text deltas (4-character tokens), then on
  turns 1 … T−1 one call of \`echo\` (synchronous: returns its input's text) and stop reason toolUse;
  turn T stops. rx-tool-loop and the RxJS reference get a cold Observable that emits synchronously;
  the floor a synchronous generator; Pi a pi-ai \`AssistantMessageEventStream\` from the injected
  \`streamFn\` (one partial message updated in place, as pi-ai's providers do); the AI SDK a
  \`MockLanguageModelV4\` whose \`doGenerate\` / \`doStream\` answer
  (\`convertArrayToReadableStream\`), with the tool declared with \`jsonSchema()\` and
  \`stopWhen: isStepCount(T)\`.
- **W1** 200 conversations × 10 turns, one conversation after the other (every contender has one
  conversation in flight, whether it is synchronous or not). Live heap: 100 conversations started
  at once, all paused at the tool call of turn 5 (the tool returns a pending Promise); heap used
  after gc() minus before, ÷ 100; 1 warm-up + 5 repetitions. The same with 1,000 paused
  conversations (not for streamText, too slow): V8's heap moves by a few hundred KB from one
  measurement to the next (bytecode, feedback vectors, code), which is a few KiB per conversation
  at 100 and a few hundred bytes at 1,000; the target uses the 1,000 figure.
  O4: W1 also runs rx-tool-loop with each conversation's events through \`traceLoop\` (rx-tool-loop/otel)
  on a no-op tracer (\`trace.getTracer()\` of @opentelemetry/api with no SDK registered), right after
  rx-tool-loop in every process, and the two in 60 pairs of repetitions a process (as against the
  baseline, below, but with no gc() before each run: after a forced gc() the code runs cold, and even a
  bare \`tap\` then measured 1.12×); target: the median ratio ≤ 1.10.
- **W1b** the same at 10 and at 40 turns, in one block per contender (20 conversations for the AI
  SDK's streamText and the OpenAI Agents SDK, whose turns take milliseconds).
- **W2** one turn of 1,000,000 text deltas (the AI SDK's streamText: 10,000, see below). Heap growth:
  heap used after gc() while the final messages are still held, minus before, ÷ the text size (one
  byte per character); the peak is sampled by the fake model every 65,536 deltas.
- **W3** one reply with 8 tool calls, each a 50 ms timer, then an instant final turn: wall time of the
  whole loop.
- **W4** ${QUICK ? 'a few thousand' : '10,000'} synchronous turns in one loop. Stack: inside the provider, the
  number of frames of \`new Error().stack\` (with \`Error.stackTraceLimit = Infinity\`) and the depth a
  recursion probe can still reach, at turns 1, 2, 10, 100, 1,000 and the last; flat = no more than 10
  frames more at the last turn than at turn 2. A run that stops without completing or failing (the
  RxJS reference, not stack-safe, can overflow inside a Promise callback and leave its Promise
  pending) is caught at the next macrotask and reported as failed. The last row, for information:
  rx-tool-loop with a provider that reads \`input.messages\` on every turn, as a real one does.
- **W5** 1,000 concurrent loops (maxTurns 10), each with its own seeded plan of 1–12 turns, 1–8
  deltas and 1–3 calls per turn (10% of calls to a tool that rejects, ~5% to an unknown tool);
  every provider event and every tool result is a macrotask or timer away. Checked for every loop:
  it completes without error; exactly one loop_end, last; the expected end reason (maxTurns or
  stop); one provider call per turn; the history is user, then per turn the assistant message
  (text whole, its calls) and one result per call in call order, with the right content and
  isError; loop_end's messages are the last turn_end's; the caller's array is untouched.
- **W7** sessions (\`rx-tool-loop/sessions\`). Two targets. (1) \`persist\`'s CPU per entry into a store that
  keeps nothing ≤ 1.5× a \`JSON.stringify\` of that entry: W1's conversation (10 turns, 5 deltas a turn, one
  \`echo\` call a turn but the last) through \`conversation()\` once, its events recorded; then 3 warm-up + 60
  rounds, each replaying them 500 times through \`persist\` (a \`SessionTree\` each, made before the clock
  starts), 500 times bare (\`from(events)\`), and stringifying the entries \`persist\` made as many times, in
  alternating order, on the process's CPU time; per round (persist − bare) ÷ entries against stringify ÷
  entries, the median of the rounds' ratios. (2) \`jsonlStore\` makes exactly one \`fsync\` per \`turn_end\`:
  the workload wraps node:fs's \`fsyncSync\`, \`fsync\`, \`fdatasyncSync\` and \`fdatasync\` and counts the
  calls around every run of a JSONL row, and the turn_ends that pass through it; met when the two are equal (on
  the disk and on tmpfs). Beside it, its time per turn: 20 conversations a round (4 on the disk), through
  \`conversation()\` with \`persist\` into a \`jsonlStore\` on a file of its own each, paired by round with
  \`conversation()\` alone, and the same bytes by hand: the writes the store made for one conversation
  (recorded through a wrapped \`writeSync\`), replayed into a new file with \`appendFileSync\` and an
  \`fsync\` where the store made one (node:fs alone, no loop). For information, W1's loop, \`persist\` in the
  loop into a store that keeps nothing and into a \`memoryStore\`, and the JSONL rows on tmpfs (\`/dev/shm\`:
  an fsync with no disk behind it); 3 warm-up rounds + 200 (in memory and on tmpfs) or 40 (on the disk), every
  row once a round (round-robin). Then a session file of 10,000 and one of 100,000 message entries:
  \`SessionTree.load\` and \`context()\`, 1 + 7 each, each from a collected heap; linear when the time per
  entry at 100,000 is at most 1.5× that at 10,000.
- **W9** agents as tools (A1–A5). W1's conversation (200 of them, 10 turns, 5 deltas a turn, one \`echo\` call a
  turn but the last), each row W1's loop through one harness with its \`echo\` changed (\`lib/agent-rows.js\`):
  a plain tool (W1's loop); the plain echo also running a one-turn inner loop of the same fake model (5 deltas,
  then \`stop\`) to its end, nothing forwarded (the inner loop alone), without and with the call's
  \`context.signal\`; an Observable tool of 10 progress values then its result (the forwarding any Observable
  tool pays: as many updates as the inner loop has events); an \`agentTool\` of that one-turn loop, given the
  call's \`context.signal\` as the README wires it, and without it. 5 warm-ups each, then 61 rounds that run
  every row once, interleaved (the order reversed every other round). Per round, on the process's CPU time, each
  row's cost per call (1,800 calls) is what it adds over that round's W1 run; an agent tool's own cost is its
  cost minus the inner loop alone (wired the same way) minus the forwarding. The target: the own cost ≤ 10% of
  inner loop + forwarding (the median of the rounds' shares), as the README wires it.
- **W10** many conversations in one process (D8; \`bench/w10.js\`). Per size and contender a fresh model server
  (\`lib/w10-server.js\`, a child process, 127.0.0.1) streaming Chat Completions SSE at 50 chunks a second per
  stream, and a fresh client process: 50 warm-up conversations, then N of two turns (10 text chunks and a
  \`lookup\` call, a tool of 100 ms, 10 text chunks), 100 started every 20 ms, each through the contender's own
  OpenAI-compatible provider (and a floor: fetch, split and parse, no loop; not a peer). The server holds every first turn after 5 text chunks; with all N open the client
  collects its heap and reads heap and RSS (minus the reading before the run, over N), then releases them. Delay:
  every piece of every response body is stamped as it leaves Node's fetch (a wrapped global \`fetch\` passes the
  body through a TransformStream with no backpressure of its own; the same for all) and each text chunk's event again as the consumer sees
  it; p50 and p99 over all chunks. CPU per turn: \`process.cpuUsage()\` over the run, less the memory reading's
  collections, over 2N. Targets: rx-tool-loop below both peers on each figure; delay p99 < 5 ms at 1,000.
- **W6** over HTTP. A loopback server (\`lib/w6-server.js\`, on 127.0.0.1, started and stopped by the
  workload) runs in a child process of its own and writes replies the bench composes itself
  (\`lib/w6-wire.js\`) in three wire formats: OpenAI Chat Completions SSE (a first chunk with the role,
  content chunks, each call's header chunk then its arguments in pieces, the \`finish_reason\` chunk, the
  \`stream_options.include_usage\` usage chunk, \`[DONE]\`) and Anthropic Messages SSE (\`message_start\`
  with the input usage, \`ping\`, \`content_block_start\` / \`_delta\` / \`_stop\` for text and
  \`tool_use\` blocks with \`input_json_delta\` pieces, \`message_delta\` with the stop reason and output
  usage, \`message_stop\`) and OpenAI Responses SSE (P16: \`response.created\`, \`response.in_progress\`, per
  output item \`response.output_item.added\`, its deltas — \`response.output_text.delta\` after a
  \`content_part.added\`, \`response.function_call_arguments.delta\` — and its \`.done\` events, ending with
  \`response.output_item.done\`, then \`response.completed\` with the usage). One server-sent event every \`paceMs\` (1 ms for (a), 2 ms for (b) and
  (c)), one socket write each (TCP_NODELAY), on a fixed schedule (event k at k × paceMs: a late timer
  writes what is due at once), so that a reply takes the same time whatever the timers' jitter. A tool
  turn: text tokens, call A (\`lookup\`, short arguments: it completes early), call B (\`write_file\`,
  its arguments streaming for a while, a file being written), then text after the calls (the model keeps
  streaming while the tools run: an Anthropic text block after the \`tool_use\` blocks; a Responses
  message item after the \`function_call\` items; OpenAI content
  deltas after the \`tool_calls\` deltas, which the format allows though OpenAI's own models usually end a
  reply with its calls), then the end and the usage. The last turn is text only. The server checks each
  request (the scenario is its \`model\`; both tools declared; a history whose tool results answer
  exactly the earlier turns' calls; \`include_usage\` asked for; a Responses request stateless, \`store: false\`
  and no \`previous_response_id\`) and answers a wrong one with a 400; every
  contender checks the text it streamed, and the tools' runs. Contenders: rx-tool-loop
  (\`openAIChatProvider\`, \`anthropicProvider\`, \`openAIResponsesProvider\` with \`include: []\`), Pi (pi-agent-core's \`runAgentLoop\` with pi-ai's own
  providers, \`baseUrl\` in the model), the AI SDK (\`streamText\` with \`@ai-sdk/openai\`'s chat model and
  \`@ai-sdk/anthropic\`, and its responses model \`openai.responses(model)\` with \`providerOptions: { openai:
  { store: false } }\`, \`baseURL\` the server, \`stopWhen: isStepCount(turns)\`), all reading through
  Node's fetch, and a floor (fetch, split the events, JSON.parse each; one reply). (a) **CPU per chunk**:
  \`process.cpuUsage()\` of the workload process around one conversation ÷ the events the server wrote;
  the server's CPU is in its own process, so nothing needs subtracting (it is shown, for information).
  What is counted is the whole client: Node's HTTP client and web streams, the SSE parsing, the
  provider, the loop, the GC. (a′), for information: the same replies with the global \`fetch\` (which
  every contender reads through) replaced by one that answers from memory in the same process, one
  event per macrotask, 15 rounds: the per-chunk cost of each client above the socket and Node's HTTP
  parser (the stand-in's own small cost, encoding and enqueueing each event, is in every figure).
  (b) **Tool start**: the server records (process.hrtime: the system's monotonic clock, the same in
  both processes) when it wrote each call's last byte; each tool records
  when its body starts; the difference, per call. (c) **Three-turn conversation**: wall time, tools of
  200 ms; the overlap available is, per tool turn, the time from the last call's last byte to the reply's
  end (at most the tool time): a loop that starts each tool at its call's last byte finishes that much
  sooner than one that runs the tools after the reply. Target (c) is met when every peer's median wall
  time exceeds rx-tool-loop's by at least the overlap available (less 1 ms per tool turn). The machine
  runs other work, which moves a run's CPU time by tens of %: the contenders run round-robin (9 rounds
  for (a), 7 for (b) and (c), each contender once a round) rather than in blocks, so that load meets them
  alike, and the medians are reported (14 samples per call for (b)). Target (a) is judged on rx-tool-loop's
  CPU per chunk divided by the fastest peer's round by round (the median of those ratios ≤ 1): the two
  runs of a round meet the same machine; the medians alone scatter by ±10–20% from one run to the next.
- One rxjs instance: the bench takes rxjs from where the library's build resolves it (the root's
  node_modules, the library's peer) and checks at start that the library's Observables are
  instances of that rxjs; bench/node_modules has no rxjs.
- Library build: ${env.commit}.
- Baseline: ${BASELINE ? `${BASELINE.label}` : 'none'}. \`--baseline=REF\` (or \`RX_TOOL_LOOP_BASELINE=REF\`; default
  \`v3\`, commit 263c2dd, version 3 as released; \`v1\` and \`v2\` name theirs too) extracts the library at REF with \`git archive\` into the system's temp folder and builds it with
  its own \`npm run build\`, the root's TypeScript and rxjs (a \`node_modules\` link to the root's: one
  rxjs instance still), cached by commit. The same contender code runs on it, in every workload
  rx-tool-loop runs in, in the block right after rx-tool-loop (in W1's second process, right before
  it). The line under each table divides rx-tool-loop's figure by the baseline's. After the blocks,
  W1, W2 and W4 also run the two in pairs of repetitions back to back, in alternating order (W1 20
  pairs a process, pooled; W2 and W4 8; W2's and W4's runs each after a gc(), W1's without one, as O4's:
  a forced full GC deoptimizes the code that holds objects of finished runs, so a W1 run right after one
  measures V8 optimizing the loop again, ~30 µs a turn instead of ~5): each pair's time ratio sees the same machine, so its median
  moves far less with other work on the machine than the ratio of the blocks' medians does (A/A
  trials, the same code on both sides, on a busy machine: 0.95–1.11 per process against 0.51–1.50).
  Targets, on that median ratio: W1 ≤ 1.10 (no feature may make the loop slower by more than 10%);
  W2 and W4 no worse, ≤ ${fmt(1 + NOISE)} (${NOISE * 100}% for noise); W2's heap growth (measured after gc(), steady) ≤
  ${fmt(1 + NOISE)}× the baseline's; W4's stack flat, as the baseline's (its depth is shown beside the baseline's, for information).

### Peer versions and adaptations

- \`@mariozechner/pi-agent-core\` ${env.peers['@mariozechner/pi-agent-core']} (with \`@mariozechner/pi-ai\` ${env.peers['@mariozechner/pi-ai']}):
  \`runAgentLoop(prompts, context, config, emit, signal, streamFn)\` and \`agentLoop(…)\` (an
  EventStream read with \`for await\`), \`convertToLlm\` the identity, the tool's \`parameters\` a
  TypeBox object, \`execute\` returns synchronously when the tool does. Pi has no turn cap: the
  script ends at T. In W2 the stream function pushes 1,024 events per macrotask: pushing all
  1,000,000 before the loop reads makes EventStream's \`queue.shift()\` quadratic (80,000 deltas
  then take 3.7 s).
- \`ai\` ${env.peers.ai}: the mock is \`MockLanguageModelV4\` (\`ai/test\`), the usage and finish reason in
  the v4 shapes, the stop condition \`isStepCount\` (the v7 name of \`stepCountIs\`, still exported).
  The mock stores every call's options; the fake model empties those arrays so the mock's
  bookkeeping is not counted as the SDK's heap. \`ai\` 7 declares \`engines: node >= 22\`; it runs on
  Node 20 (npm warns). generateText streams nothing: its deltas count as delivered when every
  step's text is whole. In W2 streamText gets 10,000 deltas from a pull stream, not 1,000,000: Node
  20's web streams dequeue with \`Array#shift\` and the SDK's internal streams queue the parts, so its
  rate falls as the stream grows (about 13,000 deltas/s at 10,000, 1,000,000 would take ~80 s a
  repetition).
- W6: \`@mariozechner/pi-ai\` ${env.peers['@mariozechner/pi-ai']}'s \`openai-completions\`, \`anthropic-messages\` and \`openai-responses\`
  providers (the \`openai\` and \`@anthropic-ai/sdk\` clients inside) with a model whose \`baseUrl\` is the
  loopback server, an API key in the loop's config, \`maxRetries: 0\`, tools in parallel; the AI SDK's
  \`@ai-sdk/openai\` ${env.peers['@ai-sdk/openai']} (\`createOpenAI({ baseURL }).chat(model)\`, Chat Completions; \`.responses(model)\`, the Responses API, \`store: false\`) and
  \`@ai-sdk/anthropic\` ${env.peers['@ai-sdk/anthropic']} (\`createAnthropic({ baseURL })\`), the provider packages of \`ai\`
  ${env.peers.ai} (the same \`@ai-sdk/provider\` and \`provider-utils\`), \`maxOutputTokens: 4096\` (as the others
  send), \`maxRetries: 0\`. Pi and the AI SDK (v7: tools run at \`model-call-end\`) run a reply's tools
  after the reply; rx-tool-loop as each call completes (R3, P8; on the Responses API at the call's
  \`response.output_item.done\`, P14).
- \`@openai/agents\` ${env.peers['@openai/agents']}: ${OPENAI ? 'run (W1, W1b, W3) in processes of their own, with a fake `Model` (getResponse / getStreamedResponse), tracing off; its ratios are to the floor of the main W1 process.' : 'installed, not run (pass `--openai-agents`: it needs a process of its own, as its AsyncLocalStorage slows every other contender).'}
`;
}

function profileText(profiles) {
  if (profiles.length === 0) return '';
  const { print } = require('./profile.js');
  const out = ['## Profiles of the missed targets', ''];
  out.push('Made by `node bench/profile.js cpu|heap W…` (rx-tool-loop alone on the workload). Library lines are');
  out.push('lines of the build (src/ lines when the build has source maps).', '');
  for (const p of profiles) {
    out.push(`### ${p.kind} ${p.workload}`, '', '```text', p.error ? `profile failed: ${p.error}` : print(p), '```', '');
  }
  return out.join('\n');
}

function findingsText() {
  const file = path.join(BENCH, 'findings.md');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : '';
}

function report(env, results, list, profiles) {
  const out = [];
  out.push('# rx-tool-loop benchmarks', '');
  out.push(`Written by \`npm run bench\` (bench/run.js) on ${env.date}.`, '');
  out.push(`- Node ${env.node}, ${env.platform}, ${env.cpus}`);
  out.push(`- rx-tool-loop ${env.library} from ${env.entry} (build of ${env.commit}); rxjs ${env.rxjs}, one instance`);
  out.push(`- baseline: ${BASELINE ? `${BASELINE.label}, the library at \`${BASELINE.ref}\` built from git (\`--baseline=REF\`, \`--baseline=none\`)` : BASELINE_NOTE}`);
  out.push(`- peers: ${Object.entries(env.peers).map(([name, v]) => `\`${name}\` ${v}`).join(', ')}`);
  const loads = WORKLOADS.map((w) => results[w]).filter(Boolean);
  out.push(
    `- load average (1 min) before each workload: ${loads.map((r) => `${r.workload} ${fmt(r.loadBefore, 1)}`).join(', ')}` +
      (loads.some((r) => r.loadBefore > 1.5) ? ' — the machine was busy with other work: expect noise' : ''),
  );
  out.push(`- time: ${loads.map((r) => `${r.workload} ${r.seconds} s`).join(', ')}`, '');
  out.push(`## Targets (medians, block order${BASELINE ? '; against the baseline: paired repetitions' : ''})`, '');
  out.push(table(['workload', 'target', 'measured', ''], list.map((t) => [t.workload, t.target, t.measured, t.met === undefined ? 'not checked' : t.met ? 'met' : '**missed**']), true), '');
  const section = (w, title, render) => {
    const r = results[w];
    if (!r) return;
    out.push(`## ${w}: ${title}`, '');
    out.push(r.error ? `Failed: ${r.error}` : render(r), '');
  };
  section('W1', 'per-turn overhead (200 conversations × 10 turns)', w1Table);
  section('W1b', 'growth with the history (10 vs 40 turns)', w1bTable);
  section('W2', 'streaming (one turn of 1,000,000 text deltas)', w2Table);
  section('W3', 'parallel tools (8 tool calls of 50 ms in one reply)', w3Table);
  section('W4', 'depth (10,000 synchronous turns in one loop)', w4Table);
  section('W5', 'many loops (1,000 concurrent loops, asynchronous providers and tools)', w5Table);
  section('W6', 'over HTTP (a loopback server streaming to each loop’s own providers, three APIs)', w6Table);
  section('W7', 'sessions (a 10-turn conversation appended to a JSONL session; loading 10,000 and 100,000 entries)', w7Table);
  section('W9', 'agents as tools (W1’s conversation, each call an agent tool of one turn)', w9Table);
  section('L6', 'one limiter, many calls (10,000 calls through a limiter of one slot, bench/limits.js)', (r) =>
    table(
      ['measure', 'heap over the start'],
      [
        [`${int(r.calls)} waiting at once`, `${kib(r.waitingAtOnce.heap)} (${int(r.waitingAtOnce.perCall)} B a waiting call)`],
        ['after they all passed', kib(r.waitingAtOnce.after)],
        ['ten always waiting, after 10,000 passed', kib(r.tenWaiting.after10k)],
        ['ten always waiting, after 100,000 passed', kib(r.tenWaiting.after100k)],
      ],
    ),
  );
  section('U1', 'AG-UI events from a run (`toAgUi`, bench/ag-ui.js)', (r) => `${fmt(r.perEvent.median, 3)} µs per loop event beyond a bare operator (${fmt(r.bare.median, 3)} µs), ${int(r.loopEvents)} loop events → ${int(r.agUiEvents)} AG-UI events`);
  section('U2', 'the AI SDK’s UI message stream (a 100-turn scripted run: 20 deltas and 2 streamed calls a turn)', u2Table);
  section('SSE', 'server-sent events (UI message chunks over a loopback socket, bench/sse.js)', (r) =>
    table(['writer', 'events/s, wall', 'events/s, server CPU', 'bytes'], r.rows.map((row) => [row.name, int(row.wall), int(row.cpu), int(row.bytes)])),
  );
  section('W10', 'many conversations in one process (D8: 1,000 concurrent conversations over loopback HTTP at 50 chunks/s, tools of 100 ms)', (r) => require('./w10.js').table(r.rows));
  const findings = findingsText();
  if (findings) out.push(findings, '');
  const prof = profileText(profiles);
  if (prof) out.push(prof);
  out.push(methodText(env));
  return `${out.join('\n').trim()}\n`;
}

// ---------------------------------------------------------------------------------------------

async function main() {
  preflight();
  const env = environment();
  log(`rx-tool-loop bench: Node ${env.node}, ${env.cpus}, library ${env.commit}`);
  if (BASELINE_REF) {
    try {
      BASELINE = baseline.build(BASELINE_REF);
      process.env.BENCH_BASELINE = JSON.stringify(BASELINE); // read by every workload process (lib/contenders.js)
      log(`baseline: ${BASELINE.label}${BASELINE.cached ? ', built before' : ', built'} in ${path.dirname(BASELINE.entry)}`);
    } catch (error) {
      BASELINE_NOTE = `none: ${BASELINE_REF} could not be built (${error.message.split('\n')[0]})`;
      log(`\nbench: WARNING: no baseline: ${error.message}\n  going on without it (--baseline=REF for another ref, --baseline=none to skip)\n`);
    }
  }
  const results = {};
  for (const workload of WORKLOADS) {
    log(`\n== ${workload}`);
    results[workload] = await runWorkload(workload);
    if (workload === 'W1' && !results.W1.error) {
      for (let i = 1; i < W1_PROCESSES; i++) {
        log(`\n== W1: timing only, process ${i + 1} of ${W1_PROCESSES}`);
        // the baseline runs before rx-tool-loop in every other process: neither always gets the rxjs code warmed by the other
        const order = BASELINE && i % 2 === 1 ? W1_FAST.replace(',rx-tool-loop,', `,${BASELINE.name},rx-tool-loop,`) : W1_FAST;
        pool(results.W1, await runWorkload('W1', ['--timing-only', `--contenders=${order}`]));
      }
    }
    if (OPENAI && OPENAI_WORKLOADS.includes(workload) && !results[workload].error) {
      log(`\n== ${workload}: OpenAI Agents SDK (process of its own)`);
      merge(results[workload], await runWorkload(workload, [`--contenders=${OPENAI_CONTENDERS}`]));
    }
  }
  const list = targets(results);
  const profiles = [];
  if (PROFILE && !QUICK) {
    const { profile } = require('./profile.js');
    const wanted = [...new Set(list.filter((t) => t.met === false && t.profile).map((t) => t.profile.join(' ')))];
    for (const key of wanted) {
      const [kind, workload] = key.split(' ');
      log(`\n== profile: ${kind} ${workload}`);
      try {
        profiles.push(profile(kind, workload));
      } catch (error) {
        profiles.push({ kind, workload, error: error.message });
      }
    }
  }
  const text = report(env, results, list, profiles);
  process.stdout.write(`\n${text}`);
  if (WRITE) {
    fs.writeFileSync(WRITE, text);
    log(`\nwritten: ${path.relative(process.cwd(), WRITE)}`);
  } else {
    log('\n(partial, quick or candidate-build run: bench/results.md not written; --out=FILE writes one)');
  }
  const missed = list.filter((t) => t.met === false).length;
  const unchecked = list.filter((t) => t.met === undefined).length;
  log(`${list.length - missed - unchecked} targets met, ${missed} missed${unchecked ? `, ${unchecked} not checked` : ''}`);
}

main().catch((error) => {
  log(error?.stack ?? String(error));
  process.exit(1);
});
