/** R14: a `toolProgress` value is a `tool_update` at once — "waiting for approval" shows while the model still streams (compare 13, where plain values lag one behind). */
import { runEventedToolLoop, toolProgress } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

const diagram = {
  turn1:      '-s-a----h-u|',
  deploy:     '   ----w-----(R|)',
  turn2:      '             -----s-t-e|',
  loop:       '1s-(aα)Wh-u--(RE2)s-t-e(FL|)',
  turn1Runs:  '^----------!',
  deployRuns: '---^---------!',
  turn2Runs:  '-------------^---------!',
};

const events = { s: start, a: call('deploy'), h: text('Deploying.'), u: end('toolUse'), t: text('Done.'), e: end('stop') };
const deployValues = { w: toolProgress('waiting for approval'), R: 'deployed' };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  α: 'tool_start deploy',
  W: 'tool_update deploy: waiting for approval',
  R: 'tool_result deploy: deployed',
  E: 'turn_end 1 (toolUse): user, assistant "Deploying."[deploy], toolResult deploy',
  2: 'turn_start 2',
  F: 'turn_end 2 (stop): user, assistant "Deploying."[deploy], toolResult deploy, assistant "Done."',
  L: 'loop_end stop',
});

scenario('17 progress at once: toolProgress shows while the model streams', ({ cold, expectObservable, expectSubscriptions }) => {
  const deploy = cold(diagram.deploy, deployValues);
  const turn1 = cold(diagram.turn1, events);
  const turn2 = cold(diagram.turn2, events);
  const run = runEventedToolLoop({ provider: marbleProvider(turn1, turn2), registry: marbleTools({ deploy }), messages: [{ role: 'user', content: 'ship it' }] });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(deploy.subscriptions).toBe(diagram.deployRuns);
  expectSubscriptions(turn2.subscriptions).toBe(diagram.turn2Runs);
});
