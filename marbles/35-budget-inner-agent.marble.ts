/**
 * L3: a budget of 50 tokens, spent by an inner agent. The outer model (10 tokens) asks its researcher; the
 * researcher's loop is given the budget (`context.budget`) and spends 45 on its one call. Before its next turn
 * the outer loop finds the budget spent (55 of 50) and ends with reason `budget`, its history whole: the model
 * is not called again.
 */
import { TokenBudget, ToolRegistry, agentTool, runEventedToolLoop } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

const diagram = {
  turn1:         '-s-a------u|',
  research1:     '   -----s---t---e|',
  loop:          '1s-(aαP)M-u-T---D(KNREL|)',
  turn1Runs:     '^----------!',
  research1Runs: '---^-------------!',
};

const events = { s: start, a: call('researcher', { question: 'Is coffee healthy?' }), u: end('toolUse', { usage: { inputTokens: 8, outputTokens: 2 } }) };
const researchEvents = { s: start, t: text('Mostly yes.'), e: end('stop', { usage: { inputTokens: 40, outputTokens: 5 } }) };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  α: 'tool_start researcher {"question":"Is coffee healthy?"}',
  P: 'tool_update researcher: turn_start 1',
  M: 'tool_update researcher: message_start',
  T: 'tool_update researcher: text_delta Mostly yes.',
  D: 'tool_update researcher: message_end stop',
  K: 'tool_update researcher: turn_end 1 (stop): user, assistant "Mostly yes."',
  N: 'tool_update researcher: loop_end stop',
  R: 'tool_result researcher: Mostly yes.',
  E: 'turn_end 1 (toolUse): user, assistant[researcher], toolResult researcher',
  L: 'loop_end budget',
});

scenario('35 L3: a budget spent by an inner agent ends the outer loop before its next turn', ({ cold, expectObservable, expectSubscriptions }) => {
  const turn1 = cold(diagram.turn1, events);
  const research1 = cold(diagram.research1, researchEvents);
  const researcher = agentTool({
    name: 'researcher',
    description: 'Researches a question and answers it',
    input: { question: 'What to find out' },
    agent: (input, context) =>
      runEventedToolLoop({
        provider: marbleProvider(research1),
        registry: new ToolRegistry(),
        messages: [{ role: 'user', content: String(input.question) }],
        signal: context.signal,
        budget: context.budget, // L3: the inner loop charges the outer budget as it goes
      }),
  });
  const budget = new TokenBudget(50);
  const run = runEventedToolLoop({ provider: marbleProvider(turn1), registry: new ToolRegistry().register(researcher), messages: [{ role: 'user', content: 'Is coffee good for me?' }], budget });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(research1.subscriptions).toBe(diagram.research1Runs);
});
