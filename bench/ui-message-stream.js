'use strict';
// U2, measured: what `toUiMessageStream` (rx-tool-loop/ui) costs an event, over a long scripted run, and beside it
// what the AI SDK's own `toUIMessageStream` of `streamText` costs a part on the same run.
//
//   npm run build && node --expose-gc bench/ui-message-stream.js [--quick]
//
// rx-tool-loop: W1's fake model (lib/script.js) for one loop of 100 turns, 20 text deltas and 2 synchronous `echo`
// calls a turn (each call also streamed as two `tool_call_delta`s), recorded once; then in interleaved rounds on CPU
// time, replaying the recorded events through `toUiMessageStream()` against replaying them bare: the difference over
// the events is the operator's cost an event (target ≤ 2 µs, DESIGN "Measured"). The AI SDK: `streamText` on a
// MockLanguageModelV4 from `ai/test` playing the same turns (text parts, tool-input-start/-delta/-end, tool calls,
// the `echo` tool executed by the SDK), its `fullStream` parts recorded once; then, the same way, `toUIMessageStream`
// over a ReadableStream of those parts against the bare stream (its design is asynchronous streams: counted), and
// `toUIMessageChunk`, its translation of one part, alone against a bare loop. Prints `BENCH_RESULT {json}` for run.js.
const path = require('node:path');
const { DIST } = require('./lib/paths.js');
const { lib, rxjs, stats } = require('./lib/env.js');
const S = require('./lib/script.js');

const QUICK = process.argv.includes('--quick');
const ROUNDS = QUICK ? 5 : 31;
const spec = { turns: 100, deltas: 20, calls: 2 };
const ui = require(path.join(DIST, 'ui', 'index.js'));
if (typeof global.gc !== 'function') throw new Error('run it with node --expose-gc');

const cpu = () => {
  const { user, system } = process.cpuUsage();
  return user + system; // µs
};

/** The loop's events, recorded once: each call's arguments streamed first, as real providers do (P9). */
function recordedRun() {
  const counters = S.newCounters();
  const echo = S.makeEcho(spec, counters);
  const registry = new lib.ToolRegistry().register({ name: 'echo', description: S.ECHO_DESCRIPTION, input: { text: 'the text', turn: 'the turn' }, handler: (input) => echo(input) });
  let turn = 0;
  const provider = () =>
    new rxjs.Observable((subscriber) => {
      const t = ++turn;
      subscriber.next({ type: 'message_start' });
      for (let i = 0; i < spec.deltas; i++) subscriber.next({ type: 'text_delta', text: S.delta(i) });
      const more = S.hasTools(spec, t);
      for (let k = 0; more && k < spec.calls; k++) {
        const input = S.toolInput(t, k);
        const json = JSON.stringify(input);
        subscriber.next({ type: 'tool_call_delta', index: k, id: S.callId(t, k), name: 'echo', argumentsDelta: json.slice(0, 8) });
        subscriber.next({ type: 'tool_call_delta', index: k, argumentsDelta: json.slice(8) });
        subscriber.next({ type: 'tool_call', call: { id: S.callId(t, k), name: 'echo', input } });
      }
      subscriber.next({ type: 'message_end', stopReason: more ? 'toolUse' : 'stop', usage: { inputTokens: 10, outputTokens: 5 } });
      subscriber.complete();
    });
  const events = [];
  lib.runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'hi' }], maxTurns: spec.turns }).subscribe((event) => events.push(event));
  if (events[events.length - 1]?.type !== 'loop_end') throw new Error('the recorded loop did not end');
  return events;
}

function rxRows(events) {
  const REPLAYS = QUICK ? 20 : 200;
  let chunks = 0;
  const bare = () => {
    for (let r = 0; r < REPLAYS; r++) rxjs.from(events).subscribe(() => {});
  };
  const mapped = () => {
    for (let r = 0; r < REPLAYS; r++) rxjs.from(events).pipe(ui.toUiMessageStream()).subscribe(() => chunks++);
  };
  for (let i = 0; i < 5; i++) (bare(), mapped());
  const perEvent = [];
  for (let round = 0; round < ROUNDS; round++) {
    global.gc();
    const order = round % 2 === 0 ? [bare, mapped] : [mapped, bare];
    const times = new Map();
    for (const run of order) {
      const start = cpu();
      run();
      times.set(run, cpu() - start);
    }
    perEvent.push((times.get(mapped) - times.get(bare)) / (REPLAYS * events.length));
  }
  return { events: events.length, chunksPerRun: chunks / ((5 + ROUNDS) * REPLAYS), perEvent: stats(perEvent) };
}

