/** H6: `prepareTurn` takes two frames before each provider call (a summary, say): each turn's provider is subscribed two frames after its `turn_start`. */
import { map } from 'rxjs';
import { runEventedToolLoop, type ProviderInput } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

// prepare is asked once per turn: at frame 0 for turn 1, at frame 11 for turn 2
const diagram = {
  prepare:     '--(p|)',
  turn1:       '  -s-a----u|',
  lookup:      '     ----(R|)',
  turn2:       '             ---s-t-e|',
  loop:        '1--s-(aα)Ru(E2)-s-t-e(FL|)',
  prepareRuns: ['^-!', '-----------^-!'],
  turn1Runs:   '--^--------!',
  lookupRuns:  '-----^---!',
  turn2Runs:   '-------------^-------!',
};

const events = { s: start, a: call('lookup'), u: end('toolUse'), t: text('Found it.'), e: end('stop') };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  α: 'tool_start lookup',
  R: 'tool_result lookup: 42',
  E: 'turn_end 1 (toolUse): user, assistant[lookup], toolResult lookup',
  2: 'turn_start 2',
  F: 'turn_end 2 (stop): user, assistant[lookup], toolResult lookup, assistant "Found it."',
  L: 'loop_end stop',
});

scenario('24 prepareTurn delays each provider call by two frames', ({ cold, expectObservable, expectSubscriptions }) => {
  const prepare = cold(diagram.prepare, { p: 'prepared' });
  const turn1 = cold(diagram.turn1, events);
  const lookup = cold(diagram.lookup, { R: '42' });
  const turn2 = cold(diagram.turn2, events);
  const run = runEventedToolLoop({
    provider: marbleProvider(turn1, turn2),
    registry: marbleTools({ lookup }),
    messages: [{ role: 'user', content: 'Look it up.' }],
    prepareTurn: (input: ProviderInput) => prepare.pipe(map(() => input)),
  });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(prepare.subscriptions).toBe(diagram.prepareRuns);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(lookup.subscriptions).toBe(diagram.lookupRuns);
  expectSubscriptions(turn2.subscriptions).toBe(diagram.turn2Runs);
});
