/** R11: `options.signal` aborts mid-tool: provider and tool are torn down, yet the loop still ends cleanly with `aborted`. */
import { runEventedToolLoop } from 'rx-tool-loop';
import { call, described, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { abortsAt, scenario } from './support/scenario.js';

// the same turn as in 12, but aborted through the signal instead of unsubscribed
const diagram = {
  turn1:      '-s-a---h',
  search:     '   ',
  signal:     '--------!',
  loop:       '1s-(aα)h(AEL|)',
  turn1Runs:  '^-------!',
  searchRuns: '---^----!',
};

const events = { s: start, a: call('search'), h: text('Searching') };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  α: 'tool_start search',
  A: 'tool_result search: error: aborted (isError)',
  E: 'turn_end 1 (aborted: aborted): user, assistant "Searching"[search], toolResult search',
  L: 'loop_end aborted',
});

scenario('14 options.signal aborts while a tool runs', ({ cold, expectObservable, expectSubscriptions }) => {
  const turn1 = cold(diagram.turn1, events);
  const search = cold(diagram.search);
  const signal = abortsAt(diagram.signal);
  const run = runEventedToolLoop({ provider: marbleProvider(turn1), registry: marbleTools({ search }), messages: [{ role: 'user', content: 'find it' }], signal });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(search.subscriptions).toBe(diagram.searchRuns);
});
