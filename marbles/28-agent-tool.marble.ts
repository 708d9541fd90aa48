/** A1–A5: an agent as a tool — a researcher loop inside the main loop, its events forwarded as they come, its loop_end the result. */
import { ToolRegistry, agentTool, runEventedToolLoop } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

const diagram = {
  turn1:         '-s-a-----t----o-------u|',
  research1:     '   -----s-c----u|',
  search:        '          ------(r|)',
  research2:     '                -----s-t-e|',
  turn2:         '                          -------s-y-e|',
  loop:          '1s-(aαP)Mt(CS)oU(QGH)MuT-D(KNRE2)s-y-e(FL|)',
  turn1Runs:     '^----------------------!',
  research1Runs: '---^------------!',
  searchRuns:    '----------^-----!',
  research2Runs: '----------------^---------!',
  turn2Runs:     '--------------------------^-----------!',
};

const events = {
  s: start,
  a: call('researcher', { question: 'Is coffee healthy?' }),
  t: text('On it, '),
  o: text('asking the researcher.'),
  u: end('toolUse'),
  y: text('The researcher says: mostly yes.'),
  e: end('stop'),
};
const researchEvents = { s: start, c: call('search', { q: 'coffee health' }), u: end('toolUse'), t: text('Mostly yes.'), e: end('stop') };
const searchValues = { r: '3 papers' };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  α: 'tool_start researcher {"question":"Is coffee healthy?"}',
  P: 'tool_update researcher: turn_start 1',
  M: 'tool_update researcher: message_start',
  C: 'tool_update researcher: tool_call search {"q":"coffee health"}',
  S: 'tool_update researcher: tool_start search {"q":"coffee health"}',
  U: 'tool_update researcher: message_end toolUse',
  Q: 'tool_update researcher: tool_result search: 3 papers',
  G: 'tool_update researcher: turn_end 1 (toolUse): user, assistant[search], toolResult search',
  H: 'tool_update researcher: turn_start 2',
  T: 'tool_update researcher: text_delta Mostly yes.',
  D: 'tool_update researcher: message_end stop',
  K: 'tool_update researcher: turn_end 2 (stop): user, assistant[search], toolResult search, assistant "Mostly yes."',
  N: 'tool_update researcher: loop_end stop',
  R: 'tool_result researcher: Mostly yes.',
  E: 'turn_end 1 (toolUse): user, assistant "On it, asking the researcher."[researcher], toolResult researcher',
  2: 'turn_start 2',
  F: 'turn_end 2 (stop): user, assistant "On it, asking the researcher."[researcher], toolResult researcher, assistant "The researcher says: mostly yes."',
  L: 'loop_end stop',
});

scenario('28 A1, A2, A5: an agent as a tool: the researcher works inside the main loop, shown as it goes', ({ cold, expectObservable, expectSubscriptions }) => {
  const turn1 = cold(diagram.turn1, events);
  const research1 = cold(diagram.research1, researchEvents);
  const search = cold(diagram.search, searchValues);
  const research2 = cold(diagram.research2, researchEvents);
  const turn2 = cold(diagram.turn2, events);
  const model = marbleProvider(research1, research2);
  const researcher = agentTool({
    name: 'researcher',
    description: 'Researches a question and answers it',
    input: { question: 'What to find out' },
    agent: (input, context) =>
      runEventedToolLoop({ provider: model, registry: marbleTools({ search }), messages: [{ role: 'user', content: String(input.question) }], signal: context.signal }),
  });
  const run = runEventedToolLoop({ provider: marbleProvider(turn1, turn2), registry: new ToolRegistry().register(researcher), messages: [{ role: 'user', content: 'Is coffee good for me?' }] });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(research1.subscriptions).toBe(diagram.research1Runs);
  expectSubscriptions(search.subscriptions).toBe(diagram.searchRuns);
  expectSubscriptions(research2.subscriptions).toBe(diagram.research2Runs);
  expectSubscriptions(turn2.subscriptions).toBe(diagram.turn2Runs);
});
