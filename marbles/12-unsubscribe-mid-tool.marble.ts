/** R11: unsubscribing while the provider streams and a tool runs tears both down at that frame; nothing more is emitted. */
import { runEventedToolLoop } from 'rx-tool-loop';
import { call, described, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

// `search` never answers: its line is blank, indented to frame 3 where it is called and starts
const diagram = {
  turn1:      '-s-a---h',
  search:     '   ',
  subscribed: '^-------!',
  loop:       '1s-(aα)h',
  turn1Runs:  '^-------!',
  searchRuns: '---^----!',
};

const events = { s: start, a: call('search'), h: text('Searching') };
const loop = loopLegend(events, { 1: 'turn_start 1', α: 'tool_start search' });

scenario('12 unsubscribe while a tool runs', ({ cold, expectObservable, expectSubscriptions }) => {
  const turn1 = cold(diagram.turn1, events);
  const search = cold(diagram.search);
  const run = runEventedToolLoop({ provider: marbleProvider(turn1), registry: marbleTools({ search }), messages: [{ role: 'user', content: 'find it' }] });
  expectObservable(run.pipe(described), diagram.subscribed).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(search.subscriptions).toBe(diagram.searchRuns);
});
