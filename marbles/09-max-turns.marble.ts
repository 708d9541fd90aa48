/** R6, R8: with `maxTurns: 2` and a model that always asks for a tool, the provider is subscribed exactly twice, then `loop_end maxTurns`. */
import { runEventedToolLoop } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

// after turn 2 the provider would replay turn2, and that third subscription would show in turn2Runs
const diagram = {
  turn1:     '-s-a---u|',
  poll1:     '   -----(A|)',
  turn2:     '        -----s-a---u|',
  poll2:     '               -----(B|)',
  loop:      '1s-(aα)u(AE2)s-(aα)u(BFL|)',
  turn1Runs: '^-------!',
  poll1Runs: '---^----!',
  turn2Runs: '--------^-----------!',
  poll2Runs: '---------------^----!',
};

const events = { s: start, a: call('poll'), u: end('toolUse') };
const pollValues = { A: 'pending', B: 'still pending' };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  α: 'tool_start poll',
  A: 'tool_result poll: pending',
  E: 'turn_end 1 (toolUse): user, assistant[poll], toolResult poll',
  2: 'turn_start 2',
  B: 'tool_result poll: still pending',
  F: 'turn_end 2 (toolUse): user, assistant[poll], toolResult poll, assistant[poll], toolResult poll',
  L: 'loop_end maxTurns',
});

scenario('09 maxTurns 2: exactly two provider calls', ({ cold, expectObservable, expectSubscriptions }) => {
  const turn1 = cold(diagram.turn1, events);
  const turn2 = cold(diagram.turn2, events);
  const poll1 = cold(diagram.poll1, pollValues);
  const poll2 = cold(diagram.poll2, pollValues);
  let polls = 0;
  const poll = () => [poll1, poll2][polls++]!; // the n-th call plays the n-th line
  const run = runEventedToolLoop({ provider: marbleProvider(turn1, turn2), registry: marbleTools({ poll }), messages: [{ role: 'user', content: 'wait' }], maxTurns: 2 });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(poll1.subscriptions).toBe(diagram.poll1Runs);
  expectSubscriptions(turn2.subscriptions).toBe(diagram.turn2Runs);
  expectSubscriptions(poll2.subscriptions).toBe(diagram.poll2Runs);
});
