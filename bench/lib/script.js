'use strict';
// The conversation every contender plays, whatever its native event format: the same fake instant
// model, the same tool, the same counts to check at the end.
//
// A spec: { conversations, turns, deltas (text deltas per turn), calls (tool calls per turn but the
// last), pauseAtTurn?, toolDelayMs?, probe?(turn), sample?() }.
// Turn t < turns streams `deltas` text deltas, then `calls` calls of `echo`, and ends with `toolUse`;
// the last turn streams its deltas and ends with `stop`.

// 1,024 distinct 4-character deltas, made once: a delta is a token-sized string, as from a real model
const POOL = Array.from({ length: 1024 }, (_, i) => `t${String.fromCharCode(97 + (i & 31))}${String.fromCharCode(65 + (i >> 5))} `);
const delta = (i) => POOL[i & 1023];

function turnText(spec) {
  let text = '';
  for (let i = 0; i < spec.deltas; i++) text += delta(i);
  return text;
}

function newCounters() {
  return { model: 0, tools: 0, deltas: 0, chars: 0, ends: 0 };
}

function expected(spec) {
  const c = spec.conversations;
  return {
    model: c * spec.turns,
    tools: c * (spec.turns - 1) * spec.calls,
    deltas: c * spec.turns * spec.deltas,
    chars: c * spec.turns * turnText(spec).length,
    ends: c,
  };
}

/** Throws when a run did not make every model call and tool execution, or lost a delta. */
function checkCounts(spec, counters) {
  const want = expected(spec);
  const wrong = Object.keys(want).filter((key) => counters[key] !== want[key]);
  if (wrong.length > 0) {
    throw new Error(`count check failed: ${wrong.map((key) => `${key} ${counters[key]} (expected ${want[key]})`).join(', ')}`);
  }
}

/** Every fake model calls this once per model call, with the turn number (from 1). */
function modelCall(spec, counters, turn) {
  counters.model++;
  if (spec.probe) spec.probe(turn);
}

/** Whether turn `turn` asks for tools (and so ends with `toolUse`). */
const hasTools = (spec, turn) => turn < spec.turns && spec.calls > 0;

/** The tool input of call `k` of turn `turn`: `echo` returns `text`. */
const toolInput = (turn, k) => ({ text: `ping ${turn}.${k}`, turn });
const callId = (turn, k) => `call_${turn}_${k}`;

/**
 * The `echo` tool's body for one run: synchronous, returns its input's text. With `pauseAtTurn`,
 * the call of that turn returns a Promise that stays pending until `release()`; with `toolDelayMs`,
 * every call is a timer.
 */
function makeEcho(spec, counters) {
  const pending = [];
  const echo = (input) => {
    counters.tools++;
    if (spec.pauseAtTurn !== undefined && input.turn === spec.pauseAtTurn) {
      return new Promise((resolve) => pending.push(() => resolve(input.text)));
    }
    if (spec.toolDelayMs !== undefined) return new Promise((resolve) => setTimeout(resolve, spec.toolDelayMs, input.text));
    return input.text;
  };
  echo.pending = pending;
  echo.release = () => pending.splice(0).forEach((resolve) => resolve());
  return echo;
}

const ECHO_DESCRIPTION = 'Returns its input text';
const ECHO_JSON_SCHEMA = {
  type: 'object',
  properties: { text: { type: 'string' }, turn: { type: 'number' } },
  required: ['text', 'turn'],
  additionalProperties: false,
};

/** What a user's `next` does with each event: deltas and ends counted; `onEnd` gets each loop_end. */
function counting(counters, onEnd) {
  return (event) => {
    if (event.type === 'text_delta') {
      counters.deltas++;
      counters.chars += event.text.length;
    } else if (event.type === 'loop_end') {
      counters.ends++;
      onEnd(event);
    }
  };
}

/** Every event of an Observable loop consumed as a user would: deltas and ends counted; resolves with the last history. */
function consume(events$, counters) {
  return new Promise((resolve, reject) => {
    let final;
    events$.subscribe({ next: counting(counters, (end) => (final = end.messages)), error: reject, complete: () => resolve(final) });
  });
}

module.exports = {
  counting,
  consume,
  POOL,
  delta,
  turnText,
  newCounters,
  expected,
  checkCounts,
  modelCall,
  hasTools,
  toolInput,
  callId,
  makeEcho,
  ECHO_DESCRIPTION,
  ECHO_JSON_SCHEMA,
};

/**
 * Runs `spec.conversations` conversations: one after the other when `spec.sequential` (the timed
 * runs: every contender then has one conversation in flight, whether it is synchronous or not), or
 * all at once (the in-flight heap probe). Resolves to each conversation's final messages.
 */
async function many(spec, startOne) {
  if (!spec.sequential) {
    const runs = [];
    for (let c = 0; c < spec.conversations; c++) runs.push(startOne());
    return Promise.all(runs);
  }
  const finals = [];
  for (let c = 0; c < spec.conversations; c++) finals.push(await startOne());
  return finals;
}

module.exports.many = many;
