/** R6, R7: a tool that returns `{ content, terminate: true }` ends the loop after its turn: `loop_end terminated`, no turn 2. */
import { runEventedToolLoop } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

const diagram = {
  turn1:      '-s-a---u|',
  finish:     '   -----(A|)',
  loop:       '1s-(aα)u(AEL|)',
  turn1Runs:  '^-------!',
  finishRuns: '---^----!',
};

const events = { s: start, a: call('finish'), u: end('toolUse') };
const finishValues = { A: { content: 'bye', terminate: true } };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  α: 'tool_start finish',
  A: 'tool_result finish: bye',
  E: 'turn_end 1 (toolUse): user, assistant[finish], toolResult finish',
  L: 'loop_end terminated',
});

scenario('10 a tool asks to terminate', ({ cold, expectObservable, expectSubscriptions }) => {
  const turn1 = cold(diagram.turn1, events);
  const finish = cold(diagram.finish, finishValues);
  const run = runEventedToolLoop({ provider: marbleProvider(turn1), registry: marbleTools({ finish }), messages: [{ role: 'user', content: 'stop when done' }] });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(finish.subscriptions).toBe(diagram.finishRuns);
});
