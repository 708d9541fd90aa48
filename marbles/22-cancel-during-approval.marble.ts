/** H5, R11: `options.signal` aborts while the approval is still pending: the hook is torn down (its signal aborts), the call gets `error: aborted`, the loop ends cleanly. */
import { runEventedToolLoop, type ToolDecision } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { abortsAt, scenario } from './support/scenario.js';

// nobody answers: the approval's line is blank, indented to frame 3 where deploy was called
const diagram = {
  turn1:        '-s-a-h-u|',
  approval:     '   ',
  signal:       '----------!',
  loop:         '1s-a-h-u--(AEL|)',
  turn1Runs:    '^-------!',
  approvalRuns: '---^------!',
};

const events = { s: start, a: call('deploy'), h: text('Waiting for approval.'), u: end('toolUse') };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  A: 'tool_result deploy: error: aborted (isError)',
  E: 'turn_end 1 (aborted: aborted): user, assistant "Waiting for approval."[deploy], toolResult deploy',
  L: 'loop_end aborted',
});

scenario('22 cancelled while the approval is pending', ({ cold, expectObservable, expectSubscriptions }) => {
  const turn1 = cold(diagram.turn1, events);
  const approval = cold<ToolDecision>(diagram.approval);
  const run = runEventedToolLoop({
    provider: marbleProvider(turn1),
    registry: marbleTools({ deploy: 'deployed' }),
    messages: [{ role: 'user', content: 'Deploy.' }],
    beforeToolCall: () => approval,
    signal: abortsAt(diagram.signal),
  });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(approval.subscriptions).toBe(diagram.approvalRuns);
});
