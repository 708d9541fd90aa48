import { lastValueFrom, toArray } from 'rxjs';
import { TokenBudget, ToolRegistry, agentTool, conversation, runEventedToolLoop, scriptedProvider, toViewModel } from '../../src/index.js';
import type { LoopEvent, LoopEventOf, ProviderEvent, ToolContext, Usage } from '../../src/index.js';
import { from } from 'rxjs';

const usage = (inputTokens: number, outputTokens: number): Usage => ({ inputTokens, outputTokens });
const asks = (id: string, tokens: Usage): ProviderEvent[] => [
  { type: 'message_start' },
  { type: 'tool_call', call: { id, name: 'echo', input: { text: id } } },
  { type: 'message_end', stopReason: 'toolUse', usage: tokens },
];
const answers = (text: string, tokens: Usage): ProviderEvent[] => [
  { type: 'message_start' },
  { type: 'text_delta', text },
  { type: 'message_end', stopReason: 'stop', usage: tokens },
];
const echo = { name: 'echo', description: 'Echoes', input: { text: 'what' }, handler: (input: Record<string, string>) => input.text! };
const messages = [{ role: 'user' as const, content: 'go' }];

function run(events: ReturnType<typeof runEventedToolLoop>): Promise<LoopEvent[]> {
  return lastValueFrom(events.pipe(toArray()));
}

function endOf(events: LoopEvent[]): LoopEventOf<'loop_end'> {
  return events.at(-1) as LoopEventOf<'loop_end'>;
}

