'use strict';
// The OpenAI Agents SDK (@openai/agents), only with `--openai-agents`, in a process of its own: its
// AsyncLocalStorage turns on promise hooks for the whole process and slows every other contender.
// The fake model implements the SDK's `Model` interface (getResponse / getStreamedResponse); one
// Agent with the `echo` tool (JSON-schema parameters, strict) per conversation; tracing off.
const S = require('../lib/script.js');

let sdk;

function outputFor(spec, t) {
  const output = [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: S.turnText(spec) }] }];
  if (S.hasTools(spec, t)) {
    for (let k = 0; k < spec.calls; k++) {
      output.push({ type: 'function_call', callId: S.callId(t, k), name: 'echo', status: 'completed', arguments: JSON.stringify(S.toolInput(t, k)) });
    }
  }
  return output;
}

const usage = () => ({ requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 });

function fakeModel(spec, counters) {
  let turn = 0;
  return {
    async getResponse() {
      const t = ++turn;
      S.modelCall(spec, counters, t);
      return { usage: new sdk.Usage(usage()), output: outputFor(spec, t), responseId: `resp_${t}` };
    },
    async *getStreamedResponse() {
      const t = ++turn;
      S.modelCall(spec, counters, t);
      yield { type: 'response_started' };
      for (let i = 0; i < spec.deltas; i++) {
        if (spec.sample && (i & 0xffff) === 0) spec.sample();
        yield { type: 'output_text_delta', delta: S.delta(i) };
      }
      yield { type: 'response_done', response: { id: `resp_${t}`, usage: usage(), output: outputFor(spec, t) } };
    },
  };
}

function agentFor(spec, counters, echo) {
  return new sdk.Agent({
    name: 'bench',
    instructions: 'bench',
    model: fakeModel(spec, counters),
    tools: [
      sdk.tool({
        name: 'echo',
        description: S.ECHO_DESCRIPTION,
        parameters: S.ECHO_JSON_SCHEMA,
        strict: true,
        execute: (input) => echo(typeof input === 'string' ? JSON.parse(input) : input),
      }),
    ],
  });
}

async function load() {
  if (sdk) return;
  sdk = await import('@openai/agents');
  sdk.setTracingDisabled(true);
}

const run = {
  name: 'openai-agents-run',
  label: 'OpenAI Agents SDK run()',
  load,
  run(spec, counters, echo) {
    const text = S.turnText(spec);
    return S.many(spec, async () => {
      const result = await sdk.run(agentFor(spec, counters, echo), 'hi', { maxTurns: spec.turns });
      for (const item of result.newItems) {
        if (item.type === 'message_output_item' && item.rawItem.content?.[0]?.text === text) {
          counters.deltas += spec.deltas;
          counters.chars += text.length;
        }
      }
      counters.ends++;
      return result.history;
    });
  },
};

const stream = {
  name: 'openai-agents-stream',
  label: 'OpenAI Agents SDK run({ stream: true })',
  load,
  run(spec, counters, echo) {
    return S.many(spec, async () => {
      const result = await sdk.run(agentFor(spec, counters, echo), 'hi', { maxTurns: spec.turns, stream: true });
      for await (const event of result) {
        if (event.type === 'raw_model_stream_event' && event.data.type === 'output_text_delta') {
          counters.deltas++;
          counters.chars += event.data.delta.length;
        }
      }
      await result.completed;
      if (result.error) throw result.error;
      counters.ends++;
      return result.history;
    });
  },
};

module.exports = { run, stream, version: () => require('../lib/env.js').versionOf('@openai/agents') };
