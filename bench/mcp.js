'use strict';
// W8 (issue 22, item 6): the overhead of an MCP tool call through rx-tool-loop, against the SDK's bare
// `client.callTool` to the same server — in memory (the SDK's own Server and InMemoryTransport, so only
// the client side differs) and over stdio (`@modelcontextprotocol/server-everything`, a child process
// started and stopped by the row that uses it). Each row runs in a Node process of its own (one code path
// per process: interleaving the rows in one process made each slower by JIT and GC effects that have nothing
// to do with the row), the rows' processes alternate over the rounds, and the figures are medians of the
// rounds: CPU time per call (user + system: what the process itself spent, whatever the machine's load) and
// wall time per call.
//
//   npm run build && node bench/mcp.js [--calls=3000] [--rounds=5]
//
// Rows, per transport:
//   bare        await client.callTool({ name, arguments }) in sequence: the floor
//   bare+opts   the same with the options the adapter must pass (an AbortSignal, onprogress, no 60 s default)
//   handler     mcpTools' tool's handler with the loop's own context, subscribed by hand (the adapter alone)
//   run         mcpTools' tool through ToolRegistry.run (the adapter and the registry, no loop)
//   loop        one loop whose scripted model calls the tool once a turn, N turns (adapter + a turn each)
const path = require('node:path');
const { ROOT, DIST } = require('./lib/paths.js');
const { lib, rxjs, stats, now } = require('./lib/env.js');

const mcp = require(path.join(DIST, 'mcp', 'index.js'));
const sdk = (sub) => require(require.resolve(`@modelcontextprotocol/sdk/${sub}`, { paths: [ROOT] }));
const { Client } = sdk('client/index.js');
const { StdioClientTransport } = sdk('client/stdio.js');
const { Server } = sdk('server/index.js');
const { InMemoryTransport } = sdk('inMemory.js');
const { CallToolRequestSchema, ListToolsRequestSchema } = sdk('types.js');

const { ToolCallContext } = require(path.join(DIST, 'tools', 'tool-call-context.js'));
const { spawnSync } = require('node:child_process');

const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const CALLS = Number(arg('calls', 3000));
const ROUNDS = Number(arg('rounds', 5));
const ROWS = ['bare', 'bare+opts', 'handler', 'run', 'loop'];
const TRANSPORTS = { memory: 'in memory', stdio: 'stdio (server-everything)' };

async function inMemory() {
  const server = new Server({ name: 'bench', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: 'echo', inputSchema: { type: 'object' } }] }));
  server.setRequestHandler(CallToolRequestSchema, (request) => ({ content: [{ type: 'text', text: String(request.params.arguments.message) }] }));
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(a);
  return client;
}

async function overStdio() {
  const bin = require.resolve('@modelcontextprotocol/server-everything/dist/index.js', { paths: [ROOT] });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [bin, 'stdio'], stderr: 'ignore' }));
  return client;
}

/** A provider whose turn k (1..n) calls `echo`, and whose turn n + 1 answers. */
function provider(n) {
  let turn = 0;
  return () =>
    new rxjs.Observable((subscriber) => {
      turn++;
      subscriber.next({ type: 'message_start' });
      if (turn <= n) {
        subscriber.next({ type: 'tool_call', call: { id: `c${turn}`, name: 'echo', input: { message: `m${turn}` } } });
        subscriber.next({ type: 'message_end', stopReason: 'toolUse' });
      } else {
        subscriber.next({ type: 'text_delta', text: 'done' });
        subscriber.next({ type: 'message_end', stopReason: 'stop' });
      }
      subscriber.complete();
    });
}

/** One row in this process: a warm-up, then CALLS calls; prints `{ cpu, wall }` in µs per call. */
async function child(transport, row) {
  const client = transport === 'memory' ? await inMemory() : await overStdio();
  try {
    const registry = new lib.ToolRegistry();
    const tools = await rxjs.firstValueFrom(mcp.mcpTools(client, { filter: (tool) => tool.name === 'echo' }));
    registry.register(tools[0]);
    const rows = {
      bare: async (n) => {
        for (let i = 1; i <= n; i++) await client.callTool({ name: 'echo', arguments: { message: `m${i}` } });
      },
      'bare+opts': async (n) => {
        for (let i = 1; i <= n; i++) {
          const options = { signal: new AbortController().signal, onprogress: () => {}, timeout: 2 ** 31 - 1, resetTimeoutOnProgress: true };
          await client.callTool({ name: 'echo', arguments: { message: `m${i}` } }, undefined, options);
        }
      },
      handler: async (n) => {
        for (let i = 1; i <= n; i++) {
          const call = { id: `c${i}`, name: 'echo', input: { message: `m${i}` } };
          await rxjs.lastValueFrom(tools[0].handler(call.input, new ToolCallContext(call)));
        }
      },
      run: async (n) => {
        for (let i = 1; i <= n; i++) await rxjs.lastValueFrom(registry.run({ id: `c${i}`, name: 'echo', input: { message: `m${i}` } }));
      },
      loop: async (n) => {
        const end = await rxjs.lastValueFrom(lib.runEventedToolLoop({ provider: provider(n), registry, messages: [{ role: 'user', content: 'go' }], maxTurns: n + 1 }));
        if (end.reason !== 'stop' || end.messages.length !== 2 * n + 2) throw new Error(`bench: the loop ended ${end.reason}`);
      },
    };
    await rows[row](Math.min(500, CALLS)); // warm-up
    global.gc?.();
    const cpu = process.cpuUsage();
    const start = now();
    await rows[row](CALLS);
    const wall = ((now() - start) * 1000) / CALLS;
    const used = process.cpuUsage(cpu);
    process.stdout.write(JSON.stringify({ cpu: (used.user + used.system) / CALLS, wall }));
  } finally {
    await client.close();
  }
}

async function main() {
  const transport = arg('transport', undefined);
  if (transport !== undefined) return child(transport, arg('row', 'bare'));
  const results = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const t of Object.keys(TRANSPORTS)) {
      for (const row of round % 2 === 0 ? ROWS : ROWS.slice().reverse()) {
        const out = spawnSync(process.execPath, ['--expose-gc', __filename, `--transport=${t}`, `--row=${row}`, `--calls=${CALLS}`], { encoding: 'utf8' });
        if (out.status !== 0) throw new Error(`bench: ${t} ${row} failed: ${out.stderr}`);
        (results[`${t} ${row}`] ??= []).push(JSON.parse(out.stdout));
      }
    }
  }
  console.log(`W8: ${CALLS} MCP calls in sequence per process, ${ROUNDS} rounds, node ${process.version}\n`);
  console.log('| transport | row | CPU µs per call | × bare | wall µs per call | × bare |');
  console.log('|---|---|---|---|---|---|');
  for (const [t, label] of Object.entries(TRANSPORTS)) {
    const median = (row, key) => stats(results[`${t} ${row}`].map((r) => r[key])).median;
    for (const row of ROWS) {
      const cpu = median(row, 'cpu');
      const wall = median(row, 'wall');
      console.log(`| ${label} | ${row} | ${cpu.toFixed(1)} | ${(cpu / median('bare', 'cpu')).toFixed(2)}× | ${wall.toFixed(1)} | ${(wall / median('bare', 'wall')).toFixed(2)}× |`);
    }
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
