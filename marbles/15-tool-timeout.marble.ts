/** R16: with `toolTimeoutMs: 4` (4 frames), a tool still running 4 frames after its `tool_start` is torn down and fails; the quick one is untouched. */
import { runEventedToolLoop } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

// `hang` never answers: its line is blank, indented to frame 8 where it is called and starts (β); it fails 4 frames later, at 12
const diagram = {
  turn1:     '-s-a----b----u|',
  quick:     '   ----(A|)',
  hang:      '        ',
  turn2:     '              -----s-t-e|',
  loop:      '1s-(aα)A(bβ)Bu(E2)-s-t-e(FL|)',
  turn1Runs: '^-------------!',
  quickRuns: '---^---!',
  hangRuns:  '--------^---!',
  turn2Runs: '--------------^---------!',
};

const events = { s: start, a: call('quick'), b: call('hang'), u: end('toolUse'), t: text('hang timed out'), e: end('stop') };
const quickValues = { A: 'fast enough' };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  α: 'tool_start quick',
  β: 'tool_start hang',
  A: 'tool_result quick: fast enough',
  B: 'tool_result hang: error: tool timed out after 4 ms (isError)',
  E: 'turn_end 1 (toolUse): user, assistant[quick,hang], toolResult quick, toolResult hang',
  2: 'turn_start 2',
  F: 'turn_end 2 (stop): user, assistant[quick,hang], toolResult quick, toolResult hang, assistant "hang timed out"',
  L: 'loop_end stop',
});

scenario('15 a tool times out', ({ cold, expectObservable, expectSubscriptions }) => {
  const quick = cold(diagram.quick, quickValues);
  const hang = cold(diagram.hang);
  const turn1 = cold(diagram.turn1, events);
  const turn2 = cold(diagram.turn2, events);
  const run = runEventedToolLoop({ provider: marbleProvider(turn1, turn2), registry: marbleTools({ quick, hang }), messages: [{ role: 'user', content: 'go' }], toolTimeoutMs: 4 });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(quick.subscriptions).toBe(diagram.quickRuns);
  expectSubscriptions(hang.subscriptions).toBe(diagram.hangRuns);
  expectSubscriptions(turn2.subscriptions).toBe(diagram.turn2Runs);
});
