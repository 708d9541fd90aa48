/** C2 `steer`: a prompt that arrives while a tool runs (frame 8) joins the running loop at its next turn boundary: its `user_message` (`V`) comes after turn 1's `turn_end` and before turn 2, whose provider call sees it. */
import { conversation } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

const diagram = {
  prompts:     'a-------b|',
  turn1:       '----s-c---u|',
  lookup:      '      ------(R|)',
  turn2:       '            ------s-t-e|',
  loop:        '(U1)s-(cγ)u-(REV2)s-t-e(FL|)',
  promptsRuns: '^--------!',
  turn1Runs:   '^----------!',
  lookupRuns:  '------^-----!',
  turn2Runs:   '------------^----------!',
};

const prompts = { a: 'Deploy it.', b: 'Use the staging cluster.' };
const events = { s: start, c: call('deploy'), u: end('toolUse'), t: text('Redeploying to staging.'), e: end('stop') };
const loop = loopLegend(events, {
  U: 'user_message Deploy it.',
  1: 'turn_start 1',
  γ: 'tool_start deploy',
  R: 'tool_result deploy: deployed to prod',
  E: 'turn_end 1 (toolUse): user, assistant[deploy], toolResult deploy',
  V: 'user_message Use the staging cluster.',
  2: 'turn_start 2',
  F: 'turn_end 2 (stop): user, assistant[deploy], toolResult deploy, user, assistant "Redeploying to staging."',
  L: 'loop_end stop',
});

scenario('27 steer: a prompt during a tool joins the loop at the next turn boundary', ({ cold, expectObservable, expectSubscriptions }) => {
  const input = cold(diagram.prompts, prompts);
  const turn1 = cold(diagram.turn1, events);
  const lookup = cold(diagram.lookup, { R: 'deployed to prod' });
  const turn2 = cold(diagram.turn2, events);
  const run = input.pipe(conversation({ provider: marbleProvider(turn1, turn2), registry: marbleTools({ deploy: lookup }), policy: 'steer' }));
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(input.subscriptions).toBe(diagram.promptsRuns);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(lookup.subscriptions).toBe(diagram.lookupRuns);
  expectSubscriptions(turn2.subscriptions).toBe(diagram.turn2Runs);
});
