/** R3, R4, R5: two tools run at once and finish out of order: `tool_result`s in completion order, the history in call order. */
import { runEventedToolLoop } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

const diagram = {
  turn1:     '-s-a---b---u|',
  slow:      '   ------------(A|)',
  fast:      '       ------(B|)',
  turn2:     '               -----s-t-e|',
  loop:      '1s-(aα)(bβ)u-B-(AE2)s-t-e(FL|)',
  turn1Runs: '^-----------!',
  slowRuns:  '---^-----------!',
  fastRuns:  '-------^-----!',
  turn2Runs: '---------------^---------!',
};

const events = { s: start, a: call('slow'), b: call('fast'), u: end('toolUse'), t: text('S and F'), e: end('stop') };
const slowValues = { A: 'S' };
const fastValues = { B: 'F' };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  α: 'tool_start slow',
  β: 'tool_start fast',
  B: 'tool_result fast: F',
  A: 'tool_result slow: S',
  E: 'turn_end 1 (toolUse): user, assistant[slow,fast], toolResult slow, toolResult fast',
  2: 'turn_start 2',
  F: 'turn_end 2 (stop): user, assistant[slow,fast], toolResult slow, toolResult fast, assistant "S and F"',
  L: 'loop_end stop',
});

scenario('04 two parallel tools finish out of order', ({ cold, expectObservable, expectSubscriptions }) => {
  const slow = cold(diagram.slow, slowValues);
  const fast = cold(diagram.fast, fastValues);
  const turn1 = cold(diagram.turn1, events);
  const turn2 = cold(diagram.turn2, events);
  const run = runEventedToolLoop({ provider: marbleProvider(turn1, turn2), registry: marbleTools({ slow, fast }), messages: [{ role: 'user', content: 'go' }] });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(slow.subscriptions).toBe(diagram.slowRuns);
  expectSubscriptions(fast.subscriptions).toBe(diagram.fastRuns);
  expectSubscriptions(turn2.subscriptions).toBe(diagram.turn2Runs);
});
