/**
 * L2: three conversations share one limiter (`maxConcurrent: 1`), their prompts at frames 0, 1 and 2: each call
 * waits — `turn_start` and nothing yet — until the call before it has its `message_end` (B's at 8, C's at 13),
 * and each is subscribed to its provider only then; first come, first served.
 */
import { ToolRegistry, conversation, createLimiter, limited } from 'rx-tool-loop';
import { described, end, loopLegend, marbleProvider, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

const diagram = {
  promptsA: 'a|',
  promptsB: '-b|',
  promptsC: '--c|',
  turnA:    '----s-t-e|',
  turnB:    '        -s-t-e|',
  turnC:    '             -s-t-e|',
  loopC:    '--(U1)--------s-t-e(EL|)',
  loopA:    '(U1)s-t-e(EL|)',
  loopB:    '-(U1)----s-t-e(EL|)',
  turnARuns: '^--------!',
  turnBRuns: '--------^-----!',
  turnCRuns: '-------------^-----!',
};

const events = { s: start, t: text('Hello'), e: end('stop') };
const legend = (prompt: string) =>
  loopLegend(events, {
    U: `user_message ${prompt}`,
    1: 'turn_start 1',
    E: `turn_end 1 (stop): user, assistant "Hello"`,
    L: 'loop_end stop',
  });

scenario('33 L2: three conversations on one limiter take turns in arrival order', ({ cold, expectObservable, expectSubscriptions }) => {
  const limiter = createLimiter({ maxConcurrent: 1 });
  const turnA = cold(diagram.turnA, events);
  const turnB = cold(diagram.turnB, events);
  const turnC = cold(diagram.turnC, events);
  const chat = (prompts: string, prompt: string, turn: typeof turnA) =>
    cold(prompts, { [prompt[0]!.toLowerCase()]: prompt }).pipe(conversation({ provider: limited(marbleProvider(turn), limiter), registry: new ToolRegistry() }));
  const a = expectObservable(chat(diagram.promptsA, 'A', turnA).pipe(described));
  const b = expectObservable(chat(diagram.promptsB, 'B', turnB).pipe(described));
  const c = expectObservable(chat(diagram.promptsC, 'C', turnC).pipe(described));
  // C's line first: the loop a reader follows is the last to start and to end (the recorder's round trip and the playground read that one)
  c.toBe(diagram.loopC, legend('C'));
  a.toBe(diagram.loopA, legend('A'));
  b.toBe(diagram.loopB, legend('B'));
  expectSubscriptions(turnA.subscriptions).toBe(diagram.turnARuns);
  expectSubscriptions(turnB.subscriptions).toBe(diagram.turnBRuns);
  expectSubscriptions(turnC.subscriptions).toBe(diagram.turnCRuns);
});

