/** H2, R16: with `toolTimeoutMs: 4`, `deploy` waits 8 frames for approval and still runs: its clock starts at `tool_start` (`α`); `hang`, approved at once, times out 4 frames after its own. */
import { runEventedToolLoop, type ToolCall } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

// hang never answers: its line is blank, indented to frame 5 where it is called and starts
const diagram = {
  turn1:        '-s-a-b------u|',
  approval:     '   --------(r|)',
  deploy:       '           --(D|)',
  hang:         '     ',
  turn2:        '             -----s-t-e|',
  loop:         '1s-a-(bβ)B-αu(DE2)s-t-e(FL|)',
  turn1Runs:    '^------------!',
  approvalRuns: '---^-------!',
  deployRuns:   '-----------^-!',
  hangRuns:     '-----^---!',
  turn2Runs:    '-------------^---------!',
};

const events = { s: start, a: call('deploy'), b: call('hang'), u: end('toolUse'), t: text('Deployed; hang timed out.'), e: end('stop') };
const decisions = { r: { action: 'run' } as const };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  β: 'tool_start hang',
  B: 'tool_result hang: error: tool timed out after 4 ms (isError)',
  α: 'tool_start deploy',
  D: 'tool_result deploy: deployed',
  E: 'turn_end 1 (toolUse): user, assistant[deploy,hang], toolResult deploy, toolResult hang',
  2: 'turn_start 2',
  F: 'turn_end 2 (stop): user, assistant[deploy,hang], toolResult deploy, toolResult hang, assistant "Deployed; hang timed out."',
  L: 'loop_end stop',
});

scenario('23 the timeout starts when the tool does, after its approval', ({ cold, expectObservable, expectSubscriptions }) => {
  const turn1 = cold(diagram.turn1, events);
  const approval = cold(diagram.approval, decisions);
  const deploy = cold(diagram.deploy, { D: 'deployed' });
  const hang = cold(diagram.hang);
  const turn2 = cold(diagram.turn2, events);
  const run = runEventedToolLoop({
    provider: marbleProvider(turn1, turn2),
    registry: marbleTools({ deploy, hang }),
    messages: [{ role: 'user', content: 'Deploy.' }],
    beforeToolCall: (toolCall: ToolCall) => (toolCall.name === 'deploy' ? approval : undefined),
    toolTimeoutMs: 4,
  });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(approval.subscriptions).toBe(diagram.approvalRuns);
  expectSubscriptions(deploy.subscriptions).toBe(diagram.deployRuns);
  expectSubscriptions(hang.subscriptions).toBe(diagram.hangRuns);
  expectSubscriptions(turn2.subscriptions).toBe(diagram.turn2Runs);
});
