'use strict';
// W10 (D8): many conversations in one process, over real loopback HTTP.
//
//   node bench/w10.js                          # 1,000 conversations, every contender
//   node bench/w10.js --conversations=1000,10000
//   node bench/w10.js --contenders=rx-tool-loop --cpu-prof   # a profile of the client (bench/profiles/)
//   node bench/w10.js --result                 # also a BENCH_RESULT line, for run.js
//
// For each size and contender: a fresh model server (lib/w10-server.js, a child process: its CPU is not the
// client's) and a fresh client process (`--expose-gc`, its file limit raised to the hard limit) that runs
// 50 warm-up conversations, collects the heap, then starts N conversations (100 every 20 ms). The server
// holds each first turn after 5 text chunks; once all N consumers have seen their 5th chunk, the client
// collects the heap again (memory per conversation: the difference over N, heap and RSS), then releases
// them all. Measured, on the client:
// - delay: each text chunk's bytes are stamped (performance.now()) as they come out of the response
//   body — a wrapped global `fetch`, which all three contenders read their replies through, hands each
//   contender a Response whose body passes every piece through a TransformStream (no backpressure of its own)
//   that stamps the unique text markers in it — and again when the contender's consumer sees the text event;
//   p50 / p99 of the difference over every chunk of every conversation (the stamping costs the same for all);
// - CPU per turn: process.cpuUsage() from the first conversation to the last one's end, less the
//   collections of the memory reading, over the turns (2 a conversation);
// - the pace kept: the time from the release to a conversation's end, p50 (at the nominal pace: 11 events of
//   20 ms, the tool's 100 ms, 13 events: 0.58 s); far above it, the client (or the server) was saturated.
// Contenders (contenders/w10.js): rx-tool-loop, Pi, the AI SDK, and a floor (fetch and parse, no loop: not a peer).
// At 1,000 a run takes about 35 s (most of it the AI SDK's); 10,000, about 6 minutes (15 on a busy 2-core machine).
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const args = process.argv.slice(2);
const valueOf = (name) => {
  const i = args.findIndex((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`));
  if (i < 0) return undefined;
  return args[i].includes('=') ? args[i].slice(args[i].indexOf('=') + 1) : args[i + 1];
};

// ---------------------------------------------------------------------------------------------
// the client process: one contender, N conversations

async function client(name, n, baseURL) {
  const { TEXT, HOLD } = require('./lib/w10-server.js');
  const { ALL } = require('./contenders/w10.js');
  const contender = ALL.find((c) => c.name === name);
  const realFetch = globalThis.fetch;
  const arrivals = new Map();
  let responses = 0;
  const marker = /x\d+\.\d\.\d+/g;
  // the stamp: every piece of every response body, as it comes out of Node's fetch, for every contender alike
  globalThis.fetch = async (input, init) => {
    const response = await realFetch(input, init);
    if (!response.body) return response;
    responses++;
    // no backpressure on the stamp: each piece is stamped as Node's fetch hands it over, not when the contender
    // next reads (a TransformStream's readable side holds nothing by default, so its transform would wait for that
    // read, and the time a piece waits for a busy consumer would not be measured)
    const stamp = new TransformStream(
      {
        transform(piece, controller) {
          const at = performance.now();
          const text = Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength).toString('latin1');
          for (const found of text.match(marker) ?? []) arrivals.set(found, at);
          controller.enqueue(piece);
        },
      },
      undefined,
      { highWaterMark: Infinity },
    );
    const stamped = response.body.pipeThrough(stamp);
    return new Response(stamped, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  await contender.load();

  let measuring = false;
  const delays = new Float64Array(n * 2 * TEXT);
  let count = 0;
  let unmatched = 0;
  let reached = 0;
  let allHeld;
  const held = new Promise((resolve) => (allHeld = resolve));
  const onText = (text) => {
    const seen = performance.now();
    const key = text.trim();
    const at = arrivals.get(key);
    if (at === undefined) {
      unmatched++;
      return;
    }
    arrivals.delete(key);
    if (!measuring) return;
    delays[count++] = seen - at;
    if (key.endsWith(`.1.${HOLD - 1}`) && ++reached === n) allHeld();
  };

  // warm-up: the contender's code loaded and compiled, the agent's first sockets open
  const WARM = 50;
  await Promise.all(Array.from({ length: WARM }, (_, i) => contender.run({ model: `w10-${1_000_000 + i}`, baseURL, onText })));
  const memory = () => {
    global.gc();
    global.gc();
    return process.memoryUsage();
  };
  const before = memory();
  measuring = true;
  responses = 0;
  unmatched = 0;
  // the collector's pauses while the conversations run (the memory reading's own collections excluded)
  const { PerformanceObserver } = require('node:perf_hooks');
  const gcPauses = { count: 0, ms: 0, maxMs: 0, counting: true };
  const observer = new PerformanceObserver((list) => {
    if (!gcPauses.counting) return;
    for (const entry of list.getEntries()) {
      gcPauses.count++;
      gcPauses.ms += entry.duration;
      gcPauses.maxMs = Math.max(gcPauses.maxMs, entry.duration);
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const ends = new Float64Array(n);
  let failed;
  const conversations = [];
  for (let i = 0; i < n; i++) {
    conversations.push(
      contender.run({ model: `w10-hold-${i}`, baseURL, onText }).then(
        () => (ends[i] = performance.now()),
        (error) => {
          failed ??= error;
          allHeld();
        },
      ),
    );
    if (i % 100 === 99) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await held;
  if (failed) throw failed;
  const tHeld = performance.now();
  const cpuA = process.cpuUsage();
  gcPauses.counting = false;
  const during = memory();
  await new Promise((resolve) => setImmediate(resolve)); // the observer hears of those collections, uncounted
  gcPauses.counting = true;
  const gcCpu = process.cpuUsage(cpuA);
  const released = performance.now();
  const freed = Number(await (await realFetch(`${baseURL}/release`)).text());
  await Promise.all(conversations);
  if (failed) throw failed;
  const cpu = process.cpuUsage(cpu0);
  const t1 = performance.now();
  await new Promise((resolve) => setImmediate(resolve));
  observer.disconnect();

  const sorted = delays.slice(0, count).sort();
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const tails = Array.from(ends, (end) => end - released).sort((a, b) => a - b);
  const turns = 2 * n;
  const result = {
    contender: name,
    label: contender.label,
    conversations: n,
    turns,
    responses,
    released: freed,
    chunks: count,
    expectedChunks: n * 2 * TEXT,
    unmatched,
    heapPerConversationKB: (during.heapUsed - before.heapUsed) / n / 1024,
    rssPerConversationKB: (during.rss - before.rss) / n / 1024,
    heapTotalPerConversationKB: (during.heapTotal - before.heapTotal) / n / 1024, // what V8 keeps committed: part of the RSS
    externalPerConversationKB: (during.external - before.external) / n / 1024, // buffers outside the heap
    heapHeldMB: during.heapUsed / 1024 / 1024,
    rssHeldMB: during.rss / 1024 / 1024,
    delayP50ms: at(0.5),
    delayP99ms: at(0.99),
    delayMaxms: sorted[sorted.length - 1],
    cpuPerTurnUs: (cpu.user + cpu.system - gcCpu.user - gcCpu.system) / turns,
    tailP50ms: tails[tails.length >> 1],
    tailP99ms: tails[Math.min(tails.length - 1, Math.floor(0.99 * tails.length))],
    gcPauses: gcPauses.count,
    gcPauseMs: gcPauses.ms,
    gcPauseMaxMs: gcPauses.maxMs,
    rampAndHoldSeconds: (tHeld - t0) / 1000,
    seconds: (t1 - t0) / 1000,
  };
  // every conversation made its two requests, and every text chunk reached the consumer as one event of its own
  if (responses !== turns) throw new Error(`${name}: ${responses} responses for ${turns} turns`);
  // (a marker cut in two by a read is not stamped: counted as unmatched, not measured)
  if (count + unmatched !== result.expectedChunks) throw new Error(`${name}: ${count} text events matched and ${unmatched} unmatched for ${result.expectedChunks} chunks`);
  if (freed !== n) throw new Error(`${name}: the server released ${freed} held replies, not ${n}`);
  process.stdout.write(`W10_RESULT ${JSON.stringify(result)}\n`);
}

// ---------------------------------------------------------------------------------------------
// the parent: a server and a client process per contender and size

const fmt = (x, digits = 1) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(digits) : '–');

function runClient(name, n, baseURL, profileDir) {
  return new Promise((resolve) => {
    const node = [process.execPath, '--expose-gc', '--max-old-space-size=8192', ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []), __filename, '--client', name, String(n), baseURL];
    // 10,000 sockets and more: the soft limit on open files raised to the hard one, in the client's shell
    const quoted = node.map((part) => `'${part.replace(/'/g, `'\\''`)}'`).join(' ');
    const child = spawn('/bin/sh', ['-c', `ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec ${quoted}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (piece) => (stdout += piece));
    child.stderr.on('data', (piece) => (stderr += piece));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30 * 60_000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.split('\n').find((l) => l.startsWith('W10_RESULT '));
      if (line) resolve(JSON.parse(line.slice('W10_RESULT '.length)));
      else resolve({ contender: name, conversations: n, error: `${signal ? `killed (${signal})` : `code ${code}`}: ${stderr.trim().split('\n').slice(-3).join(' / ')}` });
    });
  });
}

async function main() {
  const unknown = args.filter((arg, i) => arg.startsWith('--') && !/^--(conversations|contenders)(=|$)|^--(cpu-prof|result)$/.test(arg) && !/^--(conversations|contenders)$/.test(args[i - 1] ?? ''));
  if (unknown.length > 0) throw new Error(`w10: unknown option ${unknown.join(', ')} (takes --conversations=N[,N], --contenders=a,b, --cpu-prof, --result)`);
  const { start } = require('./lib/w10-server.js');
  const { ALL } = require('./contenders/w10.js');
  const sizes = (valueOf('conversations') ?? '1000').split(',').map(Number);
  if (sizes.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`w10: --conversations takes whole numbers (got ${valueOf('conversations')})`);
  const names = valueOf('contenders')?.split(',') ?? ALL.map((c) => c.name);
  const missing = names.filter((name) => !ALL.some((c) => c.name === name));
  if (missing.length > 0) throw new Error(`w10: no contender ${missing.join(', ')} (have: ${ALL.map((c) => c.name).join(', ')})`);
  const profiling = args.includes('--cpu-prof');
  const rows = [];
  for (const n of sizes) {
    for (const name of names) {
      const load = os.loadavg()[0];
      const server = await start();
      const started = Date.now();
      const profileDir = profiling ? path.join(__dirname, 'profiles', `cpu-W10-${name}-${n}-${Date.now()}`) : undefined;
      if (profileDir) fs.mkdirSync(profileDir, { recursive: true });
      const row = await runClient(name, n, server.baseURL, profileDir);
      const stopped = await server.stop();
      row.loadBefore = load;
      row.wallSeconds = (Date.now() - started) / 1000;
      if (stopped) row.serverCpuSeconds = (stopped.cpu.user + stopped.cpu.system) / 1e6;
      rows.push(row);
      if (profileDir) {
        const { summariseCpu, print } = require('./profile.js');
        const file = fs.readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
        if (file) process.stderr.write(`${print({ kind: 'cpu', workload: `W10 (${name}, ${n})`, file: path.relative(path.dirname(__dirname), path.join(profileDir, file)), ...summariseCpu(path.join(profileDir, file), 25) })}\n`);
      }
      process.stderr.write(
        row.error
          ? `W10 ${n} ${name}: failed: ${row.error}\n`
          : `W10 ${n} ${name}: heap ${fmt(row.heapPerConversationKB)} KB, RSS ${fmt(row.rssPerConversationKB)} KB a conversation; delay p50 ${fmt(row.delayP50ms, 2)} ms, p99 ${fmt(row.delayP99ms, 2)} ms; CPU ${fmt(row.cpuPerTurnUs, 0)} µs a turn; tail p50 ${fmt(row.tailP50ms, 0)} ms; gc ${row.gcPauses} pauses, ${fmt(row.gcPauseMs, 0)} ms (max ${fmt(row.gcPauseMaxMs, 1)}); load ${fmt(load)}; ${fmt(row.wallSeconds)} s\n`,
      );
    }
  }
  process.stdout.write(`${table(rows)}\n`);
  if (args.includes('--result')) process.stdout.write(`BENCH_RESULT ${JSON.stringify({ workload: 'W10', rows })}\n`);
}

/** The markdown table of W10's rows. */
function table(rows) {
  const head = ['conversations', 'contender', 'heap / conv. (KB)', 'RSS / conv. (KB)', 'delay p50 (ms)', 'delay p99 (ms)', 'CPU / turn (µs)', 'after release p50 / p99 (s)', 'load'];
  const body = rows.map((r) =>
    r.error
      ? [r.conversations.toLocaleString('en'), r.contender, `failed: ${r.error}`, '', '', '', '', '', '']
      : [r.conversations.toLocaleString('en'), r.contender, fmt(r.heapPerConversationKB), fmt(r.rssPerConversationKB), fmt(r.delayP50ms, 2), fmt(r.delayP99ms, 2), fmt(r.cpuPerTurnUs, 0), `${fmt(r.tailP50ms / 1000, 2)} / ${fmt(r.tailP99ms / 1000, 2)}`, fmt(r.loadBefore)],
  );
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...body.map((cells) => `| ${cells.join(' | ')} |`)].join('\n');
}

module.exports = { table };

if (require.main === module) {
  const run = args[0] === '--client' ? client(args[1], Number(args[2]), args[3]).then(() => process.exit(0)) : main();
  run.catch((error) => {
    process.stderr.write(`${error?.stack ?? error}\n`);
    process.exit(1);
  });
}
