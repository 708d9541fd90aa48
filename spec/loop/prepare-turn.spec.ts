/** H6: prepareTurn — what each provider call sees; the loop's own history stays whole. */
import { EMPTY, NEVER, lastValueFrom, throwError, toArray } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { AgentMessage, LoopOptions, PrepareTurn, ProviderInput, ToolRegistry, runEventedToolLoop, scriptedProvider } from '../../src/index.js';
import { expectLoop, loopLegend, marbleProvider } from '../../src/testing/index.js';
import { answerTurn, call, collectSync, end, loopEndOf, only, start, text, tool, toolTurn } from '../support/events.js';

const ask = (content = 'go'): AgentMessage[] => [{ role: 'user', content }];
const testScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

function setup(prepareTurn: PrepareTurn, options: Partial<LoopOptions> = {}) {
  const inputs: ProviderInput[] = [];
  const scripted = scriptedProvider([toolTurn(call('echo', { text: 'x' }, 'c1')), answerTurn('done')]);
  const provider = (input: ProviderInput) => {
    inputs.push(input);
    return scripted(input);
  };
  const registry = new ToolRegistry().register(tool('echo', (input) => String(input.text), { text: 'what' })).register(tool('hidden', () => 'still runs'));
  return { inputs, options: { provider, registry, messages: ask(), prepareTurn, ...options } };
}

