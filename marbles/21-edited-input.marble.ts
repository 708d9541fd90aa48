/** H2: the hook rewrites the call's input at frame 5; the tool starts then (`α`) on the new input, which is checked again — the history keeps the model's own call. */
import { map } from 'rxjs';
import { runEventedToolLoop, type ToolCall } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

// write_file writes where its input says: its result names the path it got
const diagram = {
  turn1:         '-s-a---u|',
  edit:          '   --(e|)',
  writeFile:     '     ----(w|)',
  turn2:         '         -----s-t-e|',
  loop:          '1s-a-α-u-(WE2)s-t-e(FL|)',
  turn1Runs:     '^-------!',
  editRuns:      '---^-!',
  writeFileRuns: '-----^---!',
  turn2Runs:     '---------^---------!',
};

const events = { s: start, a: call('write_file', { path: '/etc/notes.txt' }), u: end('toolUse'), t: text('Saved.'), e: end('stop') };
const edits = { e: { action: 'run', input: { path: 'sandbox/notes.txt' } } as const };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  α: 'tool_start write_file {"path":"sandbox/notes.txt"}',
  W: 'tool_result write_file: wrote sandbox/notes.txt',
  E: 'turn_end 1 (toolUse): user, assistant[write_file], toolResult write_file',
  2: 'turn_start 2',
  F: 'turn_end 2 (stop): user, assistant[write_file], toolResult write_file, assistant "Saved."',
  L: 'loop_end stop',
});

scenario('21 an edited input: the tool runs on what the hook gave', ({ cold, expectObservable, expectSubscriptions }) => {
  const turn1 = cold(diagram.turn1, events);
  const edit = cold(diagram.edit, edits);
  const writeFile = cold(diagram.writeFile, { w: 'wrote' });
  const turn2 = cold(diagram.turn2, events);
  const run = runEventedToolLoop({
    provider: marbleProvider(turn1, turn2),
    registry: marbleTools({ write_file: (input) => writeFile.pipe(map((done) => `${done} ${String(input.path)}`)) }),
    messages: [{ role: 'user', content: 'Save my notes.' }],
    beforeToolCall: (_call: ToolCall) => edit,
  });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(edit.subscriptions).toBe(diagram.editRuns);
  expectSubscriptions(writeFile.subscriptions).toBe(diagram.writeFileRuns);
  expectSubscriptions(turn2.subscriptions).toBe(diagram.turn2Runs);
});
