/** U1, U2: one run, three pictures — the loop's events; the AI SDK's UI message stream that `toUiMessageStream` makes of them for a `useChat` page (a turn a step, text a text part, a call a tool part whose progress is a preliminary output); and the AG-UI events of `toAgUi` (a run, a step a turn, a text message, a tool call with its result, the progress an activity snapshot). */
import { connectable, timer } from 'rxjs';
import { runEventedToolLoop, toolProgress } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { toAgUi, toUiMessageStream } from 'rx-tool-loop/ui';
import { scenario } from './support/scenario.js';

// the three lines are one run of the loop, seen before and after each operator: it is connected once all listen
const diagram = {
  turn1:       '-s----h----w-----u|',
  weather:     '           -----p----(R|)',
  turn2:       '                     -----s----t----e|',
  loop:        '1s----h----(wω)-pu---(RE2)s----t----e(FL|)',
  chunks:      '(SP)--(Th)-w----pA---(DFP)-----(Ut)-E(Ff|)',
  agUi:        '(RS)--(TC)-(OAN)YD---(KFG)-----(UV)-W(XZ|)',
  turn1Runs:   '^-----------------!',
  weatherRuns: '-----------^---------!',
  turn2Runs:   '---------------------^---------------!',
};

const events = {
  s: start,
  h: text('Let me look.'),
  w: call('weather', { city: 'Oslo' }),
  u: end('toolUse'),
  t: text('Sunny in Oslo.'),
  e: end('stop'),
};
const results = { p: toolProgress('asking the station'), R: 'sunny' };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  ω: 'tool_start weather {"city":"Oslo"}',
  p: 'tool_update weather: asking the station',
  R: 'tool_result weather: sunny',
  E: 'turn_end 1 (toolUse): user, assistant "Let me look."[weather], toolResult weather',
  2: 'turn_start 2',
  F: 'turn_end 2 (stop): user, assistant "Let me look."[weather], toolResult weather, assistant "Sunny in Oslo."',
  L: 'loop_end stop',
});
// what goes on the wire, chunk by chunk (the `ai` package's UIMessageChunk)
const chunks = {
  S: { type: 'start', messageId: 'm1' },
  P: { type: 'start-step' },
  T: { type: 'text-start', id: 'text-1' },
  h: { type: 'text-delta', id: 'text-1', delta: 'Let me look.' },
  w: { type: 'tool-input-available', toolCallId: 'weather', toolName: 'weather', input: { city: 'Oslo' } },
  p: { type: 'tool-output-available', toolCallId: 'weather', output: 'asking the station', preliminary: true },
  A: { type: 'text-end', id: 'text-1' },
  D: { type: 'tool-output-available', toolCallId: 'weather', output: 'sunny' },
  F: { type: 'finish-step' },
  U: { type: 'text-start', id: 'text-2' },
  t: { type: 'text-delta', id: 'text-2', delta: 'Sunny in Oslo.' },
  E: { type: 'text-end', id: 'text-2' },
  f: { type: 'finish', finishReason: 'stop', messageMetadata: { usage: { inputTokens: 0, outputTokens: 0 } } },
};

// what goes on the wire, event by event (`@ag-ui/core`'s events); fields AG-UI lacks ride under metadata['rx-tool-loop']
const agUi = {
  R: { type: 'RUN_STARTED', threadId: 'weather-chat', runId: 'run1' },
  S: { type: 'STEP_STARTED', stepName: 'turn 1' },
  T: { type: 'TEXT_MESSAGE_START', messageId: 'run1-1', role: 'assistant' },
  C: { type: 'TEXT_MESSAGE_CONTENT', messageId: 'run1-1', delta: 'Let me look.' },
  O: { type: 'TOOL_CALL_START', toolCallId: 'weather', toolCallName: 'weather', parentMessageId: 'run1-1' },
  A: { type: 'TOOL_CALL_ARGS', toolCallId: 'weather', delta: '{"city":"Oslo"}' },
  N: { type: 'TOOL_CALL_END', toolCallId: 'weather' },
  Y: { type: 'ACTIVITY_SNAPSHOT', messageId: 'run1-2', activityType: 'tool_progress', content: { toolCallId: 'weather', toolName: 'weather', content: 'asking the station' } },
  D: { type: 'TEXT_MESSAGE_END', messageId: 'run1-1', metadata: { 'rx-tool-loop': { stopReason: 'toolUse' } } },
  K: { type: 'TOOL_CALL_RESULT', messageId: 'run1-3', toolCallId: 'weather', role: 'tool', content: 'sunny', metadata: { 'rx-tool-loop': { toolName: 'weather', isError: false } } },
  F: { type: 'STEP_FINISHED', stepName: 'turn 1' },
  G: { type: 'STEP_STARTED', stepName: 'turn 2' },
  U: { type: 'TEXT_MESSAGE_START', messageId: 'run1-4', role: 'assistant' },
  V: { type: 'TEXT_MESSAGE_CONTENT', messageId: 'run1-4', delta: 'Sunny in Oslo.' },
  W: { type: 'TEXT_MESSAGE_END', messageId: 'run1-4', metadata: { 'rx-tool-loop': { stopReason: 'stop' } } },
  X: { type: 'STEP_FINISHED', stepName: 'turn 2' },
  Z: { type: 'RUN_FINISHED', threadId: 'weather-chat', runId: 'run1', usage: [{ inputTokens: 0, outputTokens: 0, totalTokens: 0 }], outcome: { type: 'success' } },
};

scenario('40 one run on the wire: as the AI SDK\'s UI message stream that useChat reads, and as AG-UI events', ({ cold, expectObservable, expectSubscriptions }) => {
  const turn1 = cold(diagram.turn1, events);
  const weather = cold(diagram.weather, results);
  const turn2 = cold(diagram.turn2, events);
  const run = connectable(
    runEventedToolLoop({
      provider: marbleProvider(turn1, turn2),
      registry: marbleTools({ weather }),
      messages: [{ role: 'user', content: 'Weather in Oslo?' }],
    }),
  );
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectObservable(run.pipe(toUiMessageStream({ messageId: () => 'm1' }))).toBe(diagram.chunks, chunks);
  expectObservable(run.pipe(toAgUi({ threadId: 'weather-chat', runId: () => 'run1' }))).toBe(diagram.agUi, agUi);
  timer(0).subscribe(() => run.connect()); // frame 0, after the three lines have subscribed
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(weather.subscriptions).toBe(diagram.weatherRuns);
  expectSubscriptions(turn2.subscriptions).toBe(diagram.turn2Runs);
});
