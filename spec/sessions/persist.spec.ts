import { NEVER, Observable, Subject, concat, lastValueFrom, map, of, take, toArray } from 'rxjs';
import type { AgentMessage, ConversationEvent, LoopEvent, Provider } from '../../src/index.js';
import { conversation, runEventedToolLoop } from '../../src/index.js';
import { type SessionEntry, type SessionStore, SessionTree, memoryStore, persist } from '../../src/sessions/index.js';
import { historyModel, historyTools } from './support/model.js';

/** A memory store that also records each batch it was given. */
function recording(): SessionStore & { batches: SessionEntry[][] } {
  const inner = memoryStore();
  const batches: SessionEntry[][] = [];
  return { batches, load: () => inner.load(), append: (entries) => (batches.push([...entries]), inner.append(entries)) };
}

const treeOf = (store: SessionStore) => lastValueFrom(SessionTree.load(store));
const roles = (entries: readonly SessionEntry[]) => entries.map((e) => (e.type === 'message' ? e.message.role : e.type));

describe('persist (S2)', () => {
  it('S2: each message is appended once when it joins the history — the prompt at user_message, a turn at its turn_end — in order, parented on the leaf', async () => {
    const store = recording();
    const tree = await treeOf(store);
    const seen: ConversationEvent[] = [];
    const events = await lastValueFrom(
      of('What time is it?', 'thanks').pipe(
        conversation({ provider: historyModel(), registry: historyTools(), messages: tree.context() }),
        persist(tree, store),
        toArray(),
      ),
    );
    of('What time is it?', 'thanks').pipe(conversation({ provider: historyModel(), registry: historyTools() })).subscribe((e) => seen.push(e));
    expect(JSON.parse(JSON.stringify(events))).toEqual(JSON.parse(JSON.stringify(seen))); // every event unchanged
    expect(store.batches.map(roles)).toEqual([['user'], ['assistant', 'toolResult', 'toolResult'], ['assistant'], ['user'], ['assistant']]);
    const stored = store.batches.flat();
    stored.forEach((entry, index) => expect(entry.parentId).toBe(index === 0 ? null : stored[index - 1]!.id));
    const end = events[events.length - 1] as Extract<ConversationEvent, { type: 'loop_end' }>;
    expect(stored.map((e) => (e.type === 'message' ? e.message : undefined))).toEqual(end.messages);
    expect((await treeOf(store)).context()).toEqual(end.messages);
    expect(tree.leaf).toBe(stored[stored.length - 1]!.id);
  });

  it('S2: an aborted turn is stored as the loop\'s history keeps it: the aborted answer and its error: aborted results', async () => {
    const store = recording();
    const tree = await treeOf(store);
    const abort$ = new Subject<void>();
    const hangs: Provider = () =>
      concat(of({ type: 'message_start' as const }, { type: 'text_delta' as const, text: 'Let me' }, { type: 'tool_call' as const, call: { id: 'c1', name: 'slow', input: {} } }), NEVER);
    const registry = historyTools().register({ name: 'slow', description: 'never ends', input: {}, handler: () => NEVER });
    const prompts = new Subject<string>();
    const events: ConversationEvent[] = [];
    prompts.pipe(conversation({ provider: hangs, registry, abort$, messages: tree.context() }), persist(tree, store)).subscribe((e) => events.push(e));
    prompts.next('go');
    abort$.next();
    prompts.complete();
    const stored = store.batches.flat().map((e) => (e as Extract<SessionEntry, { type: 'message' }>).message);
    expect(stored).toEqual([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'Let me', stopReason: 'aborted', errorMessage: 'aborted', toolCalls: [{ id: 'c1', name: 'slow', input: {} }] },
      { role: 'toolResult', toolCallId: 'c1', toolName: 'slow', content: 'error: aborted', isError: true },
    ]);
    expect(stored).toEqual((events[events.length - 1] as Extract<ConversationEvent, { type: 'loop_end' }>).messages);
  });

  it('S2: a saved run whose calls had no results yet resumes (R22): only the new results are appended', async () => {
    const saved: AgentMessage[] = [
      { role: 'user', content: 'What time is it?' },
      { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [{ id: 'a', name: 'clock', input: {} }, { id: 'b', name: 'zone', input: { city: 'Rome' } }] },
      { role: 'toolResult', toolCallId: 'a', toolName: 'clock', content: '12:00', isError: false },
    ];
    const store = recording();
    const tree = await treeOf(store);
    await lastValueFrom(store.append(saved.map((message, index) => ({ id: `s${index}`, parentId: index === 0 ? null : `s${index - 1}`, type: 'message' as const, message, at: 'then' }))));
    const resumed = await treeOf(store);
    store.batches.length = 0;
    const events = await lastValueFrom(
      NEVER.pipe(conversation({ provider: historyModel(), registry: historyTools(), messages: resumed.context() }), persist(resumed, store), (source) =>
        new Observable<ConversationEvent>((s) => source.subscribe((e) => (s.next(e), e.type === 'loop_end' && s.complete()))),
        toArray(),
      ),
    );
    expect(events[0]).toEqual({ type: 'turn_start', turn: 0 });
    expect(store.batches.map(roles)).toEqual([['toolResult'], ['assistant']]);
    expect((await treeOf(store)).context()).toEqual((events[events.length - 1] as Extract<ConversationEvent, { type: 'loop_end' }>).messages);
    void tree;
  });

  it('S2, S5, R34: a compaction on turn_end is kept from the entry of the message at its firstKept, after a resumed turn 0 too (its results in call order, the tree\'s in the order written), from JSON copies of the events', async () => {
    const saved: AgentMessage[] = [
      { role: 'user', content: 'What time is it?' },
      { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [{ id: 'a', name: 'clock', input: {} }, { id: 'b', name: 'zone', input: { city: 'Rome' } }] },
      { role: 'toolResult', toolCallId: 'b', toolName: 'zone', content: 'CET (Rome)', isError: false },
    ];
    const store = memoryStore(saved.map((message, index) => ({ id: `s${index}`, parentId: index === 0 ? null : `s${index - 1}`, type: 'message' as const, message, at: 'then' })));
    const tree = await treeOf(store);
    // turn 1 reports a compaction kept from history[2]: the clock's result, which turn 0 made (call order puts it before the saved one)
    const events = await lastValueFrom(
      runEventedToolLoop({ provider: historyModel(), registry: historyTools(), messages: tree.context(), prepareTurn: (input) => ({ ...input, compaction: { summary: 'S', firstKept: 2 } }) }).pipe(
        map((event) => JSON.parse(JSON.stringify(event)) as LoopEvent),
        persist(tree, store),
        toArray(),
      ),
    );
    const ends = events.filter((e) => e.type === 'turn_end');
    expect(ends.map((e) => e.type === 'turn_end' && e.messages[2]!.role === 'toolResult' && e.messages[2]!.toolCallId)).toEqual(['a', 'a']);
    const stored = await lastValueFrom(store.load().pipe(toArray()));
    expect(roles(stored)).toEqual(['user', 'assistant', 'toolResult', 'toolResult', 'compaction', 'assistant']);
    expect(stored[4]).toMatchObject({ type: 'compaction', summary: 'S', firstKeptId: stored[3]!.id, parentId: stored[3]!.id });
    expect((await treeOf(store)).context().map((m) => m.content)).toEqual(['S', '12:00', 'It is 12:00 CET (Rome).']);
  });

  it('S2, S5: a compaction persist cannot place — the conversation did not start from tree.context() — is not recorded; every message is', async () => {
    const store = recording();
    const tree = await treeOf(memoryStore([{ id: 'x', parentId: null, type: 'message', message: { role: 'user', content: 'not this history' }, at: 'then' }]));
    const events = await lastValueFrom(
      of('hi', 'again').pipe(
        conversation({ provider: historyModel(), registry: historyTools(), messages: [{ role: 'user', content: 'another' }, { role: 'assistant', content: 'start', stopReason: 'stop' }], prepareTurn: (input) => ({ ...input, compaction: { summary: 'S', firstKept: 1 } }) }),
        persist(tree, store),
        toArray(),
      ),
    );
    expect(events.filter((e) => e.type === 'turn_end' && e.compaction !== undefined)).toHaveLength(2);
    expect(store.batches.map(roles)).toEqual([['user'], ['assistant'], ['user'], ['assistant']]);
  });

  it('S2, H8: a tool_approval writes nothing (a turn is written at its turn_end, S3): the prompt alone while a call waits, the turn once it was decided', async () => {
    const store = recording();
    const tree = await treeOf(store);
    const decisions = new Subject<{ toolCallId: string; decision: boolean }>();
    const seen: ConversationEvent[] = [];
    of('What time is it?')
      .pipe(
        conversation({ provider: historyModel(), registry: historyTools(), messages: tree.context(), approvals: { needsApproval: (call) => call.name === 'zone', decisions } }),
        persist(tree, store),
      )
      .subscribe((event) => seen.push(event));
    await new Promise((resolve) => setTimeout(resolve, 10)); // clock has answered; zone waits
    const waiting = seen.find((event) => event.type === 'tool_approval');
    if (waiting?.type !== 'tool_approval') throw new Error('no tool_approval');
    expect(store.batches.map(roles)).toEqual([['user']]);
    decisions.next({ toolCallId: waiting.call.id, decision: true });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(store.batches.map(roles)).toEqual([['user'], ['assistant', 'toolResult', 'toolResult'], ['assistant']]);
  });

  it('S2: on a plain loop (no conversation) the first turn_end appends the assistant message and its results', async () => {
    const store = recording();
    const tree = await treeOf(store);
    const messages: AgentMessage[] = [{ role: 'user', content: 'What time is it?' }];
    await lastValueFrom(store.append([{ id: 'u', parentId: null, type: 'message', message: messages[0]!, at: 'then' }]));
    const loaded = await treeOf(store);
    await lastValueFrom(runEventedToolLoop({ provider: historyModel(), registry: historyTools(), messages: loaded.context() }).pipe(persist(loaded, store), toArray()));
    expect(roles((await treeOf(store)).path())).toEqual(['user', 'assistant', 'toolResult', 'toolResult', 'assistant']);
    void tree;
    // R34: the same from JSON copies of the events; and an abort before the model call stores nothing (its stand-in is no message)
    const again = memoryStore([{ id: 'u', parentId: null, type: 'message', message: messages[0]!, at: 'then' }]);
    const copy = map((event: LoopEvent) => JSON.parse(JSON.stringify(event)) as LoopEvent);
    await lastValueFrom(runEventedToolLoop({ provider: historyModel(), registry: historyTools(), messages }).pipe(copy, persist(await treeOf(again), again), toArray()));
    expect(roles((await treeOf(again)).path())).toEqual(['user', 'assistant', 'toolResult', 'toolResult', 'assistant']);
    const waited = memoryStore([{ id: 'u', parentId: null, type: 'message', message: messages[0]!, at: 'then' }]);
    const controller = new AbortController();
    const run = runEventedToolLoop({ provider: historyModel(), registry: historyTools(), messages, prepareTurn: () => NEVER, signal: controller.signal }).pipe(copy, persist(await treeOf(waited), waited), toArray());
    const ended = lastValueFrom(run);
    controller.abort();
    expect((await ended).map((event) => event.type)).toEqual(['turn_start', 'turn_end', 'loop_end']);
    expect(roles((await treeOf(waited)).path())).toEqual(['user']);
  });

  it('S2: completes only once a store that answers later has written every batch; a store\'s error is its error', async () => {
    const inner = memoryStore();
    const later: SessionStore = { load: () => inner.load(), append: (entries) => new Observable<void>((s) => void setTimeout(() => inner.append(entries).subscribe(s), 5)) };
    const tree = await treeOf(later);
    let completed = false;
    const done = lastValueFrom(of('hi').pipe(conversation({ provider: historyModel(), registry: historyTools() }), persist(tree, later), toArray())).then((events) => {
      completed = true;
      return events;
    });
    await Promise.resolve();
    expect(completed).toBe(false);
    await done;
    expect(roles(await lastValueFrom(inner.load().pipe(toArray())))).toEqual(['user', 'assistant']);

    const failing: SessionStore = { load: () => of(), append: () => new Observable<void>((s) => s.error(new Error('disk full'))) };
    const broken = await treeOf(failing);
    await expect(lastValueFrom(of('hi').pipe(conversation({ provider: historyModel(), registry: historyTools() }), persist(broken, failing)))).rejects.toThrow('disk full');
  });

  it('S2: a steered prompt is appended between the turns it joined between', async () => {
    const store = recording();
    const tree = await treeOf(store);
    const prompts = new Subject<string>();
    const registry = historyTools();
    let steered = false;
    const events: ConversationEvent[] = [];
    prompts
      .pipe(conversation({ provider: historyModel(), registry, policy: 'steer' }), persist(tree, store))
      .subscribe((event) => {
        events.push(event);
        if (event.type === 'tool_result' && !steered) {
          steered = true;
          prompts.next('and the date?');
        }
      });
    prompts.next('What time is it?');
    prompts.complete();
    expect(store.batches.map(roles)).toEqual([['user'], ['assistant', 'toolResult', 'toolResult'], ['user'], ['assistant']]);
    expect((await treeOf(store)).context()).toEqual((events[events.length - 1] as Extract<ConversationEvent, { type: 'loop_end' }>).messages);
  });

  it('S2: a consumer that leaves at the first event closes the conversation at once, also during its synchronous start; what was handed to the store is written', async () => {
    const store = recording();
    const tree = await treeOf(store);
    let emitted = 0;
    const events = new Observable<ConversationEvent>((subscriber) => {
      subscriber.next({ type: 'user_message', message: { role: 'user', content: 'hi' }, messages: [{ role: 'user', content: 'hi' }] });
      emitted++;
      for (let turn = 1; turn <= 1_000 && !subscriber.closed; turn++, emitted++) subscriber.next({ type: 'turn_start', turn });
      subscriber.complete();
    });
    const seen = await lastValueFrom(events.pipe(persist(tree, store), take(1), toArray()));
    expect(seen.map((event) => event.type)).toEqual(['user_message']);
    expect(emitted).toBe(1); // the source saw the consumer gone before its next event
    expect(store.batches.map(roles)).toEqual([['user']]);
  });

  it('S2: a tree that is no SessionTree, or a store without load and append, is refused at call time', async () => {
    const tree = await treeOf(memoryStore());
    expect(() => persist({} as SessionTree, memoryStore())).toThrow(new TypeError('persist: tree must be a SessionTree, from SessionTree.load(store) (got {}, an object)'));
    expect(() => persist(tree, { load: () => of() } as unknown as SessionStore)).toThrow(
      new TypeError('persist: store must be a SessionStore, with load() and append(entries) (got {}, an object)'),
    );
    expect(() => SessionTree.load(null as never)).toThrow(new TypeError('SessionTree.load: store must be a SessionStore, with load() and append(entries) (got null)'));
  });
});
