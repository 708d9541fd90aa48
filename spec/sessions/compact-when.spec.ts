import fc from 'fast-check';
import { Observable, Subject, firstValueFrom, isObservable, lastValueFrom, map, of, toArray } from 'rxjs';
import type { AgentMessage, ConversationEvent, ProviderInput } from '../../src/index.js';
import { conversation, scriptedProvider } from '../../src/index.js';
import { SessionTree, compactWhen, memoryStore, persist } from '../../src/sessions/index.js';
import { cutPoint, estimate } from '../../src/sessions/compact-when.js';
import { TestScheduler } from 'rxjs/testing';
import { runEventedToolLoop } from '../../src/index.js';
import { assertValidHistory, described, marbleProvider, marbleTools } from '../../src/testing/index.js';
import { historyModel, historyTools, inputTokens } from './support/model.js';

const context = { turn: 1, signal: new AbortController().signal };

/** What a prepareTurn answered, as a Promise whatever form it took. */
async function prepared(answer: unknown): Promise<ProviderInput> {
  return isObservable(answer) ? firstValueFrom(answer as Observable<ProviderInput>) : (answer as ProviderInput);
}

/** A valid history: prompts, answers, and assistant messages with calls followed by their results. */
const historyArb: fc.Arbitrary<AgentMessage[]> = fc
  .array(
    fc.oneof(
      fc.record({ kind: fc.constant('user' as const), size: fc.nat(400) }),
      fc.record({ kind: fc.constant('answer' as const), size: fc.nat(400) }),
      fc.record({ kind: fc.constant('calls' as const), size: fc.nat(100), results: fc.array(fc.nat(800), { minLength: 1, maxLength: 4 }) }),
    ),
    { minLength: 1, maxLength: 25 },
  )
  .map((blocks) =>
    blocks.flatMap((block, b): AgentMessage[] => {
      if (block.kind === 'user') return [{ role: 'user', content: 'u'.repeat(block.size) }];
      if (block.kind === 'answer') return [{ role: 'assistant', content: 'a'.repeat(block.size), stopReason: 'stop' }];
      const calls = block.results.map((_, i) => ({ id: `c${b}_${i}`, name: 'read', input: { i } }));
      return [
        { role: 'assistant', content: 'a'.repeat(block.size), stopReason: 'toolUse', toolCalls: calls },
        ...block.results.map((size, i): AgentMessage => ({ role: 'toolResult', toolCallId: calls[i]!.id, toolName: 'read', content: 'r'.repeat(size), isError: false })),
      ];
    }),
  );

