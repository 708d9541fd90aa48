/** C1, C2 `queue`: a prompt that arrives while a tool runs (frame 8) waits; it joins the history, as `user_message` (`V`), when the first loop has ended, and starts a loop of its own. */
import { conversation } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

// the provider is shared by both loops: its 3rd subscription (turn3) is the 2nd loop's turn 1
const diagram = {
  prompts:     'a-------b|',
  turn1:       '----s-c---u|',
  lookup:      '      ------(R|)',
  turn2:       '            -----s-t-e|',
  turn3:       '                      ------s-w-e|',
  loop:        '(U1)s-(cγ)u-(RE2)s-t-e(FLV1)s-w-e(GL|)',
  promptsRuns: '^--------!',
  turn1Runs:   '^----------!',
  lookupRuns:  '------^-----!',
  turn2Runs:   '------------^---------!',
  turn3Runs:   '----------------------^----------!',
};

const prompts = { a: 'What time is it?', b: 'Thanks!' };
const events = { s: start, c: call('current_time'), u: end('toolUse'), t: text('It is noon.'), w: text('You are welcome.'), e: end('stop') };
const loop = loopLegend(events, {
  U: 'user_message What time is it?',
  1: 'turn_start 1',
  γ: 'tool_start current_time',
  R: 'tool_result current_time: 12:00',
  E: 'turn_end 1 (toolUse): user, assistant[current_time], toolResult current_time',
  2: 'turn_start 2',
  F: 'turn_end 2 (stop): user, assistant[current_time], toolResult current_time, assistant "It is noon."',
  L: 'loop_end stop',
  V: 'user_message Thanks!',
  G: 'turn_end 1 (stop): user, assistant[current_time], toolResult current_time, assistant "It is noon.", user, assistant "You are welcome."',
});

scenario('25 queue: a prompt during a tool waits for the loop to end', ({ cold, expectObservable, expectSubscriptions }) => {
  const input = cold(diagram.prompts, prompts);
  const turn1 = cold(diagram.turn1, events);
  const lookup = cold(diagram.lookup, { R: '12:00' });
  const turn2 = cold(diagram.turn2, events);
  const turn3 = cold(diagram.turn3, events);
  const run = input.pipe(conversation({ provider: marbleProvider(turn1, turn2, turn3), registry: marbleTools({ current_time: lookup }), policy: 'queue' }));
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(input.subscriptions).toBe(diagram.promptsRuns);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(lookup.subscriptions).toBe(diagram.lookupRuns);
  expectSubscriptions(turn2.subscriptions).toBe(diagram.turn2Runs);
  expectSubscriptions(turn3.subscriptions).toBe(diagram.turn3Runs);
});
