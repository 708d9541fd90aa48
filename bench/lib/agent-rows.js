'use strict';
// W9's rows (workload.js W9 and agent-tools.js): W1's conversation with its `echo` tool changed, one way a row.
// W9's target splits an agent tool's run in three: the inner loop it runs (`alone`: the plain echo runs the same
// one-turn loop to its end, nothing forwarded), the forwarding any Observable tool pays (`progress`: as many
// progress values as that loop has events, then the result), and what is left, agentTool's own cost.
//
//   loop            W1's loop, `echo` a plain tool
//   alone           the plain echo also runs a one-turn inner loop of the same fake model to its end, its events dropped
//   alone-signal    the same, the inner loop given the call's `context.signal` (as an agent tool's is in the README)
//   progress        echo an Observable tool of 10 `toolProgress` values, then its result
//   none            echo an `agentTool` of that one-turn loop, its 10 events forwarded, no signal given
//   signal          the same, `signal: context.signal` as the README wires it
const { rxjs } = require('./env.js');
const { fakeProvider } = require('./rx-provider.js');
const S = require('./script.js');

const ROWS = ['loop', 'alone', 'alone-signal', 'progress', 'none', 'signal'];
// what the progress row's tool sends: as many updates as a one-turn inner loop of 5 deltas has events
// (turn_start, message_start, 5 text_delta, message_end, turn_end, loop_end), each a string as agentTool's are
const UPDATES = ['turn_start 1', 'message_start', 'tα ', 'tα tβ ', 'tα tβ tγ ', 'tα tβ tγ tδ ', 'tα tβ tγ tδ tε ', 'message_end stop', 'turn_end 1', 'loop_end stop'];

/**
 * The registry of `row` for one run, over `lib` (a build of the library); `innerCounters.deltas` counts the inner
 * deltas each row makes (the outer subscriber counts the forwarded ones). Undefined for a row the build cannot
 * make (no agentTool, no toolProgress).
 */
function echoRegistry(lib, row, echo, innerCounters, deltas) {
  if (!ROWS.includes(row)) throw new Error(`bench: unknown W9 row "${row}" (have: ${ROWS.join(', ')})`);
  if (deltas !== 5) throw new Error(`bench: the W9 rows are made for 5 deltas a turn (got ${deltas})`); // UPDATES
  const echoSpec = { name: 'echo', description: S.ECHO_DESCRIPTION, input: { text: 'the text to return', turn: 'the turn number' } };
  const inner = { conversations: 1, turns: 1, deltas, calls: 0 };
  const none = new lib.ToolRegistry();
  const innerLoop = (text, signal) =>
    lib.runEventedToolLoop({ provider: fakeProvider(inner, innerCounters), registry: none, messages: [{ role: 'user', content: text }], ...(signal ? { signal } : {}) });
  const runAlone = (input, signal) => {
    const text = echo(input);
    innerLoop(input.text, signal).subscribe({ next: (event) => event.type === 'text_delta' && innerCounters.deltas++ });
    return text;
  };
  const plain = {
    loop: (input) => echo(input),
    alone: (input) => runAlone(input, undefined),
    'alone-signal': (input, context) => runAlone(input, context.signal),
    progress:
      typeof lib.toolProgress === 'function' &&
      ((input) =>
        new rxjs.Observable((subscriber) => {
          const text = echo(input);
          for (const update of UPDATES) subscriber.next(lib.toolProgress(update));
          innerCounters.deltas += deltas; // as the forwarded deltas of an agent tool are counted
          subscriber.next(text);
          subscriber.complete();
        })),
  };
  if (row in plain) return plain[row] ? new lib.ToolRegistry().register({ ...echoSpec, handler: plain[row] }) : undefined;
  if (typeof lib.agentTool !== 'function') return undefined; // a build before agent tools
  const agent = (input, context) => {
    echo(input); // counts the call, as W1's echo does
    return innerLoop(input.text, row === 'signal' ? context.signal : undefined);
  };
  return new lib.ToolRegistry().register(lib.agentTool({ ...echoSpec, agent }));
}

/**
 * Per run of `calls` calls, given each row's time of the same round (ms): the parts of an agent tool's run, µs per
 * call. `inner` is the one-turn loop alone (its row over W1's loop), `forwarding` the Observable tool of progress
 * values over W1's loop, `own` what the agent tool adds beyond both: agent − inner − forwarding − loop, and `share`
 * that over inner + forwarding (W9's target: at most 10%).
 */
function ownCost({ loop, alone, progress, agent }, calls) {
  const perCall = (ms) => (ms * 1000) / calls;
  const inner = perCall(alone - loop);
  const forwarding = perCall(progress - loop);
  const own = perCall(agent - loop) - inner - forwarding;
  return { inner, forwarding, agent: perCall(agent - loop), own, share: own / (inner + forwarding) };
}

module.exports = { ROWS, UPDATES, echoRegistry, ownCost };