describe('compactWhen (S5)', () => {
  it('S5: never cuts between a tool call and its result: every cut point starts the kept part at a message that is not a result (property)', () => {
    fc.assert(
      fc.property(historyArb, fc.nat(30), fc.nat(3000), (history, start, keep) => {
        const from = Math.min(start, history.length);
        const cut = cutPoint(history, from, keep);
        if (cut === undefined) return;
        expect(cut).toBeGreaterThan(from);
        expect(cut).toBeLessThan(history.length);
        expect(history[cut]!.role).not.toBe('toolResult');
      }),
      { numRuns: 500 },
    );
  });

  it('S5: over maxTokens it sends the system messages, the summary of the oldest messages and the newest ones whole, the prompt among them, a valid history; under, the input as it is (property)', async () => {
    await fc.assert(
      fc.asyncProperty(historyArb, fc.integer({ min: 1, max: 3000 }), fc.nat(100), fc.nat(400), async (messages, maxTokens, keepShare, systemSize) => {
        // now and then a system prompt first: never summarised
        const history: AgentMessage[] = systemSize % 2 === 0 ? messages : [{ role: 'system', content: 's'.repeat(systemSize) }, ...messages];
        const systems = history.filter((m) => m.role === 'system');
        const keepRecentTokens = Math.floor(((maxTokens - 1) * keepShare) / 100);
        const asked: (readonly AgentMessage[])[] = [];
        const prepare = compactWhen({ maxTokens, keepRecentTokens, summarize: (messages) => (asked.push(messages), of(`summary of ${messages.length}`)) });
        const input: ProviderInput = { messages: history.slice(), tools: [] };
        const view = await prepared(prepare(input, context));
        expect(input.messages).toEqual(history); // the loop's own history stays whole
        if (estimate(history) <= maxTokens) {
          expect(view).toBe(input);
          expect(asked).toEqual([]);
          return;
        }
        if (view === input) return expect(asked).toEqual([]);
        expect(asked).toHaveLength(1);
        expect(view.messages.slice(0, systems.length)).toEqual(systems);
        const kept = view.messages.slice(systems.length + 1);
        expect(view.messages[systems.length]).toEqual({ role: 'user', content: `summary of ${asked[0]!.length}` });
        expect([...systems, ...asked[0]!, ...kept]).toEqual(history); // summarised + kept = the history, in order, each message once
        expect(asked[0]!.filter((m) => m.role === 'system')).toEqual([]);
        const prompt = history.findLast((m) => m.role === 'user');
        if (prompt !== undefined) expect(kept).toContain(prompt);
        expect(kept[0]!.role).not.toBe('toolResult');
        assertValidHistory(view.messages);
      }),
      { numRuns: 300 },
    );
  });

  it('S5: in a conversation the tree gains a compaction entry, turn_end.messages stays whole, and the summary is sent again without summarising again', async () => {
    const store = memoryStore();
    const tree = await lastValueFrom(SessionTree.load(store));
    const summaries: (readonly AgentMessage[])[] = [];
    const provider = historyModel();
    const inputs: ProviderInput[] = [];
    const events = await lastValueFrom(
      of('What time is it? '.repeat(20), 'and now, what time is it?', 'thanks', 'and bye').pipe(
        conversation({
          provider: (input) => (inputs.push(input), provider(input)),
          registry: historyTools(),
          messages: tree.context(),
          prepareTurn: compactWhen({ maxTokens: 100, keepRecentTokens: 30, summarize: (messages) => (summaries.push(messages), of(`SUMMARY(${messages.length})`)) }),
        }),
        persist(tree, store),
        toArray(),
      ),
    );
    const ends = events.filter((e): e is Extract<ConversationEvent, { type: 'turn_end' }> => e.type === 'turn_end');
    const last = ends[ends.length - 1]!;
    expect(last.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'toolResult', 'assistant', 'user', 'assistant', 'toolResult', 'toolResult', 'assistant', 'user', 'assistant', 'user', 'assistant']);
    expect(summaries.length).toBeGreaterThan(0);
    expect(summaries.length).toBeLessThan(inputs.length); // remembered: not every call summarises again
    const compacted = inputs.filter((input) => input.messages[0]!.content.startsWith('SUMMARY'));
    expect(compacted.length).toBeGreaterThan(summaries.length);
    for (const input of inputs) assertValidHistory(input.messages);

    const entries = await lastValueFrom(store.load().pipe(toArray()));
    const compactions = entries.filter((e) => e.type === 'compaction');
    expect(compactions).toHaveLength(summaries.length);
    const reloaded = await lastValueFrom(SessionTree.load(store));
    const contextNow = reloaded.context();
    expect(contextNow[0]).toEqual({ role: 'user', content: compactions[compactions.length - 1]!.type === 'compaction' ? (compactions[compactions.length - 1] as { summary: string }).summary : '' });
    expect(contextNow.slice(1)).toEqual(last.messages.slice(last.messages.length - contextNow.length + 1));
    assertValidHistory(contextNow);
    // the path still holds every message: nothing was deleted
    expect(reloaded.path().filter((e) => e.type === 'message').map((e) => (e as { message: AgentMessage }).message)).toEqual(last.messages);
  });

  it('S5 (5), R34: prepareTurn\'s context tells the previous provider call\'s usage (none on a loop\'s first call), and the estimate is its inputTokens plus chars/4 of the messages since', async () => {
    const told: unknown[] = [];
    const seen: (readonly AgentMessage[])[] = [];
    const end = await lastValueFrom(
      of('What time is it?').pipe(
        conversation({ provider: historyModel(), registry: historyTools(), prepareTurn: (input, { lastUsage }) => (told.push(lastUsage), seen.push(input.messages), input) }),
      ),
    );
    const messages = (end as Extract<ConversationEvent, { type: 'loop_end' }>).messages;
    // turn 1 asked the time (its call reported its input tokens and 5 out), turn 2 answered
    expect(told).toEqual([undefined, { inputTokens: inputTokens(messages.slice(0, 1)), outputTokens: 5 }]);
    const since = seen[1]!.slice(1).reduce((sum, m) => sum + Math.ceil((m.content.length + (m.role === 'assistant' && m.toolCalls ? JSON.stringify(m.toolCalls).length : 0)) / 4), 0);
    const known = (m: AgentMessage) => (m === seen[1]![1] ? inputTokens(messages.slice(0, 1)) : undefined);
    expect(estimate(seen[1]!, known)).toBe(inputTokens(messages.slice(0, 1)) + since);
    expect(estimate(seen[1]!)).toBe(Math.ceil(messages[0]!.content.length / 4) + since); // no usage known: chars/4 of all
  });

  it('S5 (5), R34: compactWhen learns the last usage from prepareTurn\'s context alone: no persist, and the same history compacts only when the model reported a large input', async () => {
    const run = async (reported: number | undefined) => {
      const summarised: (readonly AgentMessage[])[] = [];
      const model = historyModel();
      // the same model, its usage replaced: what decides is what the loop tells compactWhen of it
      const provider: typeof model = (input) =>
        model(input).pipe(map((event) => (event.type === 'message_end' && event.usage !== undefined ? { ...event, usage: reported === undefined ? undefined : { inputTokens: reported, outputTokens: 5 } } : event)));
      await lastValueFrom(
        of('What time is it?').pipe(
          conversation({
            provider,
            registry: historyTools(),
            messages: [{ role: 'user', content: 'an earlier question' }, { role: 'assistant', content: 'an earlier answer', stopReason: 'stop' }],
            prepareTurn: compactWhen({ maxTokens: 1000, keepRecentTokens: 10, summarize: (messages) => (summarised.push(messages), of('SUMMARY')) }),
          }),
          toArray(),
        ),
      );
      return summarised;
    };
    expect(await run(undefined)).toEqual([]); // chars/4 of the history: far below maxTokens
    expect(await run(100)).toEqual([]);
    expect((await run(5000)).map((messages) => messages.map((m) => m.content))).toEqual([['an earlier question', 'an earlier answer']]); // turn 2, the prompt kept
  });

  it('S5 (5): a system message is never summarised: sent first, as it is; the tree\'s context keeps it too, before the summary', async () => {
    const system: AgentMessage = { role: 'system', content: 'Answer in French. '.repeat(20) };
    const history: AgentMessage[] = [
      system,
      { role: 'user', content: 'x'.repeat(400) },
      { role: 'system', content: 'Be brief.' },
      { role: 'assistant', content: 'y'.repeat(400), stopReason: 'stop' },
      { role: 'user', content: 'next' },
    ];
    const asked: (readonly AgentMessage[])[] = [];
    const prepare = compactWhen({ maxTokens: 100, keepRecentTokens: 5, summarize: (messages) => (asked.push(messages), of('SUMMARY')) });
    const view = await prepared(prepare({ messages: history, tools: [] }, context));
    expect(asked).toEqual([[history[1]]]);
    expect(view.messages).toEqual([system, history[2], { role: 'user', content: 'SUMMARY' }, history[3], history[4]]);

    const store = memoryStore(history.map((message, index) => ({ id: `${index + 1}`, parentId: index === 0 ? null : `${index}`, type: 'message', message, at: 'then' })));
    const tree = await lastValueFrom(SessionTree.load(store));
    const inputs: ProviderInput[] = [];
    const model = historyModel();
    await lastValueFrom(
      of('thanks').pipe(
        conversation({ provider: (input) => (inputs.push(input), model(input)), registry: historyTools(), messages: tree.context(), prepareTurn: compactWhen({ maxTokens: 100, keepRecentTokens: 5, summarize: () => of('SUMMARY') }) }),
        persist(tree, store),
        toArray(),
      ),
    );
    expect(inputs[0]!.messages.slice(0, 3)).toEqual([system, history[2], { role: 'user', content: 'SUMMARY' }]);
    const reloaded = await lastValueFrom(SessionTree.load(store));
    expect(reloaded.context().slice(0, 3)).toEqual([system, history[2], { role: 'user', content: 'SUMMARY' }]);
    expect(reloaded.context().slice(0, inputs[0]!.messages.length)).toEqual(inputs[0]!.messages);
  });

  it('S5 (5): the prompt the turn answers is never summarised, however small keepRecentTokens is (a tool turn\'s results after it)', async () => {
    const history: AgentMessage[] = [
      { role: 'user', content: 'x'.repeat(400) },
      { role: 'assistant', content: 'y'.repeat(400), stopReason: 'stop' },
      { role: 'user', content: 'Read the log, then the other log.' },
      { role: 'user', content: 'And the third.' },
      { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [{ id: 'read', name: 'read', input: {} }] },
      { role: 'toolResult', toolCallId: 'read', toolName: 'read', content: 'L'.repeat(200), isError: false },
    ];
    const asked: (readonly AgentMessage[])[] = [];
    const prepare = compactWhen({ maxTokens: 60, keepRecentTokens: 1, summarize: (messages) => (asked.push(messages), of('SUMMARY')) });
    const view = await prepared(prepare({ messages: history, tools: [] }, context));
    expect(asked).toEqual([history.slice(0, 2)]);
    expect(view.messages).toEqual([{ role: 'user', content: 'SUMMARY' }, ...history.slice(2)]);
    expect(cutPoint(history.slice(2), 0, 1)).toBeUndefined(); // nothing before the prompts: nothing to summarise
  });

  it('S5: the summary call is an Observable that is unsubscribed when the loop is', () => {
    const history: AgentMessage[] = [
      { role: 'user', content: 'x'.repeat(400) },
      { role: 'assistant', content: 'y'.repeat(400), stopReason: 'stop' },
      { role: 'user', content: 'next' },
    ];
    let subscribed = 0;
    let unsubscribed = 0;
    const pending = new Subject<string>();
    const summarize = () =>
      new Observable<string>((subscriber) => {
        subscribed++;
        const inner = pending.subscribe(subscriber);
        return () => (unsubscribed++, inner.unsubscribe());
      });
    const provider = scriptedProvider([]);
    const running = of('more').pipe(conversation({ provider, registry: historyTools(), messages: history, prepareTurn: compactWhen({ maxTokens: 50, keepRecentTokens: 10, summarize }) })).subscribe();
    expect(subscribed).toBe(1);
    expect(provider.inputs).toEqual([]); // the model waits for the summary
    running.unsubscribe();
    expect(unsubscribed).toBe(1);
    expect(pending.observed).toBe(false);
  });

  it('S5: marbles/29\'s compaction: the cut moves back from the result to its call; the model sees the summary, then the rest whole', async () => {
    const history: AgentMessage[] = [
      { role: 'user', content: 'Read the log.' },
      { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [{ id: 'read', name: 'read', input: {} }] },
      { role: 'toolResult', toolCallId: 'read', toolName: 'read', content: 'L'.repeat(200), isError: false },
      { role: 'assistant', content: 'The log is fine.', stopReason: 'stop' },
      { role: 'user', content: 'Anything else?' },
    ];
    const asked: (readonly AgentMessage[])[] = [];
    const prepare = compactWhen({ maxTokens: 60, keepRecentTokens: 50, summarize: (messages) => (asked.push(messages), of('The user asked to read the log.')) });
    const view = await prepared(prepare({ messages: history, tools: [] }, context));
    expect(asked).toEqual([history.slice(0, 1)]);
    expect(view.messages).toEqual([{ role: 'user', content: 'The user asked to read the log.' }, ...history.slice(1)]);
  });

  it('S5: unsubscribing the loop while the summary is on its way unsubscribes the summary call, and no model call is made (subscription marks)', () => {
    const history: AgentMessage[] = [
      { role: 'user', content: 'x'.repeat(400) },
      { role: 'assistant', content: 'y'.repeat(400), stopReason: 'stop' },
      { role: 'user', content: 'next' },
    ];
    new TestScheduler((actual, expected) => expect(actual).toEqual(expected)).run(({ cold, expectObservable, expectSubscriptions }) => {
      const summary = cold('-----(S|)', { S: 'too late' });
      const provider = marbleProvider();
      const run = runEventedToolLoop({
        provider,
        registry: marbleTools({}),
        messages: history,
        prepareTurn: compactWhen({ maxTokens: 60, keepRecentTokens: 10, summarize: () => summary }),
      });
      expectObservable(run.pipe(described), '^-!').toBe('1', { 1: 'turn_start 1' });
      expectSubscriptions(summary.subscriptions).toBe('^-!');
    });
  });

  it('S5: a summary that never comes or is no string ends the turn as a failing prepareTurn does (H6)', async () => {
    const run = (summarize: () => Observable<unknown>) =>
      lastValueFrom(
        of('x'.repeat(100)).pipe(
          conversation({ provider: historyModel(), registry: historyTools(), messages: [{ role: 'user', content: 'y'.repeat(400) }, { role: 'assistant', content: 'z', stopReason: 'stop' }], prepareTurn: compactWhen({ maxTokens: 20, keepRecentTokens: 5, summarize: summarize as () => Observable<string> }) }),
        ),
      );
    expect(((await run(() => of())) as Extract<ConversationEvent, { type: 'loop_end' }>).assistant.errorMessage).toBe('prepareTurn failed: compactWhen: summarize completed without a summary');
    expect(((await run(() => of(42))) as Extract<ConversationEvent, { type: 'loop_end' }>).assistant.errorMessage).toBe('prepareTurn failed: compactWhen: summarize must emit a string (got 42, a number)');
  });

  it('S5: options are checked at call time', () => {
    const summarize = () => of('s');
    expect(() => compactWhen({ maxTokens: 0, keepRecentTokens: 0, summarize })).toThrow(new RangeError('compactWhen: maxTokens must be an integer >= 1 (got 0, a number)'));
    expect(() => compactWhen({ maxTokens: 10, keepRecentTokens: 10, summarize })).toThrow(new RangeError('compactWhen: keepRecentTokens must be an integer >= 0 and below maxTokens (got 10, a number)'));
    expect(() => compactWhen({ maxTokens: 10, keepRecentTokens: 1, summarize: 'no' as never })).toThrow(new TypeError('compactWhen: summarize must be a function (got "no", a string)'));
  });
});
