/** R14: every value of an Observable tool but the last is a `tool_update`, emitted when the next value shows it was not the last. */
import { runEventedToolLoop } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

const diagram = {
  turn1:        '-s-a---u|',
  download:     '   ---p-q-(R|)',
  turn2:        '          ------s-t-e|',
  loop:         '1s-(aα)uP-(QRE2)s-t-e(FL|)',
  turn1Runs:    '^-------!',
  downloadRuns: '---^------!',
  turn2Runs:    '----------^----------!',
};

const events = { s: start, a: call('download'), u: end('toolUse'), t: text('Saved.'), e: end('stop') };
const downloadValues = { p: '30%', q: '60%', R: 'saved report.pdf' };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  α: 'tool_start download',
  P: 'tool_update download: 30%',
  Q: 'tool_update download: 60%',
  R: 'tool_result download: saved report.pdf',
  E: 'turn_end 1 (toolUse): user, assistant[download], toolResult download',
  2: 'turn_start 2',
  F: 'turn_end 2 (stop): user, assistant[download], toolResult download, assistant "Saved."',
  L: 'loop_end stop',
});

scenario('13 an Observable tool reports progress', ({ cold, expectObservable, expectSubscriptions }) => {
  const download = cold(diagram.download, downloadValues);
  const turn1 = cold(diagram.turn1, events);
  const turn2 = cold(diagram.turn2, events);
  const run = runEventedToolLoop({ provider: marbleProvider(turn1, turn2), registry: marbleTools({ download }), messages: [{ role: 'user', content: 'get the report' }] });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(download.subscriptions).toBe(diagram.downloadRuns);
  expectSubscriptions(turn2.subscriptions).toBe(diagram.turn2Runs);
});
