/** R2, R3, R5, R23: the tool starts with its call (`γ`) and the provider keeps streaming while it runs; `turn_end` waits for the tool, then turn 2 starts. */
import { runEventedToolLoop } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

const diagram = {
  turn1:       '-s-h-c---i-u|',
  weather:     '     --------(R|)',
  turn2:       '             -----s-t-e|',
  loop:        '1s-h-(cγ)i-u-(RE2)s-t-e(FL|)',
  turn1Runs:   '^-----------!',
  weatherRuns: '-----^-------!',
  turn2Runs:   '-------------^---------!',
};

const events = {
  s: start,
  h: text('Let me check. '),
  c: call('weather', { city: 'Paris' }),
  i: text('One moment.'),
  u: end('toolUse'),
  t: text('Sunny, 21 °C.'),
  e: end('stop'),
};
const weatherValues = { R: 'sunny, 21 °C' };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  γ: 'tool_start weather {"city":"Paris"}',
  R: 'tool_result weather: sunny, 21 °C',
  E: 'turn_end 1 (toolUse): user, assistant "Let me check. One moment."[weather], toolResult weather',
  2: 'turn_start 2',
  F: 'turn_end 2 (stop): user, assistant "Let me check. One moment."[weather], toolResult weather, assistant "Sunny, 21 °C."',
  L: 'loop_end stop',
});

scenario('03 two turns with a delayed tool', ({ cold, expectObservable, expectSubscriptions }) => {
  const weather = cold(diagram.weather, weatherValues);
  const turn1 = cold(diagram.turn1, events);
  const turn2 = cold(diagram.turn2, events);
  const run = runEventedToolLoop({ provider: marbleProvider(turn1, turn2), registry: marbleTools({ weather }), messages: [{ role: 'user', content: 'Weather in Paris?' }] });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(weather.subscriptions).toBe(diagram.weatherRuns);
  expectSubscriptions(turn2.subscriptions).toBe(diagram.turn2Runs);
});
