'use strict';
// Profiles rx-tool-loop on one workload and prints where the time (or the retained heap) goes.
//
//   node bench/profile.js cpu W1        # --cpu-prof: self time, and inclusive time per library function
//   node bench/profile.js heap W1       # --heap-prof: what 1,000 paused conversations keep alive, by allocation site
//   node bench/profile.js heap W2       # --heap-prof: what one turn of 1,000,000 deltas leaves behind
//   node bench/profile.js cpu W4 --json # machine-readable (run.js embeds it in results.md)
//
// Workloads: cpu W1, W1b, W2, W3, W4, W5, W6; heap W1, W2. The profile files go to bench/profiles/
// (ignored by git). Library lines are shown as src/ lines when the build has source maps, else as build lines.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const BENCH = __dirname;
const PROFILES = path.join(BENCH, 'profiles');
const { ROOT, DIST } = require('./lib/paths.js');

// ---------------------------------------------------------------------------------------------
// the child: runs one scenario of rx-tool-loop, then exits (the profile is written at exit)

async function scenario(kind, workload) {
  const { lib, rxjs, gc, until } = require('./lib/env.js');
  const S = require('./lib/script.js');
  const rxToolLoop = require('./contenders/rx-tool-loop.js');
  const run = async (spec, reps) => {
    for (let i = 0; i < reps; i++) {
      const counters = S.newCounters();
      const echo = S.makeEcho(spec, counters);
      global.__kept = await rxToolLoop.run(spec, counters, echo);
      S.checkCounts(spec, counters);
    }
  };
  if (kind === 'cpu') {
    if (workload === 'W1') return run({ conversations: 200, turns: 10, deltas: 5, calls: 1, sequential: true }, 60);
    if (workload === 'W1b') return run({ conversations: 200, turns: 40, deltas: 5, calls: 1, sequential: true }, 15);
    if (workload === 'W2') return run({ conversations: 1, turns: 1, deltas: 1_000_000, calls: 0 }, 5);
    if (workload === 'W3') return run({ conversations: 1, turns: 2, deltas: 5, calls: 8, toolDelayMs: 50 }, 20);
    if (workload === 'W4') return run({ conversations: 1, turns: 10_000, deltas: 5, calls: 1 }, 3);
    if (workload === 'W6') {
      // rx-tool-loop's providers against the loopback server (a process of its own: not in the profile),
      // W6's CPU scenario, both APIs
      const server = await require('./lib/w6-server.js').start();
      const W6 = require('./lib/w6-wire.js');
      const rx = require('./contenders/http.js').httpContender('rx-tool-loop');
      await rx.load();
      const tools = { lookup: () => 'lookup: done', write_file: () => 'write_file: done' };
      try {
        for (const api of ['openai', 'anthropic']) {
          for (let i = 0; i < 5; i++) {
            global.__kept = await rx.run({ api, scenario: W6.SCENARIOS['w6-cpu'], baseURL: server.baseURL, tools });
            const failed = (await server.take()).find((r) => r.error);
            if (failed) throw new Error(`the server refused a request: ${failed.error}`);
          }
        }
      } finally {
        await server.stop();
      }
      return;
    }
    if (workload === 'W5') {
      // the W5 mix is in workload.js; here: many concurrent loops with timer tools
      return run({ conversations: 1000, turns: 6, deltas: 8, calls: 2, toolDelayMs: 2 }, 3);
    }
  }
  if (kind === 'heap') {
    if (workload === 'W1') {
      await run({ conversations: 200, turns: 10, deltas: 5, calls: 1, sequential: true }, 5); // warm
      global.__kept = undefined;
      gc();
      const spec = { conversations: 1000, turns: 10, deltas: 5, calls: 1, pauseAtTurn: 5 };
      const counters = S.newCounters();
      const echo = S.makeEcho(spec, counters);
      global.__kept = { done: rxToolLoop.run(spec, counters, echo), echo };
      await until(() => echo.pending.length === spec.conversations);
      gc();
      return; // exit with 1,000 conversations paused: the heap profile shows what they hold
    }
    if (workload === 'W2') {
      await run({ conversations: 1, turns: 1, deltas: 1_000_000, calls: 0 }, 1);
      gc();
      return; // exit holding the final messages
    }
  }
  void lib;
  void rxjs;
  throw new Error(`profile: no ${kind} scenario for ${workload}`);
}

