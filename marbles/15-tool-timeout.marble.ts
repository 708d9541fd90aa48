/** R16: with `toolTimeoutMs: 4` (4 frames), a tool still running 4 frames after it started is torn down and fails; the quick one is untouched. */
import { runEventedToolLoop } from '../src/index.js';
import { call, described, echo, end, scenario, start, text, tools, turns, user } from './support/scenario.js';

// `hang` never answers: its subscription line, hangRuns, is its diagram
const diagram = {
  turn1:     '-s-a-b-u|',
  quick:     '   ---(A|)',
  turn2:     '         -----s-t-e|',
  loop:      '1s-a-bAu-(BE2)s-t-e(FL|)',
  quickRuns: '---^--!',
  hangRuns:  '-----^---!',
};

const events = { s: start, a: call('quick'), b: call('hang'), u: end('toolUse'), t: text('hang timed out'), e: end('stop') };
const quickValues = { A: 'fast enough' };
const loop = {
  ...echo(events),
  1: 'turn_start 1',
  A: 'tool_result quick: fast enough',
  B: 'tool_result hang: error: tool timed out after 4 ms (isError)',
  E: 'turn_end 1 (toolUse): user, assistant[quick,hang], toolResult quick, toolResult hang',
  2: 'turn_start 2',
  F: 'turn_end 2 (stop): user, assistant[quick,hang], toolResult quick, toolResult hang, assistant "hang timed out"',
  L: 'loop_end stop',
};

scenario('15 a tool times out', ({ cold, expectObservable, expectSubscriptions }) => {
  const quick = cold(diagram.quick, quickValues);
  const hang = cold('');
  const provider = turns(cold(diagram.turn1, events), cold(diagram.turn2, events));
  const run = runEventedToolLoop({ provider, registry: tools({ quick, hang }), messages: [user('go')], toolTimeoutMs: 4 });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(quick.subscriptions).toBe(diagram.quickRuns);
  expectSubscriptions(hang.subscriptions).toBe(diagram.hangRuns);
});
