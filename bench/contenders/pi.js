'use strict';
// Pi agent core (@mariozechner/pi-agent-core), driven without network: a scripted stream function
// (the `streamFn` argument) plays the fake model as pi-ai's AssistantMessageEventStream, the way
// pi-ai's providers do (one partial message, updated in place, carried by every event).
// Two entry points: `runAgentLoop` (callback `emit`) and `agentLoop` (EventStream, `for await`).
const S = require('../lib/script.js');

let core; // @mariozechner/pi-agent-core
let ai; // @mariozechner/pi-ai

const MODEL = {
  id: 'fake',
  name: 'fake instant model',
  api: 'fake',
  provider: 'fake',
  baseUrl: 'http://localhost.invalid',
  reasoning: false,
  input: ['text'],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 1_000_000,
  maxTokens: 100_000,
};

const usage = () => ({
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});

function* modelEvents(spec, t) {
  const partial = { role: 'assistant', content: [], api: MODEL.api, provider: MODEL.provider, model: MODEL.id, usage: usage(), stopReason: 'stop', timestamp: Date.now() };
  yield { type: 'start', partial };
  const block = { type: 'text', text: '' };
  partial.content.push(block);
  yield { type: 'text_start', contentIndex: 0, partial };
  for (let i = 0; i < spec.deltas; i++) {
    if (spec.sample && (i & 0xffff) === 0) spec.sample();
    const delta = S.delta(i);
    block.text += delta;
    yield { type: 'text_delta', contentIndex: 0, delta, partial };
  }
  yield { type: 'text_end', contentIndex: 0, content: block.text, partial };
  const more = S.hasTools(spec, t);
  if (more) {
    for (let k = 0; k < spec.calls; k++) {
      const toolCall = { type: 'toolCall', id: S.callId(t, k), name: 'echo', arguments: S.toolInput(t, k) };
      const contentIndex = partial.content.push(toolCall) - 1;
      yield { type: 'toolcall_start', contentIndex, partial };
      yield { type: 'toolcall_end', contentIndex, toolCall, partial };
    }
  }
  partial.stopReason = more ? 'toolUse' : 'stop';
  yield { type: 'done', reason: partial.stopReason, message: partial };
}

/**
 * Pushes a reply into the stream at once when it is short (W1: a dozen events). A long one (W2)
 * goes in chunks of 1,024 events, one chunk per macrotask, as a network stream arrives: the loop
 * drains the stream between chunks. (Pushing 1,000,000 events before the loop reads any makes
 * EventStream's queue.shift() quadratic: 80,000 deltas then take 3.7 s.)
 */
function fakeStreamFn(spec, counters) {
  let turn = 0;
  return () => {
    const t = ++turn;
    S.modelCall(spec, counters, t);
    const stream = ai.createAssistantMessageEventStream();
    const events = modelEvents(spec, t);
    const pump = () => {
      for (let n = 0; n < 1024; n++) {
        const next = events.next();
        if (next.done) return;
        stream.push(next.value);
      }
      setImmediate(pump);
    };
    pump();
    return stream;
  };
}

function echoTool(echo) {
  const wrap = (text) => ({ content: [{ type: 'text', text }], details: {} });
  return {
    name: 'echo',
    label: 'echo',
    description: S.ECHO_DESCRIPTION,
    parameters: ai.Type.Object({ text: ai.Type.String(), turn: ai.Type.Number() }),
    // synchronous where the tool is: the loop awaits whatever execute returns
    execute: (_id, params) => {
      const out = echo(params);
      return typeof out === 'string' ? wrap(out) : out.then(wrap);
    },
  };
}

function onEvent(counters) {
  return (event) => {
    if (event.type === 'message_update' && event.assistantMessageEvent.type === 'text_delta') {
      counters.deltas++;
      counters.chars += event.assistantMessageEvent.delta.length;
    } else if (event.type === 'agent_end') {
      counters.ends++;
    }
  };
}

const config = { model: MODEL, convertToLlm: (messages) => messages, toolExecution: 'parallel' };
const prompt = () => [{ role: 'user', content: 'hi', timestamp: Date.now() }];

function runMany(spec, counters, echo, one) {
  const context = { systemPrompt: '', messages: [], tools: [echoTool(echo)] };
  return S.many(spec, () => one(context, fakeStreamFn(spec, counters)));
}

async function load() {
  core ??= await import('@mariozechner/pi-agent-core');
  ai ??= await import('@mariozechner/pi-ai');
}

const runAgentLoop = {
  name: 'pi-runAgentLoop',
  label: 'Pi agent core runAgentLoop (callback)',
  load,
  run(spec, counters, echo) {
    const emit = onEvent(counters);
    return runMany(spec, counters, echo, (context, streamFn) => core.runAgentLoop(prompt(), context, config, emit, undefined, streamFn));
  },
};

const agentLoop = {
  name: 'pi-agentLoop',
  label: 'Pi agent core agentLoop (EventStream)',
  load,
  run(spec, counters, echo) {
    const handle = onEvent(counters);
    return runMany(spec, counters, echo, async (context, streamFn) => {
      const stream = core.agentLoop(prompt(), context, config, undefined, streamFn);
      for await (const event of stream) handle(event);
      return stream.result();
    });
  },
};

module.exports = { runAgentLoop, agentLoop, version: () => require('../lib/env.js').versionOf('@mariozechner/pi-agent-core') };