// ---------------------------------------------------------------------------------------------
// the parent: starts the child under the profiler and summarises the profile

const { SourceMap } = require('node:module');
const sourceMaps = new Map();

/** `file:line` of a call frame, mapped to src/ when dist/ has a source map. */
function where(url, line, column) {
  const file = url.replace(/^file:\/\//, '');
  const root = ROOT;
  if (file.startsWith(DIST + path.sep)) {
    let map = sourceMaps.get(file);
    if (map === undefined) {
      try {
        map = new SourceMap(JSON.parse(fs.readFileSync(`${file}.map`, 'utf8')));
      } catch {
        map = null;
      }
      sourceMaps.set(file, map);
    }
    const entry = map?.findEntry(line, column);
    if (entry && entry.originalSource) {
      const source = path.resolve(path.dirname(file), entry.originalSource);
      return `${path.relative(root, source)}:${entry.originalLine + 1}`;
    }
    return `${path.relative(root, file)}:${line + 1}`;
  }
  if (file === '') return '(native)';
  const inModules = file.lastIndexOf('node_modules/');
  if (inModules >= 0) return `${file.slice(inModules + 'node_modules/'.length)}:${line + 1}`;
  if (file.startsWith(root)) return `${path.relative(root, file)}:${line + 1}`;
  return `${file}:${line + 1}`;
}

const sources = new Map();
/** The text of line `line` (from 1) of a file, trimmed, for the hot-line list. */
function sourceLine(url, line) {
  const file = url.replace(/^file:\/\//, '');
  if (!sources.has(file)) {
    try {
      sources.set(file, fs.readFileSync(file, 'utf8').split('\n'));
    } catch {
      sources.set(file, []);
    }
  }
  const text = (sources.get(file)[line - 1] ?? '').trim();
  return text.length > 90 ? `${text.slice(0, 87)}...` : text;
}

const isLibrary = (url) => url.replace(/^file:\/\//, '').startsWith(DIST + path.sep);

function summariseCpu(file, top) {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const key = (node) => {
    const frame = node.callFrame;
    return `${frame.functionName || '(anonymous)'} ${where(frame.url, frame.lineNumber, frame.columnNumber)}`;
  };
  const self = new Map();
  const inclusive = new Map();
  const lines = new Map(); // library line -> ticks
  let ticks = 0;
  for (const node of profile.nodes) {
    for (const { line, ticks: n } of node.positionTicks ?? []) {
      ticks += n;
      if (!isLibrary(node.callFrame.url)) continue;
      const k = `${where(node.callFrame.url, line - 1, 0)}  ${sourceLine(node.callFrame.url, line)}`;
      lines.set(k, (lines.get(k) ?? 0) + n);
    }
  }
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    total += dt;
    const node = nodes.get(id);
    self.set(key(node), (self.get(key(node)) ?? 0) + dt);
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const n = nodes.get(at);
      if (!isLibrary(n.callFrame.url)) continue;
      const k = key(n);
      if (seen.has(k)) continue;
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + dt);
    }
  });
  const rank = (map) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, percent: Number(((us / total) * 100).toFixed(1)) }));
  const hotLines = [...lines]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, n]) => ({ name, percent: Number(((n / ticks) * 100).toFixed(1)) }));
  return { totalMs: Math.round(total / 1000), self: rank(self), libraryInclusive: rank(inclusive), libraryLines: hotLines };
}

