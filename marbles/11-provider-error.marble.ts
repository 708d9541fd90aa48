/** R10: the provider errors mid-stream (`#`): the text so far and the running tool are kept, the turn ends `error`, the loop completes (never errors). */
import { runEventedToolLoop } from 'rx-tool-loop';
import { call, described, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

const diagram = {
  turn1:     '-s-h-a-#',
  slow:      '     -----(A|)',
  loop:      '1s-h-(aα)-(AEL|)',
  turn1Runs: '^------!',
  slowRuns:  '-----^----!',
};

const events = { s: start, h: text('Hel'), a: call('slow') };
const slowValues = { A: 'S' };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  α: 'tool_start slow',
  A: 'tool_result slow: S',
  E: 'turn_end 1 (error: provider error: connection reset): user, assistant "Hel"[slow], toolResult slow',
  L: 'loop_end error',
});

scenario('11 the provider errors mid-stream', ({ cold, expectObservable, expectSubscriptions }) => {
  const turn1 = cold(diagram.turn1, events, new Error('connection reset'));
  const slow = cold(diagram.slow, slowValues);
  const run = runEventedToolLoop({ provider: marbleProvider(turn1), registry: marbleTools({ slow }), messages: [{ role: 'user', content: 'go' }] });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(slow.subscriptions).toBe(diagram.slowRuns);
});
