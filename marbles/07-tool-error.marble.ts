/** R9: a handler that throws and an Observable tool that errors both become `error: MESSAGE` results (isError); the loop goes on. */
import { runEventedToolLoop } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

// `crash` has no line: its handler throws as soon as it is called, so it starts and fails in one frame
const diagram = {
  turn1:     '-s-a----b---u|',
  flaky:     '        -----#',
  turn2:     '             -----s-t-e|',
  loop:      '1s-(aαA)(bβ)u(BE2)s-t-e(FL|)',
  turn1Runs: '^------------!',
  flakyRuns: '--------^----!',
  turn2Runs: '-------------^---------!',
};

const events = {
  s: start,
  a: call('crash'),
  b: call('flaky'),
  u: end('toolUse'),
  t: text('Both tools failed.'),
  e: end('stop'),
};
const loop = loopLegend(events, {
  1: 'turn_start 1',
  α: 'tool_start crash',
  β: 'tool_start flaky',
  A: 'tool_result crash: error: disk full (isError)',
  B: 'tool_result flaky: error: connection reset (isError)',
  E: 'turn_end 1 (toolUse): user, assistant[crash,flaky], toolResult crash, toolResult flaky',
  2: 'turn_start 2',
  F: 'turn_end 2 (stop): user, assistant[crash,flaky], toolResult crash, toolResult flaky, assistant "Both tools failed."',
  L: 'loop_end stop',
});

scenario('07 a tool that throws, a tool that errors: results, and the loop goes on', ({ cold, expectObservable, expectSubscriptions }) => {
  const crash = () => {
    throw new Error('disk full');
  };
  const flaky = cold(diagram.flaky, {}, new Error('connection reset'));
  const turn1 = cold(diagram.turn1, events);
  const turn2 = cold(diagram.turn2, events);
  const run = runEventedToolLoop({ provider: marbleProvider(turn1, turn2), registry: marbleTools({ crash, flaky }), messages: [{ role: 'user', content: 'go' }] });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(flaky.subscriptions).toBe(diagram.flakyRuns);
  expectSubscriptions(turn2.subscriptions).toBe(diagram.turn2Runs);
});
