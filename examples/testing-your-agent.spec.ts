// A marble test of your own agent, written as a user of the package writes it (README "Testing your agent").
import { takeUntil, throwError } from 'rxjs';
import { TestScheduler, type RunHelpers } from 'rxjs/testing';
import { runEventedToolLoop } from 'rx-tool-loop';
import { call, end, expectLoop, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';

const events = { s: start, h: text('Looking. '), a: call('search'), b: call('fetch'), u: end('toolUse'), t: text('Done.'), e: end('stop') };
const legend = loopLegend(events, {
  1: 'turn_start 1', 2: 'turn_start 2', L: 'loop_end stop', M: 'loop_end maxTurns',
  α: 'tool_start search', β: 'tool_start fetch',
  B: 'tool_result fetch: error: offline (isError)', A: 'tool_result search: 3 hits',
  E: 'turn_end 1 (toolUse): user, assistant "Looking. "[search,fetch], toolResult search, toolResult fetch',
  F: 'turn_end 2 (stop): user, assistant "Looking. "[search,fetch], toolResult search, toolResult fetch, assistant "Done."',
});

const agent = (helpers: RunHelpers, maxTurns = 8) => {
  const { cold } = helpers;
  const provider = marbleProvider(cold('-s-h-a---b----u|', events), cold('-----s-t-e|', events));
  const registry = marbleTools({
    search: cold('-----------(A|)', { A: '3 hits' }),             // slow: the model streams on meanwhile
    fetch: () => throwError(() => new Error('offline')),          // fails: the model reads the error
  });
  return runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'find it' }], maxTurns });
};

const testScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

test('a slow tool while the model streams, a failing tool, then the answer', () => {
  testScheduler().run((helpers) => expectLoop(helpers, agent(helpers)).toBe('1s-h-(aα)(bβB)u-(AE2)s-t-e(FL|)', legend));
});

test('the cap: with maxTurns 1 the loop ends after the tools of turn 1', () => {
  testScheduler().run((helpers) => expectLoop(helpers, agent(helpers, 1)).toBe('1s-h-(aα)(bβB)u-(AEM|)', legend));
});

test('cancel with takeUntil: the run stops where the stop arrives', () => {
  testScheduler().run((helpers) => {
    const stop = helpers.cold('---------------x');                // while search still runs
    expectLoop(helpers, agent(helpers).pipe(takeUntil(stop))).toBe('1s-h-(aα)(bβB)u|', legend);
  });
});