function summariseHeap(file, top) {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
  const self = new Map();
  const library = new Map();
  let total = 0;
  // only what the runs allocated (under bench/contenders/), not module loading
  const walk = (node, stack, inRun) => {
    const frame = node.callFrame;
    const name = `${frame.functionName || '(anonymous)'} ${where(frame.url, frame.lineNumber, frame.columnNumber)}`;
    const here = stack.concat(isLibrary(frame.url) ? [name] : []);
    const running = inRun || frame.url.includes(`${path.sep}bench${path.sep}contenders${path.sep}`);
    const bytes = (node.selfSize ?? 0) || (node.samples ?? []).reduce((sum, s) => sum + (s.size ?? 0), 0);
    if (bytes > 0 && running) {
      total += bytes;
      self.set(name, (self.get(name) ?? 0) + bytes);
      // the innermost library frame that led to this allocation
      const owner = here[here.length - 1] ?? '(outside the library)';
      library.set(owner, (library.get(owner) ?? 0) + bytes);
    }
    for (const child of node.children ?? []) walk(child, here, running);
  };
  walk(profile.head, [], false);
  const rank = (map) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, bytes]) => ({ name, kib: Math.round(bytes / 1024), percent: Number(((bytes / total) * 100).toFixed(1)) }));
  return { totalKiB: Math.round(total / 1024), self: rank(self), byLibraryFrame: rank(library) };
}

function profile(kind, workload, { top = 12 } = {}) {
  const dir = path.join(PROFILES, `${kind}-${workload}-${Date.now()}`);
  fs.mkdirSync(dir, { recursive: true });
  const flags =
    kind === 'cpu'
      ? ['--cpu-prof', `--cpu-prof-dir=${dir}`]
      : ['--heap-prof', `--heap-prof-dir=${dir}`, '--heap-prof-interval=4096'];
  const child = spawnSync(process.execPath, ['--expose-gc', ...flags, __filename, '--child', kind, workload], {
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: 300_000,
  });
  if (child.status !== 0) throw new Error(`profile: the ${kind} ${workload} run failed (status ${child.status})`);
  const file = fs.readdirSync(dir).find((name) => name.endsWith(kind === 'cpu' ? '.cpuprofile' : '.heapprofile'));
  if (!file) throw new Error(`profile: no profile written in ${dir}`);
  const full = path.join(dir, file);
  const summary = kind === 'cpu' ? summariseCpu(full, top) : summariseHeap(full, top);
  return { kind, workload, file: path.relative(path.resolve(BENCH, '..'), full), ...summary };
}

function print(result) {
  const lines = [];
  if (result.kind === 'cpu') {
    lines.push(`cpu profile of rx-tool-loop on ${result.workload} (${result.totalMs} ms sampled; ${result.file})`);
    lines.push('  self time:');
    for (const { name, percent } of result.self) lines.push(`    ${String(percent).padStart(5)}%  ${name}`);
    lines.push('  inclusive time of library functions:');
    for (const { name, percent } of result.libraryInclusive) lines.push(`    ${String(percent).padStart(5)}%  ${name}`);
    lines.push('  hottest library lines (self time):');
    for (const { name, percent } of result.libraryLines) lines.push(`    ${String(percent).padStart(5)}%  ${name}`);
  } else {
    lines.push(`heap profile of rx-tool-loop on ${result.workload} (${result.totalKiB} KiB allocated by the runs and live at exit; ${result.file})`);
    lines.push('  by allocating function:');
    for (const { name, kib, percent } of result.self) lines.push(`    ${String(kib).padStart(7)} KiB ${String(percent).padStart(5)}%  ${name}`);
    lines.push('  by innermost library frame:');
    for (const { name, kib, percent } of result.byLibraryFrame) lines.push(`    ${String(kib).padStart(7)} KiB ${String(percent).padStart(5)}%  ${name}`);
  }
  return lines.join('\n');
}

module.exports = { profile, print, summariseCpu };

if (require.main === module) {
  const args = process.argv.slice(2);
  if (args[0] === '--child') {
    scenario(args[1], args[2]).then(
      () => process.exit(0),
      (error) => {
        process.stderr.write(`${error?.stack ?? error}\n`);
        process.exit(1);
      },
    );
  } else {
    const [kind, workload] = args.filter((arg) => !arg.startsWith('--'));
    if (!['cpu', 'heap'].includes(kind) || !workload) {
      process.stderr.write('usage: node bench/profile.js cpu|heap W1|W1b|W2|W3|W4|W5|W6 [--json]\n');
      process.exit(2);
    }
    const result = profile(kind, workload);
    process.stdout.write(args.includes('--json') ? `${JSON.stringify(result)}\n` : `${print(result)}\n`);
  }
}
