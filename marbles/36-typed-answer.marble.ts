/**
 * J2, J3: a typed answer at the cap. With `maxTurns: 1` the model's one turn asks for a tool; the cap reserves
 * the answer turn (2, no tools, `output` asked); its `{}` is no answer, so a repair turn (3) follows a user
 * message naming the issues; its answer is valid, and the loop ends `maxTurns` with it as `output`. What each
 * answer turn asks the model (`output`, no tools) and the repair's words are pinned in spec/loop/answer-turns.spec.ts:
 * a scenario holds only what the page can run too.
 */
import { runEventedToolLoop } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

const diagram = {
  turn1:       '-s-a---u|',
  weather:     '   -----(W|)',
  turn2:       '        -----s-i-e|',
  turn3:       '                  ----s-j-e|',
  loop:        '1s-(aα)u(WE2)s-i-e(F3)s-j-e(GL|)',
  turn1Runs:   '^-------!',
  weatherRuns: '---^----!',
  turn2Runs:   '--------^---------!',
  turn3Runs:   '------------------^--------!',
};

const oslo = '{"city":"Oslo","celsius":4}';
const events = { s: start, a: call('weather'), u: end('toolUse'), i: text('{}'), j: text(oslo), e: end('stop') };
const weatherValues = { W: 'cloudy, 4 °C' };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  α: 'tool_start weather',
  W: 'tool_result weather: cloudy, 4 °C',
  E: 'turn_end 1 (toolUse): user, assistant[weather], toolResult weather',
  2: 'turn_start 2 answer',
  F: 'turn_end 2 (stop): user, assistant[weather], toolResult weather, assistant "{}"',
  3: 'turn_start 3 answer',
  G: `turn_end 3 (stop): user, assistant[weather], toolResult weather, assistant "{}", user, assistant "${oslo}"`,
  L: `loop_end maxTurns ${oslo}`,
});

scenario('36 J2, J3: a typed answer at the cap: the answer turn, a repair, then maxTurns with output', ({ cold, expectObservable, expectSubscriptions }) => {
  const turn1 = cold(diagram.turn1, events);
  const turn2 = cold(diagram.turn2, events);
  const turn3 = cold(diagram.turn3, events);
  const weather = cold(diagram.weather, weatherValues);
  const provider = marbleProvider(turn1, turn2, turn3);
  const output = { jsonSchema: { type: 'object' as const, properties: { city: { type: 'string' }, celsius: { type: 'number' } }, required: ['city', 'celsius'] } };
  const run = runEventedToolLoop({ provider, registry: marbleTools({ weather: () => weather }), messages: [{ role: 'user', content: 'Oslo?' }], maxTurns: 1, output });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(weather.subscriptions).toBe(diagram.weatherRuns);
  expectSubscriptions(turn2.subscriptions).toBe(diagram.turn2Runs);
  expectSubscriptions(turn3.subscriptions).toBe(diagram.turn3Runs);
});
