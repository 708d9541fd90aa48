/** H2: a person denies `rm` at frame 10: its result is `denied: REASON` (isError) — no `tool_start`, the handler never runs — and the model reads it on turn 2. */
import { runEventedToolLoop } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

// `rm` has no line: it never runs (if it did, its result would say "error: rm ran")
const diagram = {
  turn1:        '-s-a---u|',
  decision:     '   -------(n|)',
  turn2:        '          -----s-t-e|',
  loop:         '1s-a---u--(AE2)s-t-e(FL|)',
  turn1Runs:    '^-------!',
  decisionRuns: '---^------!',
  turn2Runs:    '----------^---------!',
};

const events = { s: start, a: call('rm', { path: '/' }), u: end('toolUse'), t: text('I will not delete it.'), e: end('stop') };
const decisions = { n: { action: 'deny', reason: 'not on this machine' } as const };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  A: 'tool_result rm: denied: not on this machine (isError)',
  E: 'turn_end 1 (toolUse): user, assistant[rm], toolResult rm',
  2: 'turn_start 2',
  F: 'turn_end 2 (stop): user, assistant[rm], toolResult rm, assistant "I will not delete it."',
  L: 'loop_end stop',
});

scenario('20 a denial: the handler never runs, the model reads why', ({ cold, expectObservable, expectSubscriptions }) => {
  const turn1 = cold(diagram.turn1, events);
  const decision = cold(diagram.decision, decisions);
  const turn2 = cold(diagram.turn2, events);
  const rm = () => {
    throw new Error('rm ran');
  };
  const run = runEventedToolLoop({
    provider: marbleProvider(turn1, turn2),
    registry: marbleTools({ rm }),
    messages: [{ role: 'user', content: 'Clean up everything.' }],
    beforeToolCall: () => decision,
  });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(decision.subscriptions).toBe(diagram.decisionRuns);
  expectSubscriptions(turn2.subscriptions).toBe(diagram.turn2Runs);
});
