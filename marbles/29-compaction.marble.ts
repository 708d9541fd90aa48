/**
 * S5: a compaction turn. The history is over `maxTokens`, so before the model's call `compactWhen` asks for a
 * summary of the oldest messages (three frames); the model sees the summary and the newest messages — cut
 * before `assistant[read]`, never between that call and its result — while `turn_end` keeps the whole history.
 * (A loop unsubscribed while the summary is on its way unsubscribes the summary call: spec/sessions/compact-when.spec.ts.)
 */
import { runEventedToolLoop, type AgentMessage } from 'rx-tool-loop';
import { compactWhen } from 'rx-tool-loop/sessions';
import { described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

const diagram = {
  summary:     '---(S|)',
  turn1:       '   -s-t-e|',
  loop:        '1---s-t-e(FL|)',
  summaryRuns: '^--!',
  turn1Runs:   '---^-----!',
};

// about 72 tokens (chars/4): over maxTokens 60; keeping 50 would start at the result, so the cut moves back to its call
const history: AgentMessage[] = [
  { role: 'user', content: 'Read the log.' },
  { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [{ id: 'read', name: 'read', input: {} }] },
  { role: 'toolResult', toolCallId: 'read', toolName: 'read', content: 'L'.repeat(200), isError: false },
  { role: 'assistant', content: 'The log is fine.', stopReason: 'stop' },
  { role: 'user', content: 'Anything else?' },
];

const events = { s: start, t: text('Nothing.'), e: end('stop') };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  F: 'turn_end 1 (stop): user, assistant[read], toolResult read, assistant "The log is fine.", user, assistant "Nothing."',
  L: 'loop_end stop',
});

scenario('29 compaction: the model sees a summary and the newest messages, never a result without its call; turn_end keeps the whole history', ({ cold, expectObservable, expectSubscriptions }) => {
  const summary = cold(diagram.summary, { S: 'The user asked to read the log.' });
  const turn1 = cold(diagram.turn1, events);
  const run = runEventedToolLoop({
    provider: marbleProvider(turn1),
    registry: marbleTools({ read: 'L' }),
    messages: history,
    prepareTurn: compactWhen({ maxTokens: 60, keepRecentTokens: 50, summarize: () => summary }),
  });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(summary.subscriptions).toBe(diagram.summaryRuns);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
});
