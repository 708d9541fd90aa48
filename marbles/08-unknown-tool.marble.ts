/** R9, R23: a call to a tool nobody registered gets the result `unknown tool: NAME` (isError) at once, with no `tool_start` (no handler ran); the model sees it on turn 2. */
import { runEventedToolLoop } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

const diagram = {
  turn1:     '-s-a---u|',
  turn2:     '        ----s-t-e|',
  loop:      '1s-(aA)u(E2)s-t-e(FL|)',
  turn1Runs: '^-------!',
  turn2Runs: '--------^--------!',
};

const events = { s: start, a: call('teleport'), u: end('toolUse'), t: text('I cannot teleport.'), e: end('stop') };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  A: 'tool_result teleport: unknown tool: teleport (isError)',
  E: 'turn_end 1 (toolUse): user, assistant[teleport], toolResult teleport',
  2: 'turn_start 2',
  F: 'turn_end 2 (stop): user, assistant[teleport], toolResult teleport, assistant "I cannot teleport."',
  L: 'loop_end stop',
});

scenario('08 an unknown tool', ({ cold, expectObservable, expectSubscriptions }) => {
  const turn1 = cold(diagram.turn1, events);
  const turn2 = cold(diagram.turn2, events);
  const registry = marbleTools({ current_time: '2026-01-01T00:00:00Z' }); // teleport is not in it
  const run = runEventedToolLoop({ provider: marbleProvider(turn1, turn2), registry, messages: [{ role: 'user', content: 'Beam me up' }] });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(turn2.subscriptions).toBe(diagram.turn2Runs);
});
