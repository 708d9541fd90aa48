/** s04, the series' demo: the provider only *requests* `current_time`; the loop runs it, and turn 2 answers from its result (R2, R3, R4). */
import { runEventedToolLoop } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

const diagram = {
  turn1:           '-s-c----u|',
  currentTime:     '   (R|)',
  turn2:           '         ----s-t-e|',
  loop:            '1s-(cγR)u(E2)s-t-e(FL|)',
  turn1Runs:       '^--------!',
  currentTimeRuns: '---(^!)',
  turn2Runs:       '---------^--------!',
};

const events = {
  s: start,
  c: call('current_time'),
  u: end('toolUse'),
  t: text('工具结果是：2026-01-01T00:00:00Z'),
  e: end('stop'),
};
const currentTimeValues = { R: '2026-01-01T00:00:00Z' };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  γ: 'tool_start current_time',
  R: 'tool_result current_time: 2026-01-01T00:00:00Z',
  E: 'turn_end 1 (toolUse): user, assistant[current_time], toolResult current_time',
  2: 'turn_start 2',
  F: 'turn_end 2 (stop): user, assistant[current_time], toolResult current_time, assistant "工具结果是：2026-01-01T00:00:00Z"',
  L: 'loop_end stop',
});

scenario('01 s04: 现在几点？', ({ cold, expectObservable, expectSubscriptions }) => {
  const currentTime = cold(diagram.currentTime, currentTimeValues);
  const turn1 = cold(diagram.turn1, events);
  const turn2 = cold(diagram.turn2, events);
  const registry = marbleTools({ current_time: currentTime });
  const run = runEventedToolLoop({ provider: marbleProvider(turn1, turn2), registry, messages: [{ role: 'user', content: '现在几点？' }] });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(currentTime.subscriptions).toBe(diagram.currentTimeRuns);
  expectSubscriptions(turn2.subscriptions).toBe(diagram.turn2Runs);
});
