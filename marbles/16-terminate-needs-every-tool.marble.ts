/** R6: the loop stops only when *every* result of the turn asks to terminate; here one does, one does not, so turn 2 runs. */
import { runEventedToolLoop } from 'rx-tool-loop';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from 'rx-tool-loop/testing';
import { scenario } from './support/scenario.js';

const diagram = {
  turn1:      '-s-a----b---u|',
  finish:     '   ----(A|)',
  check:      '        -----(B|)',
  turn2:      '             -----s-t-e|',
  loop:       '1s-(aα)A(bβ)u(BE2)s-t-e(FL|)',
  turn1Runs:  '^------------!',
  finishRuns: '---^---!',
  checkRuns:  '--------^----!',
  turn2Runs:  '-------------^---------!',
};

const events = { s: start, a: call('finish'), b: call('check'), u: end('toolUse'), t: text('checked'), e: end('stop') };
const finishValues = { A: { content: 'done', terminate: true } };
const checkValues = { B: 'ok' };
const loop = loopLegend(events, {
  1: 'turn_start 1',
  α: 'tool_start finish',
  β: 'tool_start check',
  A: 'tool_result finish: done',
  B: 'tool_result check: ok',
  E: 'turn_end 1 (toolUse): user, assistant[finish,check], toolResult finish, toolResult check',
  2: 'turn_start 2',
  F: 'turn_end 2 (stop): user, assistant[finish,check], toolResult finish, toolResult check, assistant "checked"',
  L: 'loop_end stop',
});

scenario('16 terminate needs every result of the turn', ({ cold, expectObservable, expectSubscriptions }) => {
  const finish = cold(diagram.finish, finishValues);
  const check = cold(diagram.check, checkValues);
  const turn1 = cold(diagram.turn1, events);
  const turn2 = cold(diagram.turn2, events);
  const run = runEventedToolLoop({ provider: marbleProvider(turn1, turn2), registry: marbleTools({ finish, check }), messages: [{ role: 'user', content: 'go' }] });
  expectObservable(run.pipe(described)).toBe(diagram.loop, loop);
  expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
  expectSubscriptions(finish.subscriptions).toBe(diagram.finishRuns);
  expectSubscriptions(check.subscriptions).toBe(diagram.checkRuns);
  expectSubscriptions(turn2.subscriptions).toBe(diagram.turn2Runs);
});
