/** R2, R6, R7: a turn that asks for no tool is the last one: one provider call, its text in the history, `loop_end stop`. */
import { runEventedToolLoop } from 'rx-tool-loop';
import { described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

const diagram = {
  turn1:     '-s-h-i-e|',
  loop:      '1s-h-i-e(EL|)',
  turn1Runs: '^-------!',
};

const events = { s: start, h: text('Hel'), i: text('lo!'), e: end('stop') };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  E: 'turn_end 1 (stop): user, assistant "Hello!"',
  L: 'loop_end stop',
});

scenario('02 one turn, no tools', ({ cold, expectObservable, expectSubscriptions }) => {
  const turn1 = cold(diagram.turn1, events);
  const run = runEventedToolLoop({ provider: marbleProvider(turn1), registry: marbleTools({}), messages: [{ role: 'user', content: 'hi' }] });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
});
