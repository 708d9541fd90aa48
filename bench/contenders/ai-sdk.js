'use strict';
// The Vercel AI SDK (`ai`): `generateText` and `streamText` (consuming `fullStream`) with a
// MockLanguageModelV4 from `ai/test` as the fake model, `convertArrayToReadableStream` for the
// stream (simulateReadableStream sleeps per chunk), the tool declared with `jsonSchema()`, and a
// step-count stop condition (`isStepCount`, called `stepCountIs` before v7).
// The mock records every call's options (the whole prompt) in doGenerateCalls/doStreamCalls; the
// fake model empties those arrays so that the mock's bookkeeping does not count as the SDK's heap.
const S = require('../lib/script.js');

let ai;
let aiTest;

const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

function finishReason(more) {
  return { unified: more ? 'tool-calls' : 'stop', raw: more ? 'tool_calls' : 'stop' };
}

function toolCalls(spec, t) {
  const parts = [];
  for (let k = 0; k < spec.calls; k++) {
    parts.push({ type: 'tool-call', toolCallId: S.callId(t, k), toolName: 'echo', input: JSON.stringify(S.toolInput(t, k)) });
  }
  return parts;
}


function generateModel(spec, counters) {
  let turn = 0;
  const model = new aiTest.MockLanguageModelV4({
    doGenerate: async () => {
      model.doGenerateCalls.length = 0;
      const t = ++turn;
      S.modelCall(spec, counters, t);
      const more = S.hasTools(spec, t);
      let text = '';
      for (let i = 0; i < spec.deltas; i++) text += S.delta(i);
      const content = [{ type: 'text', text }];
      if (more) content.push(...toolCalls(spec, t));
      return { content, finishReason: finishReason(more), usage: USAGE, warnings: [] };
    },
  });
  return model;
}

function* streamParts(spec, t) {
  const more = S.hasTools(spec, t);
  yield { type: 'stream-start', warnings: [] };
  yield { type: 'text-start', id: 'text-1' };
  for (let i = 0; i < spec.deltas; i++) {
    if (spec.sample && (i & 0xffff) === 0) spec.sample();
    yield { type: 'text-delta', id: 'text-1', delta: S.delta(i) };
  }
  yield { type: 'text-end', id: 'text-1' };
  if (more) yield* toolCalls(spec, t);
  yield { type: 'finish', finishReason: finishReason(more), usage: USAGE };
}

/**
 * A short reply (W1) is `convertArrayToReadableStream` of its parts, as the brief asks. A long one
 * (W2) is a pull stream that makes 1,024 parts per pull: Node 20's web streams dequeue with
 * Array#shift, so a stream pre-filled with 1,000,000 parts is quadratic (100 µs per part at 100,000).
 */
function partsStream(spec, t) {
  if (spec.deltas <= 1024) return aiTest.convertArrayToReadableStream([...streamParts(spec, t)]);
  const parts = streamParts(spec, t);
  return new ReadableStream({
    pull(controller) {
      for (let n = 0; n < 1024; n++) {
        const next = parts.next();
        if (next.done) return controller.close();
        controller.enqueue(next.value);
      }
    },
  });
}

function streamModel(spec, counters) {
  let turn = 0;
  const model = new aiTest.MockLanguageModelV4({
    doStream: async () => {
      model.doStreamCalls.length = 0;
      const t = ++turn;
      S.modelCall(spec, counters, t);
      return { stream: partsStream(spec, t) };
    },
  });
  return model;
}

function tools(echo) {
  return {
    echo: ai.tool({ description: S.ECHO_DESCRIPTION, inputSchema: ai.jsonSchema(S.ECHO_JSON_SCHEMA), execute: (input) => echo(input) }),
  };
}

const stopAfter = (turns) => (ai.isStepCount ?? ai.stepCountIs)(turns);

async function load() {
  ai ??= await import('ai');
  aiTest ??= await import('ai/test');
}

const generateText = {
  name: 'ai-generateText',
  label: 'AI SDK generateText',
  load,
  run(spec, counters, echo) {
    const toolSet = tools(echo);
    const text = S.turnText(spec);
    return S.many(spec, async () => {
      const result = await ai.generateText({ model: generateModel(spec, counters), tools: toolSet, prompt: 'hi', stopWhen: stopAfter(spec.turns) });
      // generateText streams nothing: a step's deltas count as delivered when its text is whole
      for (const step of result.steps) {
        if (step.text === text) {
          counters.deltas += spec.deltas;
          counters.chars += text.length;
        }
      }
      counters.ends++;
      return result.response.messages;
    });
  },
};

const streamText = {
  name: 'ai-streamText',
  label: 'AI SDK streamText (fullStream)',
  load,
  run(spec, counters, echo) {
    const toolSet = tools(echo);
    return S.many(spec, async () => {
      const result = ai.streamText({ model: streamModel(spec, counters), tools: toolSet, prompt: 'hi', stopWhen: stopAfter(spec.turns) });
      for await (const part of result.fullStream) {
        if (part.type === 'text-delta') {
          counters.deltas++;
          counters.chars += part.text.length;
        } else if (part.type === 'finish') {
          counters.ends++;
        } else if (part.type === 'error') {
          throw part.error instanceof Error ? part.error : new Error(String(part.error));
        }
      }
      return (await result.response).messages;
    });
  },
};

module.exports = { generateText, streamText, version: () => require('../lib/env.js').versionOf('ai') };
