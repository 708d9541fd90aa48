/** Decided in version 2 (h): the kit's functions check their arguments, with a TypeError that names the function, the argument and the value. */
import { of } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import * as kit from 'rx-tool-loop/testing';

const bad: [string, () => unknown, string][] = [
  ['assertValidHistory', () => kit.assertValidHistory('x' as never), 'assertValidHistory: messages must be an array of messages (got "x", a string)'],
  ['assertValidHistory', () => kit.assertValidHistory([null] as never), 'assertValidHistory: messages[0] must be a message with a role of system, user, assistant, toolResult (got null)'],
  ['assertValidHistory', () => kit.assertValidHistory([{ role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: 'c1' }] as never), 'assertValidHistory: messages[0].toolCalls must be an array of calls with an id and a name (got "c1", a string)'],
  ['describeEvent', () => kit.describeEvent(null as never), 'describeEvent: event must be a loop or conversation event (got null)'],
  ['describeEvent', () => kit.describeEvent('turn_start' as never), 'describeEvent: event must be a loop or conversation event (got "turn_start", a string)'],
  ['describeEvent', () => kit.describeEvent({ type: 'tool_call' } as never), 'describeEvent: event is not a well-formed tool_call event (got {"type":"tool_call"}, an object)'],
  ['text', () => kit.text(3 as never), 'text: t must be a string (got 3, a number)'],
  ['call', () => kit.call('' as never), 'call: name must be a non-empty string (got "", a string)'],
  ['call', () => kit.call('search', {}, 7 as never), 'call: id must be a non-empty string (got 7, a number)'],
  ['end', () => kit.end('done' as never), 'end: reason must be one of stop, toolUse, length, error, aborted (got "done", a string)'],
  ['end', () => kit.end('error', { errorMessage: 5 } as never), 'end: extra.errorMessage must be a string (got 5, a number)'],
  ['marbleProvider', () => kit.marbleProvider('-s-e|' as never), 'marbleProvider: turn 1 must be an Observable of provider events (got "-s-e|", a string)'],
  ['marbleTools', () => kit.marbleTools(null as never), 'marbleTools: table must be an object (got null)'],
  ['marbleTools', () => kit.marbleTools({ clock: 12 as never }), 'marbleTools: table.clock must be a string, a ToolOutput, an Observable or a handler (got 12, a number)'],
  ['loopLegend', () => kit.loopLegend({ s: 'message_start' as never }, {}), 'loopLegend: providerValues.s must be a provider event (got "message_start", a string)'],
  ['loopLegend', () => kit.loopLegend({}, { L: 3 as never }), 'loopLegend: loopValues.L must be a describeEvent line (a string) (got 3, a number)'],
  ['recordMarbles', () => kit.recordMarbles([] as never), 'recordMarbles: run$ must be an Observable (got [], an array)'],
  ['recordMarbles', () => kit.recordMarbles(of(), { mergeText: 'yes' as never }), 'recordMarbles: mergeText must be a boolean (got "yes", a string)'],
  ['recordMarbles', () => kit.recordMarbles(of(), { options: 'fast' as never }), 'recordMarbles: options.options must be the options of the run (an object) (got "fast", a string)'],
  ['expectLoop', () => kit.expectLoop({} as never, of()), 'expectLoop: helpers must be the helpers of TestScheduler.run (got {}, an object)'],
  ['expectLoop', () => new TestScheduler(() => undefined).run((helpers) => kit.expectLoop(helpers, 'x' as never)), 'expectLoop: run$ must be an Observable (got "x", a string)'],
  ['expectLoop', () => new TestScheduler(() => undefined).run((helpers) => kit.expectLoop(helpers, of()).toBe(3 as never, {})), 'expectLoop: diagram must be a string (got 3, a number)'],
  ['expectLoop', () => new TestScheduler(() => undefined).run((helpers) => kit.expectLoop(helpers, of()).toBe('|', null as never)), 'expectLoop: legend must be an object (got null)'],
];

describe('the kit checks its arguments (decided in version 2, h)', () => {
  it.each(bad)('(h) %s: a wrong argument is a TypeError that names it', (_, act, message) => {
    expect(act).toThrow(new TypeError(message));
  });

  it('(h) every function the kit exports is checked above', () => {
    const functions = Object.entries(kit).filter(([name, value]) => typeof value === 'function' && name !== 'described').map(([name]) => name);
    expect(functions.filter((name) => !bad.some(([checked]) => checked === name)).sort()).toEqual([]);
  });

  it('(h) call sends its input as given, unchecked: a test of hostile input (R17) needs null or an array', () => {
    expect(kit.call('search', null as never)).toEqual({ type: 'tool_call', call: { id: 'search', name: 'search', input: null } });
  });

  it('(h) described, an operator, fails its Observable with the same TypeError', () => {
    let error: unknown;
    of(null as unknown as import('rx-tool-loop').ConversationEvent).pipe(kit.described).subscribe({ error: (e: unknown) => (error = e) });
    expect(error).toEqual(new TypeError('describeEvent: event must be a loop or conversation event (got null)'));
  });
});
