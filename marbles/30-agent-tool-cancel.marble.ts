/** A3, A5: unsubscribing the main loop while its researcher agent works tears the inner loop down — its model call and its tool — at that frame. */
import { ToolRegistry, agentTool, runEventedToolLoop } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

// `search` would answer at frame 18: the cancel at 16 comes first, and nothing of it is emitted
const diagram = {
  turn1:         '-s-a-----t----o',
  research1:     '   -----s-c----u',
  search:        '          --------(r|)',
  subscribed:    '^---------------!',
  loop:          '1s-(aαP)Mt(CS)oU',
  turn1Runs:     '^---------------!',
  research1Runs: '---^------------!',
  searchRuns:    '----------^-----!',
};

const events = { s: start, a: call('researcher', { question: 'Is coffee healthy?' }), t: text('On it, '), o: text('asking the researcher.') };
const researchEvents = { s: start, c: call('search', { q: 'coffee health' }), u: end('toolUse') };
const searchValues = { r: '3 papers' };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  α: 'tool_start researcher {"question":"Is coffee healthy?"}',
  P: 'tool_update researcher: turn_start 1',
  M: 'tool_update researcher: message_start',
  C: 'tool_update researcher: tool_call search {"q":"coffee health"}',
  S: 'tool_update researcher: tool_start search {"q":"coffee health"}',
  U: 'tool_update researcher: message_end toolUse',
});

scenario('30 A3, A5: cancel the main loop while its agent tool works: the inner loop goes with it', ({ cold, expectObservable, expectSubscriptions }) => {
  const turn1 = cold(diagram.turn1, events);
  const research1 = cold(diagram.research1, researchEvents);
  const search = cold(diagram.search, searchValues);
  const model = marbleProvider(research1);
  const researcher = agentTool({
    name: 'researcher',
    description: 'Researches a question and answers it',
    input: { question: 'What to find out' },
    agent: (input, context) =>
      runEventedToolLoop({ provider: model, registry: marbleTools({ search }), messages: [{ role: 'user', content: String(input.question) }], signal: context.signal }),
  });
  const run = runEventedToolLoop({ provider: marbleProvider(turn1), registry: new ToolRegistry().register(researcher), messages: [{ role: 'user', content: 'Is coffee good for me?' }] });
  expectObservable(run.pipe(described), diagram.subscribed).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(research1.subscriptions).toBe(diagram.research1Runs);
  expectSubscriptions(search.subscriptions).toBe(diagram.searchRuns);
});
