/** R3, R23: with `maxConcurrency: 2`, the third call waits until one of the two running tools completes; its `tool_start` (`γ`) says when it got the slot. */
import { runEventedToolLoop } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

const diagram = {
  turn1:     '-s-a---b---c-u|',
  alpha:     '   ------------------(A|)',
  beta:      '       --------(B|)',
  gamma:     '               ----(C|)',
  turn2:     '                     -----s-t-e|',
  loop:      '1s-(aα)(bβ)c-u-(Bγ)C-(AE2)s-t-e(FL|)',
  turn1Runs: '^-------------!',
  alphaRuns: '---^-----------------!',
  betaRuns:  '-------^-------!',
  gammaRuns: '---------------^---!',
  turn2Runs: '---------------------^---------!',
};

const events = {
  s: start,
  a: call('alpha'),
  b: call('beta'),
  c: call('gamma'),
  u: end('toolUse'),
  t: text('all three'),
  e: end('stop'),
};
const results = { A: 'one', B: 'two', C: 'three' };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  α: 'tool_start alpha',
  β: 'tool_start beta',
  B: 'tool_result beta: two',
  γ: 'tool_start gamma',
  C: 'tool_result gamma: three',
  A: 'tool_result alpha: one',
  E: 'turn_end 1 (toolUse): user, assistant[alpha,beta,gamma], toolResult alpha, toolResult beta, toolResult gamma',
  2: 'turn_start 2',
  F: 'turn_end 2 (stop): user, assistant[alpha,beta,gamma], toolResult alpha, toolResult beta, toolResult gamma, assistant "all three"',
  L: 'loop_end stop',
});

scenario('06 maxConcurrency 2: the third tool waits for a free slot', ({ cold, expectObservable, expectSubscriptions }) => {
  const alpha = cold(diagram.alpha, results);
  const beta = cold(diagram.beta, results);
  const gamma = cold(diagram.gamma, results);
  const turn1 = cold(diagram.turn1, events);
  const turn2 = cold(diagram.turn2, events);
  const run = runEventedToolLoop({
    provider: marbleProvider(turn1, turn2),
    registry: marbleTools({ alpha, beta, gamma }),
    messages: [{ role: 'user', content: 'go' }],
    maxConcurrency: 2,
  });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(alpha.subscriptions).toBe(diagram.alphaRuns);
  expectSubscriptions(beta.subscriptions).toBe(diagram.betaRuns);
  expectSubscriptions(gamma.subscriptions).toBe(diagram.gammaRuns);
  expectSubscriptions(turn2.subscriptions).toBe(diagram.turn2Runs);
});
