/** R3, R23: in sequential mode the second tool starts (`β`) only when the first has completed, though both were called earlier. */
import { runEventedToolLoop } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

const diagram = {
  turn1:      '-s-a---b-u|',
  first:      '   --------(A|)',
  second:     '           ----(B|)',
  turn2:      '               -----s-t-e|',
  loop:       '1s-(aα)b-u-(Aβ)(BE2)s-t-e(FL|)',
  turn1Runs:  '^---------!',
  firstRuns:  '---^-------!',
  secondRuns: '-----------^---!',
  turn2Runs:  '---------------^---------!',
};

const events = { s: start, a: call('first'), b: call('second'), u: end('toolUse'), t: text('done'), e: end('stop') };
const firstValues = { A: 'one' };
const secondValues = { B: 'two' };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  α: 'tool_start first',
  A: 'tool_result first: one',
  β: 'tool_start second',
  B: 'tool_result second: two',
  E: 'turn_end 1 (toolUse): user, assistant[first,second], toolResult first, toolResult second',
  2: 'turn_start 2',
  F: 'turn_end 2 (stop): user, assistant[first,second], toolResult first, toolResult second, assistant "done"',
  L: 'loop_end stop',
});

scenario('05 sequential tools: one at a time, in call order', ({ cold, expectObservable, expectSubscriptions }) => {
  const first = cold(diagram.first, firstValues);
  const second = cold(diagram.second, secondValues);
  const turn1 = cold(diagram.turn1, events);
  const turn2 = cold(diagram.turn2, events);
  const run = runEventedToolLoop({
    provider: marbleProvider(turn1, turn2),
    registry: marbleTools({ first, second }),
    messages: [{ role: 'user', content: 'go' }],
    toolExecution: 'sequential',
  });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(first.subscriptions).toBe(diagram.firstRuns);
  expectSubscriptions(second.subscriptions).toBe(diagram.secondRuns);
  expectSubscriptions(turn2.subscriptions).toBe(diagram.turn2Runs);
});
