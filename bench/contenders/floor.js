'use strict';
// The floor: the loop as one would write it by hand with an async generator. The fake instant model
// is a synchronous generator of events (as the rx contenders' provider is a synchronous Observable);
// the loop is an async generator that re-yields them, runs the requested tools (all started at once,
// awaited in call order), appends to one history array and yields turn and loop ends. No
// cancellation, no error handling, no validation: the least work that does the job.
const S = require('../lib/script.js');

function* fakeModel(spec, counters, turn) {
  S.modelCall(spec, counters, turn);
  yield { type: 'message_start' };
  for (let i = 0; i < spec.deltas; i++) {
    if (spec.sample && (i & 0xffff) === 0) spec.sample();
    yield { type: 'text_delta', text: S.delta(i) };
  }
  const more = S.hasTools(spec, turn);
  if (more) for (let k = 0; k < spec.calls; k++) yield { type: 'tool_call', call: { id: S.callId(turn, k), name: 'echo', input: S.toolInput(turn, k) } };
  yield { type: 'message_end', stopReason: more ? 'toolUse' : 'stop' };
}

async function* loop({ model, tools, messages, maxTurns }) {
  const history = messages.slice();
  for (let turn = 1; ; turn++) {
    yield { type: 'turn_start', turn };
    let text = '';
    let stopReason = 'error';
    const calls = [];
    for (const event of model({ messages: history, turn })) {
      yield event;
      if (event.type === 'text_delta') text += event.text;
      else if (event.type === 'tool_call') calls.push(event.call);
      else if (event.type === 'message_end') stopReason = event.stopReason;
    }
    const assistant = { role: 'assistant', content: text, stopReason };
    if (calls.length > 0) assistant.toolCalls = calls;
    history.push(assistant);
    const running = calls.map((call) => tools[call.name](call.input));
    const toolResults = [];
    for (let k = 0; k < calls.length; k++) {
      const content = await running[k];
      const message = { role: 'toolResult', toolCallId: calls[k].id, toolName: calls[k].name, content, isError: false };
      toolResults.push(message);
      history.push(message);
      yield { type: 'tool_result', message };
    }
    yield { type: 'turn_end', turn, assistant, toolResults, messages: history };
    if (stopReason !== 'toolUse' || calls.length === 0 || turn >= maxTurns) {
      yield { type: 'loop_end', reason: turn >= maxTurns && stopReason === 'toolUse' ? 'maxTurns' : stopReason, assistant, messages: history };
      return;
    }
  }
}

async function conversation(spec, counters, echo) {
  const tools = { echo };
  let final;
  const model = ({ turn }) => fakeModel(spec, counters, turn);
  for await (const event of loop({ model, tools, messages: [{ role: 'user', content: 'hi' }], maxTurns: spec.turns })) {
    if (event.type === 'text_delta') {
      counters.deltas++;
      counters.chars += event.text.length;
    } else if (event.type === 'loop_end') {
      counters.ends++;
      final = event.messages;
    }
  }
  return final;
}

module.exports = {
  name: 'floor',
  label: 'hand-written async-generator loop (floor)',
  async load() {},
  run(spec, counters, echo) {
    return S.many(spec, () => conversation(spec, counters, echo));
  },
};
