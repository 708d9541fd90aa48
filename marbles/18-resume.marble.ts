/** R22: a history saved while its tools ran resumes with turn 0 — no model call, the unanswered call runs, the answered one does not — then the model goes on. */
import { runEventedToolLoop, type AgentMessage } from 'rx-tool-loop';
import { described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

// turn 0 has no provider line: the loop starts with the weather call that was still running when the run was saved
// (its tool_start α comes in turn_start 0's frame; no tool_call, the call is in the saved history)
const diagram = {
  weather:     '----(R|)',
  turn1:       '    -----s-t-e|',
  loop:        '(0α)(RE1)s-t-e(FL|)',
  weatherRuns: '^---!',
  turn1Runs:   '----^---------!',
};

const saved: AgentMessage[] = [
  { role: 'user', content: 'weather and time?' },
  {
    role: 'assistant',
    content: 'Checking.',
    stopReason: 'toolUse',
    toolCalls: [
      { id: 'weather', name: 'weather', input: {} },
      { id: 'clock', name: 'clock', input: {} },
    ],
  },
  { role: 'toolResult', toolCallId: 'clock', toolName: 'clock', content: '12:00', isError: false },
];

const events = { s: start, t: text('Sunny at noon.'), e: end('stop') };
const loop = loopLegend(events, {
  0: 'turn_start 0',
  α: 'tool_start weather',
  R: 'tool_result weather: sunny',
  E: 'turn_end 0 (toolUse): user, assistant "Checking."[weather,clock], toolResult weather, toolResult clock',
  1: 'turn_start 1',
  F: 'turn_end 1 (stop): user, assistant "Checking."[weather,clock], toolResult weather, toolResult clock, assistant "Sunny at noon."',
  L: 'loop_end stop',
});

scenario('18 resume: turn 0 runs the call the saved run was waiting for', ({ cold, expectObservable, expectSubscriptions }) => {
  const weather = cold(diagram.weather, { R: 'sunny' });
  const turn1 = cold(diagram.turn1, events);
  const run = runEventedToolLoop({ provider: marbleProvider(turn1), registry: marbleTools({ weather, clock: 'never asked again' }), messages: saved });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(weather.subscriptions).toBe(diagram.weatherRuns);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
});
