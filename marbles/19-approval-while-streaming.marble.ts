/** H1, H2: `deploy` waits for a person's approval while the model streams on and `status` runs; approved at frame 9, it starts then (`α`), not at its call. */
import { runEventedToolLoop, type ToolCall } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

// only deploy asks for approval: its line is the person's answer, subscribed when the call arrives
const diagram = {
  turn1:        '-s-a-b--------h---u|',
  approval:     '   ------(r|)',
  deploy:       '         -------(A|)',
  status:       '     ------(B|)',
  turn2:        '                   ----s-t-e|',
  loop:         '1s-a-(bβ)α-B--h-A-u(E2)s-t-e(FL|)',
  turn1Runs:    '^------------------!',
  approvalRuns: '---^-----!',
  deployRuns:   '---------^------!',
  statusRuns:   '-----^-----!',
  turn2Runs:    '-------------------^--------!',
};

const events = {
  s: start,
  a: call('deploy', { env: 'prod' }),
  b: call('status'),
  h: text('Waiting for your approval.'),
  u: end('toolUse'),
  t: text('Deployed.'),
  e: end('stop'),
};
const decisions = { r: { action: 'run' } as const };
const results = { A: 'deployed v42', B: 'all green' };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  β: 'tool_start status',
  α: 'tool_start deploy {"env":"prod"}',
  B: 'tool_result status: all green',
  A: 'tool_result deploy: deployed v42',
  E: 'turn_end 1 (toolUse): user, assistant "Waiting for your approval."[deploy,status], toolResult deploy, toolResult status',
  2: 'turn_start 2',
  F: 'turn_end 2 (stop): user, assistant "Waiting for your approval."[deploy,status], toolResult deploy, toolResult status, assistant "Deployed."',
  L: 'loop_end stop',
});

scenario('19 an approval that arrives while the model streams and another tool runs', ({ cold, expectObservable, expectSubscriptions }) => {
  const turn1 = cold(diagram.turn1, events);
  const approval = cold(diagram.approval, decisions);
  const deploy = cold(diagram.deploy, results);
  const status = cold(diagram.status, results);
  const turn2 = cold(diagram.turn2, events);
  const run = runEventedToolLoop({
    provider: marbleProvider(turn1, turn2),
    registry: marbleTools({ deploy, status }),
    messages: [{ role: 'user', content: 'Deploy, and tell me the status.' }],
    beforeToolCall: (toolCall: ToolCall) => (toolCall.name === 'deploy' ? approval : undefined),
  });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(approval.subscriptions).toBe(diagram.approvalRuns);
  expectSubscriptions(deploy.subscriptions).toBe(diagram.deployRuns);
  expectSubscriptions(status.subscriptions).toBe(diagram.statusRuns);
  expectSubscriptions(turn2.subscriptions).toBe(diagram.turn2Runs);
});