async function aiSdkRows() {
  const ai = await import('ai');
  const aiTest = await import('ai/test');
  const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
  const parts = (t) => {
    const more = S.hasTools(spec, t);
    const out = [{ type: 'stream-start', warnings: [] }, { type: 'text-start', id: 'text-1' }];
    for (let i = 0; i < spec.deltas; i++) out.push({ type: 'text-delta', id: 'text-1', delta: S.delta(i) });
    out.push({ type: 'text-end', id: 'text-1' });
    for (let k = 0; more && k < spec.calls; k++) {
      const id = S.callId(t, k);
      const json = JSON.stringify(S.toolInput(t, k));
      out.push({ type: 'tool-input-start', id, toolName: 'echo' }, { type: 'tool-input-delta', id, delta: json.slice(0, 8) }, { type: 'tool-input-delta', id, delta: json.slice(8) }, { type: 'tool-input-end', id });
      out.push({ type: 'tool-call', toolCallId: id, toolName: 'echo', input: json });
    }
    out.push({ type: 'finish', finishReason: { unified: more ? 'tool-calls' : 'stop', raw: undefined }, usage });
    return out;
  };
  const run = () => {
    let turn = 0;
    const model = new aiTest.MockLanguageModelV4({
      doStream: async () => {
        model.doStreamCalls.length = 0;
        return { stream: aiTest.convertArrayToReadableStream(parts(++turn)) };
      },
    });
    const tools = { echo: ai.tool({ description: S.ECHO_DESCRIPTION, inputSchema: ai.jsonSchema(S.ECHO_JSON_SCHEMA), execute: (input) => input.text }) };
    return ai.streamText({ model, tools, prompt: 'hi', stopWhen: (ai.isStepCount ?? ai.stepCountIs)(spec.turns) });
  };
  // the run's parts, recorded once from fullStream: both measures below replay these same parts
  const recorded = [];
  for await (const part of run().fullStream) recorded.push(part);
  const replay = () =>
    new ReadableStream({
      start(controller) {
        for (const part of recorded) controller.enqueue(part);
        controller.close();
      },
    });
  const REPLAYS = QUICK ? 4 : 20;
  const bareStream = async () => {
    for (let r = 0; r < REPLAYS; r++) for await (const _part of replay());
  };
  let chunks = 0;
  const uiStream = async () => {
    for (let r = 0; r < REPLAYS; r++) for await (const _chunk of ai.toUIMessageStream({ stream: replay() })) chunks++;
  };
  // its translation alone, part by part, as toUIMessageStream calls it: no stream at all
  const bareLoop = () => {
    for (let r = 0; r < REPLAYS; r++) for (const part of recorded) if (part === undefined) throw new Error('no part');
  };
  const chunkLoop = () => {
    for (let r = 0; r < REPLAYS; r++) for (const part of recorded) ai.toUIMessageChunk(part, {});
  };
  for (let i = 0; i < 2; i++) (await bareStream(), await uiStream(), bareLoop(), chunkLoop());
  const streamPerPart = [];
  const chunkPerPart = [];
  for (let round = 0; round < ROUNDS; round++) {
    global.gc();
    const times = {};
    for (const name of round % 2 === 0 ? ['bare', 'ui', 'loop', 'chunk'] : ['chunk', 'loop', 'ui', 'bare']) {
      const start = cpu();
      if (name === 'bare') await bareStream();
      else if (name === 'ui') await uiStream();
      else if (name === 'loop') bareLoop();
      else chunkLoop();
      times[name] = cpu() - start;
    }
    streamPerPart.push((times.ui - times.bare) / (REPLAYS * recorded.length));
    chunkPerPart.push((times.chunk - times.loop) / (REPLAYS * recorded.length));
  }
  const version = require(path.join(__dirname, 'node_modules', 'ai', 'package.json')).version;
  return { version, parts: recorded.length, chunks: chunks / ((2 + ROUNDS) * REPLAYS), streamPerPart: stats(streamPerPart), chunkPerPart: stats(chunkPerPart) };
}

async function main() {
  const events = recordedRun();
  const rx = rxRows(events);
  let aiSdk;
  try {
    aiSdk = await aiSdkRows();
  } catch (error) {
    aiSdk = { error: String(error?.message ?? error) };
  }
  const fmt = (s) => `${s.median.toFixed(3)} µs (${s.min.toFixed(3)} – ${s.max.toFixed(3)})`;
  process.stderr.write(`toUiMessageStream: ${rx.events} events → ${rx.chunksPerRun} chunks a run; ${fmt(rx.perEvent)} an event (target ≤ 2 µs)\n`);
  if (aiSdk.error) process.stderr.write(`AI SDK: ${aiSdk.error}\n`);
  else {
    process.stderr.write(`AI SDK ${aiSdk.version}: ${aiSdk.parts} fullStream parts of streamText → ${aiSdk.chunks} chunks\n`);
    process.stderr.write(`  toUIMessageStream (its ReadableStream over the parts): ${fmt(aiSdk.streamPerPart)} a part\n`);
    process.stderr.write(`  toUIMessageChunk (its translation alone, no stream): ${fmt(aiSdk.chunkPerPart)} a part\n`);
  }
  const strip = (s) => ({ median: s.median, min: s.min, max: s.max, n: s.n });
  process.stdout.write(`BENCH_RESULT ${JSON.stringify({ workload: 'U2', rx: { ...rx, perEvent: strip(rx.perEvent) }, aiSdk: aiSdk.error ? aiSdk : { ...aiSdk, streamPerPart: strip(aiSdk.streamPerPart), chunkPerPart: strip(aiSdk.chunkPerPart) } })}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(1);
});