describe('TokenBudget and the loop (L3)', () => {
  it('L3: a budget counts input and output tokens; left never goes below 0', () => {
    const budget = new TokenBudget(100);
    expect([budget.maxTokens, budget.used, budget.left]).toEqual([100, 0, 100]);
    budget.charge(usage(30, 20));
    expect([budget.used, budget.left]).toEqual([50, 50]);
    budget.charge({ inputTokens: 60, outputTokens: 10, cacheReadTokens: 1000 } as Usage);
    expect([budget.used, budget.left]).toEqual([120, 0]);
  });

  it('L3: a limit that is not a number >= 0 is a TypeError at call time; Infinity is no limit', () => {
    expect(() => new TokenBudget(-1)).toThrow(new TypeError('TokenBudget: maxTokens must be a number >= 0 (got -1, a number)'));
    expect(() => new TokenBudget(NaN)).toThrow(TypeError);
    expect(() => new TokenBudget('100' as never)).toThrow(/got "100", a string/);
    expect(() => new TokenBudget(undefined as never)).toThrow(TypeError);
    expect(new TokenBudget(Infinity).left).toBe(Infinity);
    expect(() => runEventedToolLoop({ provider: scriptedProvider([]), registry: new ToolRegistry(), messages, budget: 5 as never })).toThrow(
      new TypeError('runEventedToolLoop: budget must be a TokenBudget (got 5, a number)'),
    );
  });

  it('L3: new TokenBudget(0) allows no call: the loop ends with reason budget and the provider is never subscribed', async () => {
    const provider = scriptedProvider([answers('never', usage(1, 1))]);
    const events = await run(runEventedToolLoop({ provider, registry: new ToolRegistry(), messages, budget: new TokenBudget(0) }));
    expect(events).toEqual([
      {
        type: 'loop_end',
        reason: 'budget',
        assistant: { role: 'assistant', content: '', stopReason: 'error', errorMessage: 'token budget spent: 0 of 0 tokens used' },
        messages,
        usage: usage(0, 0),
      },
    ]);
    expect(provider.inputs).toHaveLength(0);
  });

  it('L3: every provider call is charged; when the budget is spent the loop ends before the next turn, the history whole and the last answer kept', async () => {
    const provider = scriptedProvider([asks('a', usage(40, 10)), asks('b', usage(45, 10)), answers('done', usage(1, 1))]);
    const budget = new TokenBudget(100);
    const events = await run(runEventedToolLoop({ provider, registry: new ToolRegistry().register(echo), messages, budget }));
    const end = endOf(events);
    expect(end.reason).toBe('budget');
    expect(provider.inputs).toHaveLength(2);
    expect(budget.used).toBe(105);
    const lastTurn = events.filter((event) => event.type === 'turn_end').at(-1) as LoopEventOf<'turn_end'>;
    expect(end.assistant).toEqual(lastTurn.assistant); // the last answer, its call answered in the history
    expect(end.messages).toEqual(lastTurn.messages);
    expect(end.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant', 'toolResult']);
  });

  it('L3: a budget that lasts changes nothing: the loop ends as it would, every call charged', async () => {
    const provider = scriptedProvider([asks('a', usage(40, 10)), answers('done', usage(5, 5))]);
    const budget = new TokenBudget(1000);
    const end = endOf(await run(runEventedToolLoop({ provider, registry: new ToolRegistry().register(echo), messages, budget })));
    expect([end.reason, end.assistant.content, budget.used]).toEqual(['stop', 'done', 60]);
  });

  it("L3: ToolContext.budget is the loop's", async () => {
    const seen: (ToolContext['budget'] | 'none')[] = [];
    const spy = { ...echo, handler: (input: Record<string, string>, context: ToolContext) => (seen.push(context.budget ?? 'none'), input.text!) };
    const budget = new TokenBudget(1000);
    const script = () => scriptedProvider([asks('a', usage(1, 1)), answers('done', usage(1, 1))]);
    await run(runEventedToolLoop({ provider: script(), registry: new ToolRegistry().register(spy), messages, budget }));
    await run(runEventedToolLoop({ provider: script(), registry: new ToolRegistry().register(spy), messages }));
    expect(seen).toEqual([budget, 'none']);
  });

  /** An outer loop that asks its researcher once, then answers; the researcher's own two calls cost 30 + 30. */
  async function nested(giveBudget: boolean, budget: TokenBudget) {
    const inner = scriptedProvider([asks('i1', usage(20, 10)), answers('found', usage(20, 10))]);
    const researcher = agentTool({
      name: 'researcher',
      description: 'Researches',
      agent: (_input, context) =>
        runEventedToolLoop({
          provider: inner,
          registry: new ToolRegistry().register(echo),
          messages: [{ role: 'user', content: 'research' }],
          signal: context.signal,
          ...(giveBudget && context.budget !== undefined && { budget: context.budget }),
        }),
    });
    const outer = scriptedProvider([
      [{ type: 'message_start' }, { type: 'tool_call', call: { id: 'r', name: 'researcher', input: {} } }, { type: 'message_end', stopReason: 'toolUse', usage: usage(5, 5) }],
      answers('done', usage(5, 5)),
    ]);
    const events = await run(runEventedToolLoop({ provider: outer, registry: new ToolRegistry().register(researcher), messages, budget }));
    return { events, inner, outer };
  }

  it('L3: an inner loop given the budget charges the same ledger as it goes; its loop_end charges nothing more', async () => {
    const budget = new TokenBudget(1000);
    const charged: number[] = [];
    const watched = new Proxy(budget, {
      get: (target, key) => (key === 'charge' ? (u: Usage) => (charged.push(u.inputTokens + u.outputTokens), target.charge(u)) : Reflect.get(target, key, target)),
    });
    const { events } = await nested(true, watched);
    expect(endOf(events).reason).toBe('stop');
    expect(budget.used).toBe(10 + 60 + 10); // outer, inner (both calls), outer — each once
    // as it goes, each call when its turn ends: the inner calls (inside the outer turn 1), outer turn 1, outer turn 2;
    // nothing more at the inner loop_end
    expect(charged).toEqual([30, 30, 10, 10]);
  });

  it('L3: an inner loop not given the budget is charged to it when its loop_end comes up (A2 usage), so nested agents cannot overspend unseen', async () => {
    const budget = new TokenBudget(1000);
    const { events } = await nested(false, budget);
    expect(endOf(events).reason).toBe('stop');
    expect(budget.used).toBe(80);
  });

  it('L3: a budget spent by an inner agent ends the outer loop before its next turn', async () => {
    const budget = new TokenBudget(50); // the outer call (10) and the inner ones (60) spend it
    const { events, outer } = await nested(true, budget);
    expect(endOf(events).reason).toBe('budget');
    expect(outer.inputs).toHaveLength(1);
    expect(budget.left).toBe(0);
  });

  it('L3: one budget for a conversation: a loop that starts with it spent ends at once with budget; the view model is done', async () => {
    const budget = new TokenBudget(15);
    const provider = scriptedProvider([answers('one', usage(10, 10)), answers('never', usage(1, 1))]);
    const events = await lastValueFrom(from(['first', 'second']).pipe(conversation({ provider, registry: new ToolRegistry(), budget }), toArray()));
    const ends = events.filter((event) => event.type === 'loop_end') as LoopEventOf<'loop_end'>[];
    expect(ends.map((end) => end.reason)).toEqual(['stop', 'budget']);
    expect(provider.inputs).toHaveLength(1);
    const states = await lastValueFrom(from(events).pipe(toViewModel(), toArray()));
    expect(states.at(-1)!.status).toBe('done');
  });

  describe('L3 with a typed answer (J2, J3)', () => {
    const output = { jsonSchema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };

    it('L3, J2: an answer turn is a provider call like any other: its usage is charged to the budget', async () => {
      const budget = new TokenBudget(1000);
      const provider = scriptedProvider([answers('Oslo', usage(10, 5)), answers('{"city":"Oslo"}', usage(20, 7))]);
      const end = endOf(await run(runEventedToolLoop({ provider, registry: new ToolRegistry(), messages, output, budget })));
      expect([end.reason, end.output, provider.inputs.length]).toEqual(['stop', { city: 'Oslo' }, 2]);
      expect(budget.used).toBe(42);
    });

    it('L3, J3: a budget spent by the turn before allows no answer turn: the loop ends with budget, the last answer kept', async () => {
      const budget = new TokenBudget(15);
      const provider = scriptedProvider([answers('Oslo', usage(10, 5)), answers('{"city":"Oslo"}', usage(20, 7))]);
      const events = await run(runEventedToolLoop({ provider, registry: new ToolRegistry(), messages, output, budget }));
      const end = endOf(events);
      expect([end.reason, end.assistant.content, 'output' in end, provider.inputs.length]).toEqual(['budget', 'Oslo', false, 1]);
      expect(events.filter((event) => event.type === 'turn_start')).toHaveLength(1);
    });

    it('L3, J2: a valid answer ends the loop with it even when that answer spent the budget (no call is needed to take it)', async () => {
      const budget = new TokenBudget(15);
      const provider = scriptedProvider([answers('{"city":"Oslo"}', usage(10, 5))]);
      const end = endOf(await run(runEventedToolLoop({ provider, registry: new ToolRegistry(), messages, output, budget })));
      expect([end.reason, end.output, budget.used]).toEqual(['stop', { city: 'Oslo' }, 15]);
    });
  });
});
