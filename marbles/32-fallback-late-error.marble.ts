/** L1: an error after the first word is the reply's: the text so far is kept, the backup is never asked, nothing is said twice. */
import { ToolRegistry, runEventedToolLoop, withFallback } from 'rx-tool-loop';
import type { ProviderEvent } from 'rx-tool-loop';
import { described, loopLegend, marbleProvider, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

const diagram = {
  turn1:     '-s-h-(x|)',
  loop:      '1s-h-(xEL|)',
  turn1Runs: '^----!',
};

const overloaded: ProviderEvent = {
  type: 'message_end',
  stopReason: 'error',
  errorMessage: 'HTTP 503: overloaded',
  failure: { kind: 'http', status: 503, message: 'HTTP 503: overloaded' },
};
const events = { s: start, h: text('The answer is'), x: overloaded };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  E: 'turn_end 1 (error: HTTP 503: overloaded): user, assistant "The answer is"',
  L: 'loop_end error',
});

scenario('32 L1: an error after the first word is kept as the reply; no fail-over', ({ cold, expectObservable, expectSubscriptions }) => {
  const turn1 = cold(diagram.turn1, events);
  const backup = marbleProvider(); // a call of it would show: message_end error, `no scripted turn 1`
  const provider = withFallback([marbleProvider(turn1), backup]);
  const run = runEventedToolLoop({ provider, registry: new ToolRegistry(), messages: [{ role: 'user', content: 'What is the answer?' }] });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
});
