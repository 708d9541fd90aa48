'use strict';
// U3's figure, outside the workloads: `writeSse` events/s over a real loopback socket, beside the AI SDK's own
// `pipeUIMessageStreamToResponse` (Node) carrying the same events on the same run; `sseResponse` beside
// `createUIMessageStreamResponse` (fetch API), each served by node:http through `Readable.fromWeb`.
//
//   npm run build && node bench/sse.js [DIST] [--events=N] [--rounds=N]
//
// The server and what it writes run in this process, on one core; the client is a child process that reads the
// stream to its end and discards it (it never holds the server back). The run: N UI message chunks of a
// streamed answer (`text-delta`s of one word, a tool call's chunks every 50), handed to each writer as it takes
// them — an Observable to rx-tool-loop (bufferSize N: the whole run is one synchronous burst), a pull-based
// ReadableStream to the AI SDK. Heartbeats off on both sides. Reported: events/s of wall time from the request
// to the client's last byte, and of the server's CPU time; medians of interleaved rounds. Target (U3): writeSse
// ≥ 50,000 events/s. `run.js --only=SSE` runs it as a workload and checks the target.
const path = require('node:path');
const http = require('node:http');
const { spawn } = require('node:child_process');
const { Readable } = require('node:stream');

const args = process.argv.slice(2);
const option = (name, fallback) => Number((args.find((arg) => arg.startsWith(`--${name}=`)) ?? `--${name}=${fallback}`).split('=')[1]);
const dist = args.find((arg) => !arg.startsWith('--')) ?? path.join(__dirname, '..', 'dist', 'cjs');
const EVENTS = option('events', 200_000);
const ROUNDS = option('rounds', 7);
const ui = require(path.join(path.resolve(dist), 'ui', 'index.js'));
const rxjs = require(require.resolve('rxjs', { paths: [path.resolve(dist)] }));

/** The run: a streamed answer's UI message chunks, a tool call every 50 events. */
function makeRun(count) {
  const events = [{ type: 'start' }, { type: 'start-step' }, { type: 'text-start', id: 't' }];
  for (let i = 0; events.length < count - 3; i++) {
    if (i % 50 === 49) {
      const id = `call_${i}`;
      events.push({ type: 'tool-input-available', toolCallId: id, toolName: 'current_time', input: {} }, { type: 'tool-output-available', toolCallId: id, output: '2026-01-01T00:00:00Z' });
    } else events.push({ type: 'text-delta', id: 't', delta: `word${i % 100} ` });
  }
  events.push({ type: 'text-end', id: 't' }, { type: 'finish-step' }, { type: 'finish' });
  return events;
}

function pullStream(events) {
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      // as many as the queue takes per pull: the AI SDK's own sources enqueue chunk by chunk
      controller.enqueue(events[i++]);
      if (i === events.length) controller.close();
    },
  });
}

/** The client, in a process of its own: reads the stream to its end, prints bytes and ms. */
const CLIENT = `
const http = require('node:http');
const start = process.hrtime.bigint();
let bytes = 0;
http.get(process.argv[1], (response) => {
  response.on('data', (chunk) => (bytes += chunk.length));
  response.on('end', () => { process.stdout.write(JSON.stringify({ bytes, ms: Number(process.hrtime.bigint() - start) / 1e6 })); });
});`;

function fetchWithClient(url) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', CLIENT, url], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`client exited with ${code}`))));
  });
}

async function main() {
  const { pipeUIMessageStreamToResponse, createUIMessageStreamResponse } = await import('ai');
  const events = makeRun(EVENTS);
  const writers = {
    'rx-tool-loop writeSse': (response) => ui.writeSse(response, rxjs.from(events), { protocol: 'ui-message-stream', heartbeatMs: Infinity, bufferSize: events.length }),
    'AI SDK pipeUIMessageStreamToResponse': (response) => pipeUIMessageStreamToResponse({ response, stream: pullStream(events) }),
    'rx-tool-loop sseResponse': (response) => serveWeb(response, ui.sseResponse(rxjs.from(events), { protocol: 'ui-message-stream', heartbeatMs: Infinity, bufferSize: events.length })),
    'AI SDK createUIMessageStreamResponse': (response) => serveWeb(response, createUIMessageStreamResponse({ stream: pullStream(events) })),
  };
  let current;
  let cpu;
  const server = http.createServer((_request, response) => {
    cpu = process.cpuUsage();
    response.on('finish', () => (cpu = process.cpuUsage(cpu)));
    current(response);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/`;
  const results = Object.fromEntries(Object.keys(writers).map((name) => [name, { wall: [], cpu: [], bytes: 0 }]));
  for (let round = 0; round < ROUNDS + 1; round++) {
    for (const [name, writer] of Object.entries(writers)) {
      current = writer;
      const { bytes, ms } = await fetchWithClient(url);
      if (round === 0) continue; // warm-up
      results[name].wall.push(EVENTS / (ms / 1000));
      results[name].cpu.push(EVENTS / ((cpu.user + cpu.system) / 1e6));
      results[name].bytes = bytes;
    }
  }
  server.close();
  const median = (xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];
  const rows = Object.entries(results).map(([name, r]) => ({ name, wall: median(r.wall), cpu: median(r.cpu), bytes: r.bytes }));
  console.log(`SSE: ${EVENTS.toLocaleString('en')} UI message chunks over loopback, medians of ${ROUNDS} rounds (Node ${process.version})`);
  console.log('| writer | events/s (wall) | events/s (server CPU) | bytes |');
  console.log('|---|---:|---:|---:|');
  for (const row of rows) console.log(`| ${row.name} | ${Math.round(row.wall).toLocaleString('en')} | ${Math.round(row.cpu).toLocaleString('en')} | ${row.bytes.toLocaleString('en')} |`);
  console.log(`BENCH_RESULT ${JSON.stringify({ workload: 'SSE', events: EVENTS, rounds: ROUNDS, rows })}`);
}

/** A fetch-API Response written to a node:http response, as Node frameworks serve one. */
function serveWeb(response, web) {
  response.writeHead(web.status, Object.fromEntries(web.headers));
  Readable.fromWeb(web.body).pipe(response);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
