/** H8: `transfer` waits for a person (`tool_approval`, `W`) while the model streams on and `balance` runs; the decision for its id comes on `decisions` at frame 16, and it starts then (`α`). */
import { type ApprovalAnswer, type ToolCall, runEventedToolLoop } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

// decisions is subscribed when transfer gets its slot; x answers another call and is passed over
const diagram = {
  turn1:         '-s-a---b------h---u|',
  decisions:     '   -----x-------(d|)',
  transfer:      '                -(A|)',
  balance:       '       ------(B|)',
  turn2:         '                   ----s-t-e|',
  loop:          '1s-(aW)(bβ)--Bh-αAu(E2)s-t-e(FL|)',
  turn1Runs:     '^------------------!',
  decisionsRuns: '---^------------!',
  transferRuns:  '----------------^!',
  balanceRuns:   '-------^-----!',
  turn2Runs:     '-------------------^--------!',
};

const events = {
  s: start,
  a: call('transfer', { to: 'bob', amount: '50' }),
  b: call('balance'),
  h: text('Checking your balance while you decide.'),
  u: end('toolUse'),
  t: text('Sent 50 to Bob.'),
  e: end('stop'),
};
const answers: Record<string, ApprovalAnswer> = {
  x: { toolCallId: 'another_call', decision: false },
  d: { toolCallId: 'transfer', decision: true },
};
const results = { A: 'sent', B: '120' };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  W: 'tool_approval transfer {"to":"bob","amount":"50"}',
  β: 'tool_start balance',
  B: 'tool_result balance: 120',
  α: 'tool_start transfer {"to":"bob","amount":"50"}',
  A: 'tool_result transfer: sent',
  E: 'turn_end 1 (toolUse): user, assistant "Checking your balance while you decide."[transfer,balance], toolResult transfer, toolResult balance',
  2: 'turn_start 2',
  F: 'turn_end 2 (stop): user, assistant "Checking your balance while you decide."[transfer,balance], toolResult transfer, toolResult balance, assistant "Sent 50 to Bob."',
  L: 'loop_end stop',
});

scenario('37 a call that waits for a person while the model streams and another tool runs', ({ cold, expectObservable, expectSubscriptions }) => {
  const turn1 = cold(diagram.turn1, events);
  const decisions = cold(diagram.decisions, answers);
  const transfer = cold(diagram.transfer, results);
  const balance = cold(diagram.balance, results);
  const turn2 = cold(diagram.turn2, events);
  const run = runEventedToolLoop({
    provider: marbleProvider(turn1, turn2),
    registry: marbleTools({ transfer, balance }),
    messages: [{ role: 'user', content: 'Send Bob 50, and tell me my balance.' }],
    approvals: { needsApproval: (toolCall: ToolCall) => toolCall.name === 'transfer', decisions },
  });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(decisions.subscriptions).toBe(diagram.decisionsRuns);
  expectSubscriptions(transfer.subscriptions).toBe(diagram.transferRuns);
  expectSubscriptions(balance.subscriptions).toBe(diagram.balanceRuns);
  expectSubscriptions(turn2.subscriptions).toBe(diagram.turn2Runs);
});
