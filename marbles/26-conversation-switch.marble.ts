/** C2 `switch`: two prompts arrive in one frame while a tool runs: the loop is aborted as `signal` would (its turn and `error: aborted` result stay in the history), both prompts join it, one loop runs on. */
import { conversation } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

// the search never answers: its line is blank, indented to frame 6 where it starts; turn1's h never comes
const diagram = {
  prompts:     'a---------(bc|)',
  turn1:       '----s-c-----h',
  search:      '      ',
  turn2:       '          --------s-t-e|',
  loop:        '(U1)s-(cγ)(RELVW1)s-t-e(FM|)',
  promptsRuns: '^---------!',
  turn1Runs:   '^---------!',
  searchRuns:  '------^---!',
  turn2Runs:   '----------^------------!',
};

const prompts = { a: 'Search the logs.', b: 'Stop.', c: 'Just count the errors.' };
const events = { s: start, c: call('search'), h: text('Searching'), t: text('3 errors.'), e: end('stop') };
const loop = loopLegend(events, {
  U: 'user_message Search the logs.',
  1: 'turn_start 1',
  γ: 'tool_start search',
  R: 'tool_result search: error: aborted (isError)',
  E: 'turn_end 1 (aborted: aborted): user, assistant[search], toolResult search',
  L: 'loop_end aborted',
  V: 'user_message Stop.',
  W: 'user_message Just count the errors.',
  F: 'turn_end 1 (stop): user, assistant[search], toolResult search, user, user, assistant "3 errors."',
  M: 'loop_end stop',
});

scenario('26 switch: prompts during a tool abort the loop; every prompt stays in the history, the last runs on', ({ cold, expectObservable, expectSubscriptions }) => {
  const input = cold(diagram.prompts, prompts);
  const turn1 = cold(diagram.turn1, events);
  const search = cold(diagram.search);
  const turn2 = cold(diagram.turn2, events);
  const run = input.pipe(conversation({ provider: marbleProvider(turn1, turn2), registry: marbleTools({ search }), policy: 'switch' }));
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(input.subscriptions).toBe(diagram.promptsRuns);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(search.subscriptions).toBe(diagram.searchRuns);
  expectSubscriptions(turn2.subscriptions).toBe(diagram.turn2Runs);
});
