/**
 * M7: an MCP server asks the user during a call. The SDK's client cannot run in virtual time (its requests are
 * Promises), so `book` stands in for the MCP call as `mcpTools` makes it: when the server's
 * `elicitation/create` comes, the call shows it at once — a `tool_update` whose `details.elicitation` holds the
 * message and the schema, for a UI to ask — and `onElicit`'s answer (here the Observable `answer`) is subscribed;
 * its first value goes back to the server, whose result ends the call.
 */
import { concat, map, of, take } from 'rxjs';
import { runEventedToolLoop, toolProgress } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

const diagram = {
  turn1:      '-s-a----u|',
  answer:     '   -------(y|)',
  turn2:      '          -----s-t-e|',
  loop:       '1s-(aαQ)u-(RE2)s-t-e(FL|)',
  turn1Runs:  '^--------!',
  answerRuns: '---^------!',
  turn2Runs:  '----------^---------!',
};

const events = { s: start, a: call('book', { city: 'Lisbon' }), u: end('toolUse'), t: text('Booked for the 15th.'), e: end('stop') };
const answerValues = { y: { action: 'accept', content: { date: '2027-01-15' } } };
const asked = {
  message: 'Which date?',
  requestedSchema: { type: 'object', properties: { date: { type: 'string', format: 'date' } }, required: ['date'] },
};
const loop = loopLegend(events, {
  1: 'turn_start 1',
  α: 'tool_start book {"city":"Lisbon"}',
  Q: 'tool_update book: Which date?',
  R: 'tool_result book: booked for 2027-01-15',
  E: 'turn_end 1 (toolUse): user, assistant[book], toolResult book',
  2: 'turn_start 2',
  F: 'turn_end 2 (stop): user, assistant[book], toolResult book, assistant "Booked for the 15th."',
  L: 'loop_end stop',
});

scenario('38 an MCP server asks the user during a call (elicitation)', ({ cold, expectObservable, expectSubscriptions }) => {
  const turn1 = cold(diagram.turn1, events);
  const answer = cold(diagram.answer, answerValues);
  const turn2 = cold(diagram.turn2, events);
  // the stand-in for the MCP call: the server asks at once (Q), and answers with what the user gave (R)
  const book = concat(
    of(toolProgress(asked.message, { elicitation: asked })),
    answer.pipe(
      take(1),
      map((given) => `booked for ${given.content.date}`),
    ),
  );
  const run = runEventedToolLoop({ provider: marbleProvider(turn1, turn2), registry: marbleTools({ book }), messages: [{ role: 'user', content: 'book Lisbon' }] });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(answer.subscriptions).toBe(diagram.answerRuns);
  expectSubscriptions(turn2.subscriptions).toBe(diagram.turn2Runs);
});