describe('prepareTurn (H6)', () => {
  it('what it returns is what the provider call sees; turn_end.messages stays the whole history', () => {
    const turns: number[] = [];
    const { inputs, options } = setup((input, { turn }) => {
      turns.push(turn);
      const summary: AgentMessage = { role: 'system', content: `turn ${turn}: be brief` };
      return { messages: [summary, ...input.messages], tools: input.tools.filter((spec) => spec.name !== 'hidden') };
    });
    const events = collectSync(runEventedToolLoop(options)).values;
    expect(turns).toEqual([1, 2]);
    expect(inputs.map((input) => input.messages.map((message) => message.role))).toEqual([
      ['system', 'user'],
      ['system', 'user', 'assistant', 'toolResult'],
    ]);
    expect(inputs.map((input) => input.tools.map((spec) => spec.name))).toEqual([['echo'], ['echo']]);
    expect(loopEndOf(events).messages.map((message) => message.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
  });

  it('is given a copy: changing its input changes nothing the loop keeps', () => {
    const { options } = setup((input) => {
      (input.messages as AgentMessage[]).length = 0;
      return { messages: ask('changed'), tools: input.tools };
    });
    const events = collectSync(runEventedToolLoop(options)).values;
    expect(loopEndOf(events).messages[0]).toEqual(ask()[0]);
  });

  it('a tool it hides from the model still runs when the model calls it', () => {
    const provider = scriptedProvider([toolTurn(call('hidden', {}, 'c1')), answerTurn('done')]);
    const registry = new ToolRegistry().register(tool('hidden', () => 'still runs'));
    const events = collectSync(runEventedToolLoop({ provider, registry, messages: ask(), prepareTurn: (input) => ({ ...input, tools: [] }) })).values;
    expect(only(events, 'tool_result').map((event) => event.message.content)).toEqual(['still runs']);
  });

  it('is not asked for turn 0 (R22): resumed calls are no provider call', () => {
    const turns: number[] = [];
    const saved: AgentMessage[] = [...ask(), { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [{ id: 'c0', name: 'echo', input: { text: 'y' } }] }];
    const { options } = setup((input, { turn }) => (turns.push(turn), input), { messages: saved });
    collectSync(runEventedToolLoop(options));
    expect(turns).toEqual([1, 2]);
  });

  const failures: [string, PrepareTurn, string][] = [
    ['throws', () => { throw new Error('no budget'); }, 'no budget'],
    ['errors', () => throwError(() => new Error('summary failed')), 'summary failed'],
    ['completes without a value', () => EMPTY, 'completed without a value'],
    ['returns no ProviderInput', () => ({ messages: [] }) as never, 'expected { messages: AgentMessage[], tools: ToolSpec[] }, got {"messages":[]}, an object'],
    ['returns a broken history (R21)', (input) => ({ ...input, messages: [{ role: 'robot', content: 'x' }] as never }), "messages[0] has an unknown role, not 'system', 'user', 'assistant' or 'toolResult' (got \"robot\", a string)"],
  ];

  it.each(failures)('one that %s ends the turn like a failing provider (R10): `prepareTurn failed: MESSAGE`, no provider call', (_how, prepareTurn, message) => {
    const { inputs, options } = setup(prepareTurn);
    const events = collectSync(runEventedToolLoop(options)).values;
    expect(inputs).toEqual([]);
    const last = loopEndOf(events);
    expect(last.reason).toBe('error');
    expect(last.assistant).toEqual({ role: 'assistant', content: '', stopReason: 'error', errorMessage: `prepareTurn failed: ${message}` });
    expect(last.messages).toEqual([...ask(), last.assistant]);
  });

  it('a rejecting one too, in real time', async () => {
    const { options } = setup(() => Promise.reject(new Error('later')));
    const events = await lastValueFrom(runEventedToolLoop(options).pipe(toArray()));
    expect(loopEndOf(events).assistant.errorMessage).toBe('prepareTurn failed: later');
  });

  it('an abort while it waits ends the turn before any provider call: the aborted stand-in, outside the history; its signal aborts', () => {
    const controller = new AbortController();
    let signal: AbortSignal | undefined;
    const { inputs, options } = setup((_input, context) => {
      signal = context.signal;
      return NEVER;
    }, { signal: controller.signal });
    const run = collectSync(runEventedToolLoop(options));
    controller.abort();
    const events = run.values;
    expect({ inputs, completed: run.completed, aborted: signal?.aborted }).toEqual({ inputs: [], completed: true, aborted: true });
    const standIn = { role: 'assistant', content: '', stopReason: 'aborted', errorMessage: 'aborted' };
    expect(events.map((event) => event.type)).toEqual(['turn_start', 'turn_end', 'loop_end']);
    expect(events[1]).toMatchObject({ assistant: standIn, messages: ask(), toolResults: [] });
    expect(loopEndOf(events)).toMatchObject({ reason: 'aborted', assistant: standIn, messages: ask() });
  });

  it('R34, S5: a compaction told with its answer rides that turn\'s turn_end (a copy), never the provider\'s input; a turn told none has none', () => {
    const told = { summary: 'SUMMARY', firstKept: 1 };
    const { inputs, options } = setup((input, { turn }) => (turn === 2 ? { ...input, compaction: told } : input));
    const ends = only(collectSync(runEventedToolLoop(options)).values, 'turn_end');
    expect(inputs.map((input) => 'compaction' in input)).toEqual([false, false]);
    expect(ends.map((event) => 'compaction' in event)).toEqual([false, true]);
    expect(ends[1]!.compaction).toEqual(told);
    expect(ends[1]!.compaction).not.toBe(told);
    expect(ends[1]!.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']); // whole (H6)
  });

  it('R34, S5: a turn that compacted and then failed, or was aborted, still carries its compaction: the history it summarised is kept; an abort before prepareTurn answered carries none', () => {
    const compacting: PrepareTurn = (input) => ({ ...input, compaction: { summary: 'S', firstKept: 0 } });
    const failed = collectSync(runEventedToolLoop({ provider: () => throwError(() => new Error('down')), registry: new ToolRegistry(), messages: ask(), prepareTurn: compacting })).values;
    expect(only(failed, 'turn_end')[0]).toMatchObject({ compaction: { summary: 'S', firstKept: 0 }, messages: [...ask(), { stopReason: 'error', errorMessage: 'provider error: down' }] });

    const controller = new AbortController();
    const streaming = collectSync(runEventedToolLoop({ provider: () => NEVER, registry: new ToolRegistry(), messages: ask(), prepareTurn: compacting, signal: controller.signal }));
    controller.abort();
    expect(only(streaming.values, 'turn_end')[0]).toMatchObject({ compaction: { summary: 'S', firstKept: 0 }, messages: [...ask(), { stopReason: 'aborted' }] });

    const waiting = new AbortController();
    const unasked = collectSync(runEventedToolLoop({ provider: () => NEVER, registry: new ToolRegistry(), messages: ask(), prepareTurn: () => NEVER, signal: waiting.signal }));
    waiting.abort();
    expect(only(unasked.values, 'turn_end').map((event) => 'compaction' in event)).toEqual([false]);
  });

  it('R34, S5, H6: a compaction that is none fails the turn as a failing prepareTurn does', () => {
    const { inputs, options } = setup((input) => ({ ...input, compaction: { summary: 'S', firstKept: 1 } }));
    const last = loopEndOf(collectSync(runEventedToolLoop(options)).values);
    expect(inputs).toEqual([]);
    expect(last.assistant.errorMessage).toBe('prepareTurn failed: compaction must be { summary: string, firstKept: an index of the history prepareTurn was given (0 to 0) }, got {"summary":"S","firstKept":1}, an object');
  });

  it('a prepareTurn that takes two frames delays the provider call by two frames', () => {
    testScheduler().run((helpers) => {
      const { cold, expectSubscriptions } = helpers;
      const events = { s: start, t: text('hi'), e: end('stop') };
      const turn1 = cold('-s-t-e|', events);
      const run = runEventedToolLoop({ provider: marbleProvider(turn1), registry: new ToolRegistry(), messages: ask(), prepareTurn: (input) => cold('--(i|)', { i: input }) });
      const legend = loopLegend(events, { 1: 'turn_start 1', E: 'turn_end 1 (stop): user, assistant "hi"', L: 'loop_end stop' });
      expectLoop(helpers, run).toBe('1--s-t-e(EL|)', legend);
      expectSubscriptions(turn1.subscriptions).toBe('--^-----!');
    });
  });
});
