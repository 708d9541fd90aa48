/**
 * M8: an MCP server asks the client's model during a call, and the call times out. The SDK's client cannot run
 * in virtual time (its requests are Promises), so `summarize` stands in for the MCP call as `mcpTools` makes it:
 * the server's `sampling/createMessage` is one call of the `sampling` provider (`sample`, the model's reply to the
 * server, subscribed when the server asks). With `toolTimeoutMs: 5` the call is torn down 5 frames after its
 * `tool_start`, and the provider call it was waiting on is unsubscribed in that frame (R16).
 */
import { reduce } from 'rxjs';
import { runEventedToolLoop } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

// `sample` never ends: the model is still writing when the call times out at frame 8
const diagram = {
  turn1:      '-s-a---u|',
  sample:     '   -s-t',
  turn2:      '        -----s-t-e|',
  loop:       '1s-(aα)u(RE2)s-t-e(FL|)',
  turn1Runs:  '^-------!',
  sampleRuns: '---^----!',
  turn2Runs:  '--------^---------!',
};

const events = { s: start, a: call('summarize'), u: end('toolUse'), t: text('The report says'), e: end('stop') };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  α: 'tool_start summarize',
  R: 'tool_result summarize: error: tool timed out after 5 ms (isError)',
  E: 'turn_end 1 (toolUse): user, assistant[summarize], toolResult summarize',
  2: 'turn_start 2',
  F: 'turn_end 2 (stop): user, assistant[summarize], toolResult summarize, assistant "The report says"',
  L: 'loop_end stop',
});

scenario('39 an MCP server samples the client\'s model; the call times out mid-reply', ({ cold, expectObservable, expectSubscriptions }) => {
  const turn1 = cold(diagram.turn1, events);
  const sample = cold(diagram.sample, events);
  const turn2 = cold(diagram.turn2, events);
  const sampling = marbleProvider(sample);
  // the stand-in for the MCP call: the server's request is one call of `sampling`, with no tools; its text is the server's answer
  const summarize = () =>
    sampling({ messages: [{ role: 'system', content: 'You summarize.' }, { role: 'user', content: 'Summarize the report' }], tools: [] }).pipe(
      reduce((reply, event) => (event.type === 'text_delta' ? reply + event.text : reply), ''),
    );
  const run = runEventedToolLoop({
    provider: marbleProvider(turn1, turn2),
    registry: marbleTools({ summarize }),
    messages: [{ role: 'user', content: 'summarize it' }],
    toolTimeoutMs: 5,
  });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(sample.subscriptions).toBe(diagram.sampleRuns);
  expectSubscriptions(turn2.subscriptions).toBe(diagram.turn2Runs);
});
