/** L1: the primary model fails with a 503 before its first word (frame 3): the backup answers in the same call; turn 2 stays on it (the cooldown); turn 3, the cooldown over, is the primary's again. */
import { runEventedToolLoop, withFallback } from 'rx-tool-loop';
import type { ProviderEvent } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

const diagram = {
  primary1:     '-s-(x|)',
  backup1:      '   -s-c---u|',
  lookup:       '      -----(R|)',
  backup2:      '           -----s-k---u|',
  convert:      '                  -----(K|)',
  primary3:     '                       -----s-t-e|',
  loop:         '1s----(cγ)u(RE2)s-(kκ)u(KF3)s-t-e(GL|)',
  primary1Runs: '^--!',
  backup1Runs:  '---^-------!',
  backup2Runs:  '-----------^-----------!',
  primary3Runs: '-----------------------^---------!',
};

const overloaded: ProviderEvent = {
  type: 'message_end',
  stopReason: 'error',
  errorMessage: 'HTTP 503: overloaded',
  failure: { kind: 'http', status: 503, message: 'HTTP 503: overloaded' },
};
const events = { s: start, x: overloaded, c: call('lookup'), k: call('convert'), u: end('toolUse'), t: text('12:00 is noon.'), e: end('stop') };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  γ: 'tool_start lookup',
  R: 'tool_result lookup: 12:00',
  E: 'turn_end 1 (toolUse): user, assistant[lookup], toolResult lookup',
  2: 'turn_start 2',
  κ: 'tool_start convert',
  K: 'tool_result convert: noon',
  F: 'turn_end 2 (toolUse): user, assistant[lookup], toolResult lookup, assistant[convert], toolResult convert',
  3: 'turn_start 3',
  G: 'turn_end 3 (stop): user, assistant[lookup], toolResult lookup, assistant[convert], toolResult convert, assistant "12:00 is noon."',
  L: 'loop_end stop',
});

scenario('31 L1: fail-over before the first word, the cooldown, then the first model again', ({ cold, expectObservable, expectSubscriptions }) => {
  const primary1 = cold(diagram.primary1, events);
  const backup1 = cold(diagram.backup1, events);
  const lookup = cold(diagram.lookup, { R: '12:00' });
  const backup2 = cold(diagram.backup2, events);
  const convert = cold(diagram.convert, { K: 'noon' });
  const primary3 = cold(diagram.primary3, events);
  const provider = withFallback([marbleProvider(primary1, primary3), marbleProvider(backup1, backup2)], { cooldownMs: 8 });
  const run = runEventedToolLoop({ provider, registry: marbleTools({ lookup, convert }), messages: [{ role: 'user', content: 'What time is it, in words?' }] });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(primary1.subscriptions).toBe(diagram.primary1Runs);
  expectSubscriptions(backup1.subscriptions).toBe(diagram.backup1Runs);
  expectSubscriptions(backup2.subscriptions).toBe(diagram.backup2Runs);
  expectSubscriptions(primary3.subscriptions).toBe(diagram.primary3Runs);
});
