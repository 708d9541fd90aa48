/**
 * L2, L4: a call ends with HTTP 429 and `retry-after` 10 ms (10 frames) at frame 6, after its provider's own retries:
 * the whole limiter pauses until frame 16. B's call, at frame 7, waits though a slot is free (`maxConcurrent: 2`),
 * so that the waiting calls do not storm the API; it is subscribed to its provider at 16.
 */
import { ToolRegistry, conversation, createLimiter, limited } from 'rx-tool-loop';
import type { ProviderEvent } from 'rx-tool-loop';
import { described, end, loopLegend, marbleProvider, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

const diagram = {
  promptsA:  'a|',
  promptsB:  '-------b|',
  turnA:     '----s-(x|)',
  turnB:     '                -s-t-e|',
  loopB:     '-------(U1)------s-t-e(EL|)',
  loopA:     '(U1)s-(xEL|)',
  turnARuns: '^-----!',
  turnBRuns: '----------------^-----!',
};

const rateLimited: ProviderEvent = {
  type: 'message_end',
  stopReason: 'error',
  errorMessage: 'HTTP 429: rate limit reached',
  failure: { kind: 'http', status: 429, retryAfterMs: 10, message: 'HTTP 429: rate limit reached' },
};
const events = { s: start, x: rateLimited, t: text('Hello'), e: end('stop') };
const loopA = loopLegend(events, {
  U: 'user_message Hi from a',
  1: 'turn_start 1',
  E: 'turn_end 1 (error: HTTP 429: rate limit reached): user, assistant',
  L: 'loop_end error',
});
const loopB = loopLegend(events, {
  U: 'user_message Hi from b',
  1: 'turn_start 1',
  E: 'turn_end 1 (stop): user, assistant "Hello"',
  L: 'loop_end stop',
});

scenario('34 L2, L4: a 429 with retry-after pauses the whole limiter', ({ cold, expectObservable, expectSubscriptions }) => {
  const limiter = createLimiter({ maxConcurrent: 2 });
  const turnA = cold(diagram.turnA, events);
  const turnB = cold(diagram.turnB, events);
  const chat = (prompts: string, letter: string, turn: typeof turnA) =>
    cold(prompts, { [letter]: `Hi from ${letter}` }).pipe(conversation({ provider: limited(marbleProvider(turn), limiter), registry: new ToolRegistry() }));
  const a = expectObservable(chat(diagram.promptsA, 'a', turnA).pipe(described));
  const b = expectObservable(chat(diagram.promptsB, 'b', turnB).pipe(described));
  // B's line first: the loop a reader follows is the last to start and to end (the recorder's round trip and the playground read that one)
  b.toBe(diagram.loopB, loopB);
  a.toBe(diagram.loopA, loopA);
  expectSubscriptions(turnA.subscriptions).toBe(diagram.turnARuns);
  expectSubscriptions(turnB.subscriptions).toBe(diagram.turnBRuns);
});
