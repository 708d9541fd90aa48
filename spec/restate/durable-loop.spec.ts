/** D1 on an engine in memory: what a provider step and a tool step journal, and what a replay makes of it. */
import { NEVER, Observable, lastValueFrom, toArray } from 'rxjs';
import type { LoopEvent, Provider, ProviderEvent } from '../../src/index.js';
import { ToolRegistry, toolProgress } from '../../src/index.js';
import { durableLoop, mergeText } from '../../src/restate/index.js';
import { answerTurn, call, end, loopEndOf, start, text, tool } from '../support/events.js';
import { MemoryJournal } from './support/memory-journal.js';

/** A provider that plays `turns` by call count and counts its calls, each reply streamed one event a tick. */
function counted(turns: ProviderEvent[][]): Provider & { calls: number } {
  const provider = Object.assign(
    () =>
      new Observable<ProviderEvent>((subscriber) => {
        const events = turns[provider.calls++] ?? answerTurn('no more');
        let index = 0;
        const next = () => {
          if (index < events.length) {
            subscriber.next(events[index++]!);
            timer = setTimeout(next, 1);
          } else subscriber.complete();
        };
        let timer = setTimeout(next, 1);
        return () => clearTimeout(timer);
      }),
    { calls: 0 },
  );
  return provider;
}

const turns = () => [
  [start, text('Hel'), text('lo'), call('lookup', { q: 'x' }, 'c1'), end('toolUse')],
  [start, text('do'), text('n'), text('e'), end('stop')],
];
const run = (journal: MemoryJournal, provider: Provider, registry: ToolRegistry) =>
  lastValueFrom(durableLoop(journal, { provider, registry, messages: [{ role: 'user', content: 'hi' }] }).pipe(toArray()));
const withoutText = (events: LoopEvent[]) => events.filter((event) => event.type !== 'text_delta');
const textOf = (events: LoopEvent[]) => events.flatMap((event) => (event.type === 'text_delta' ? [event.text] : [])).join('');

describe('durableLoop', () => {
  let runs = 0;
  // a tool that ends after the reply: where a tool ends while the model still streams, a replay (whose reply
  // comes at once) may place its events elsewhere among the provider's — each source keeps its own order
  const registry = () =>
    new ToolRegistry().register(tool('lookup', ({ q }) => new Promise((resolve) => setTimeout(() => resolve(`found ${q} (${++runs})`), 20)), { q: 'what' }));
  beforeEach(() => (runs = 0));

  it('D1: mergeText joins consecutive text_deltas and keeps every other event where it was', () => {
    expect(mergeText([start, text('a'), text('b'), call('t'), text('c'), end('stop')])).toEqual([start, text('ab'), call('t'), text('c'), end('stop')]);
    expect(mergeText([])).toEqual([]);
  });

  it('D1: a provider call is one step that journals the reply with text merged, a tool call one step with its result; the first run streams every delta live', async () => {
    const journal = new MemoryJournal();
    const events = await run(journal, counted(turns()), registry());
    expect(events.filter((event) => event.type === 'text_delta')).toEqual([text('Hel'), text('lo'), text('do'), text('n'), text('e')]);
    expect(journal.names).toEqual(['model call 1', 'tool lookup c1', 'model call 2']);
    expect(journal.entries.map((entry) => entry?.value)).toEqual([
      { events: [start, text('Hello'), call('lookup', { q: 'x' }, 'c1'), end('toolUse')] },
      { result: 'found x (1)' },
      { events: [start, text('done'), end('stop')] },
    ]);
    expect(loopEndOf(events).messages.map((m) => m.content)).toEqual(['hi', 'Hello', 'found x (1)', 'done']);
  });

  it('D1: a replay calls no model and runs no tool; its history and every event but text_delta equal the first run\'s, and the text is the same', async () => {
    const journal = new MemoryJournal();
    const first = await run(journal, counted(turns()), registry());
    const provider = counted(turns());
    const replay = journal.afterCrash();
    const again = await run(replay, provider, registry());
    expect(provider.calls).toBe(0);
    expect(runs).toBe(1);
    expect(replay.ran).toBe(0);
    expect(withoutText(again)).toEqual(withoutText(first));
    expect(textOf(again)).toBe(textOf(first));
    expect(loopEndOf(again).messages).toEqual(loopEndOf(first).messages);
  });

  it('D1: after a crash the replay takes the finished steps from the journal and goes on live from the first unfinished one', async () => {
    const journal = new MemoryJournal();
    const first = await run(journal, counted(turns()), registry());
    const provider = counted(turns().slice(1)); // only the second reply is asked for again
    const again = await run(journal.afterCrash(2), provider, registry());
    expect(provider.calls).toBe(1);
    expect(runs).toBe(1);
    expect(loopEndOf(again).messages).toEqual(loopEndOf(first).messages);
  });

  it("D1, F4: a tool's attachments are journaled with its result: the replay gives them back without running the tool", async () => {
    const chart = { type: 'image' as const, mimeType: 'image/png', data: Buffer.alloc(300, 5).toString('base64') };
    const drawing = () => new ToolRegistry().register(tool('lookup', () => ({ content: `chart ${++runs}`, attachments: [chart] }), { q: 'what' }));
    const journal = new MemoryJournal();
    const first = await run(journal, counted(turns()), drawing());
    expect(journal.entries[1]?.value).toEqual({ result: { content: 'chart 1', attachments: [chart] } });
    const again = await run(journal.afterCrash(), counted(turns()), drawing());
    expect(runs).toBe(1);
    expect(loopEndOf(again).messages[2]).toEqual({ role: 'toolResult', toolCallId: 'c1', toolName: 'lookup', content: 'chart 1', isError: false, attachments: [chart] });
    expect(loopEndOf(again).messages).toEqual(loopEndOf(first).messages);
  });

  it('D1, R25: a tool failure is journaled: the replay gives the same error result, its cause and stack included, without running the tool', async () => {
    let failures = 0;
    const failing = () =>
      new ToolRegistry().register(
        tool('lookup', () => {
          failures++;
          throw new TypeError('no index');
        }, { q: 'what' }),
      );
    const journal = new MemoryJournal();
    const first = await run(journal, counted(turns()), failing());
    const again = await run(journal.afterCrash(), counted(turns()), failing());
    expect(failures).toBe(1);
    const result = loopEndOf(again).messages[2];
    expect(result).toMatchObject({ role: 'toolResult', content: 'error: no index', isError: true, details: { error: { name: 'TypeError', message: 'no index', stack: expect.stringContaining('no index') } } });
    expect(loopEndOf(again).messages).toEqual(loopEndOf(first).messages);
  });

  it('D1, R10: a provider that errors mid-reply is journaled with the events it sent: the replay ends the turn with the same errorMessage and text', async () => {
    const broken: Provider = () => new Observable<ProviderEvent>((subscriber) => {
      subscriber.next(start);
      subscriber.next(text('par'));
      subscriber.next(text('tial'));
      setTimeout(() => subscriber.error(new Error('connection reset')), 1);
    });
    const journal = new MemoryJournal();
    const first = await run(journal, broken, registry());
    const again = await run(journal.afterCrash(), () => { throw new Error('called on replay'); }, registry());
    expect(loopEndOf(first)).toMatchObject({ reason: 'error', assistant: { content: 'partial', errorMessage: expect.stringContaining('connection reset') } });
    expect(loopEndOf(again)).toEqual(loopEndOf(first));
  });

  it('D1, R14: tool progress reaches the loop live on the first run; a replay has the result alone', async () => {
    const progressing = () =>
      new ToolRegistry().register(tool('lookup', () => new Observable((subscriber) => {
        subscriber.next(toolProgress('half'));
        setTimeout(() => (subscriber.next('whole'), subscriber.complete()), 1);
      }), { q: 'what' }));
    const journal = new MemoryJournal();
    const first = await run(journal, counted(turns()), progressing());
    const again = await run(journal.afterCrash(), counted(turns()), progressing());
    expect(first.filter((event) => event.type === 'tool_update').map((event) => event.type === 'tool_update' && event.content)).toEqual(['half']);
    expect(again.filter((event) => event.type === 'tool_update')).toEqual([]);
    expect(loopEndOf(again).messages).toEqual(loopEndOf(first).messages);
  });

  it('D1, R20: durableLoop checks what it is given at call time, naming it', () => {
    const options = { provider: counted([]), registry: registry(), messages: [] };
    expect(() => durableLoop({} as MemoryJournal, options)).toThrow(new TypeError('durableLoop: ctx must have a run(name, fn) method, as a Restate context has (got {}, an object)'));
    expect(() => durableLoop(new MemoryJournal(), { ...options, maxTurns: 0 })).toThrow(RangeError);
    expect(() => durableLoop(new MemoryJournal(), { ...options, maxTurns: 0 })).toThrow(/^durableLoop: maxTurns/);
    expect(() => durableLoop({ run: new MemoryJournal().run }, { ...options, needsApproval: () => true })).toThrow(/needsApproval needs a ctx with awakeable\(\)/);
  });

  it('D3, H8: durableLoop refuses H8 approvals, whose decisions a replay would wait for again, and names needsApproval', () => {
    const options = { provider: counted([]), registry: registry(), messages: [] };
    const approvals = { needsApproval: () => true, decisions: NEVER };
    // @ts-expect-error: not a durableLoop option (its type leaves it out)
    const refused = () => durableLoop(new MemoryJournal(), { ...options, approvals });
    expect(refused).toThrow(TypeError);
    expect(refused).toThrow(
      'durableLoop: approvals (H8) are not durable: their decisions are not journaled, so a replay would wait again; use needsApproval, whose answers are Restate awakeables (D3)',
    );
    expect(() => durableLoop(new MemoryJournal(), { ...options, approvals: 42 } as never)).toThrow(/^durableLoop: approvals \(H8\) are not durable/);
    expect(() => durableLoop(new MemoryJournal(), { ...options, approvals: undefined } as never)).not.toThrow();
  });

  it('D3: a call that needsApproval waits on an awakeable, announced once with its id; the decision runs, denies or rewrites it', async () => {
    const journal = new MemoryJournal();
    const waiting: unknown[] = [];
    const loop = durableLoop(journal, {
      provider: counted([[start, call('lookup', { q: 'a' }, 'c1'), call('lookup', { q: 'b' }, 'c2'), end('toolUse')]]),
      registry: registry(),
      messages: [],
      needsApproval: (c) => c.id === 'c1',
      announce: (event) => void waiting.push(event),
    });
    const done = lastValueFrom(loop.pipe(toArray()));
    while (journal.awakeables.size === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    const [id] = [...journal.awakeables.keys()];
    while (runs === 0) await new Promise((resolve) => setTimeout(resolve, 1)); // c2 needs no approval: it runs
    expect(waiting).toEqual([{ type: 'approval_waiting', call: { id: 'c1', name: 'lookup', input: { q: 'a' } }, awakeableId: id }]);
    expect(runs).toBe(1); // c1 waits
    journal.awakeables.get(id!)!({ action: 'run', input: { q: 'edited' } });
    const messages = loopEndOf(await done).messages;
    expect(messages.filter((m) => m.role === 'toolResult').map((m) => m.content)).toEqual(['found edited (2)', 'found b (1)']);
  });

  it('D3, H4: a decision that is not true, false or a ToolDecision fails the call with a clear error', async () => {
    const journal = new MemoryJournal();
    const done = lastValueFrom(durableLoop(journal, { provider: counted([[start, call('lookup', { q: 'a' }, 'c1'), end('toolUse')]]), registry: registry(), messages: [], needsApproval: () => true }).pipe(toArray()));
    while (journal.awakeables.size === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    [...journal.awakeables.values()][0]!('yes');
    expect(loopEndOf(await done).messages[1]).toMatchObject({ content: 'error: beforeToolCall failed: approval decision must be true, false or a ToolDecision (got "yes", a string)', isError: true });
    expect(runs).toBe(0);
  });

  it('D1, R22: a history saved with calls unanswered resumes in turn 0, whose calls are journaled steps too: a replay runs none of them', async () => {
    const messages = [
      { role: 'user' as const, content: 'hi' },
      { role: 'assistant' as const, content: '', stopReason: 'toolUse' as const, toolCalls: [{ id: 'c0', name: 'lookup', input: { q: 'saved' } }] },
    ];
    const resume = (journal: MemoryJournal) => lastValueFrom(durableLoop(journal, { provider: counted([answerTurn('resumed')]), registry: registry(), messages }).pipe(toArray()));
    const journal = new MemoryJournal();
    const first = await resume(journal);
    expect(journal.names).toEqual(['tool lookup c0', 'model call 1']);
    const again = await resume(journal.afterCrash());
    expect(runs).toBe(1);
    expect(again.filter((event) => event.type === 'turn_start').map((event) => event.type === 'turn_start' && event.turn)).toEqual([0, 1]);
    expect(loopEndOf(again).messages).toEqual(loopEndOf(first).messages);
  });

  it('D3, H2: calls that needsApproval leaves out go to the options\' own beforeToolCall', async () => {
    const journal = new MemoryJournal();
    const events = await lastValueFrom(
      durableLoop(journal, {
        provider: counted([[start, call('lookup', { q: 'a' }, 'c1'), end('toolUse')]]),
        registry: registry(),
        messages: [],
        needsApproval: () => false,
        beforeToolCall: () => ({ action: 'deny', reason: 'policy' }),
      }).pipe(toArray()),
    );
    expect(loopEndOf(events).messages[1]).toMatchObject({ content: 'denied: policy', isError: true });
    expect(journal.awakeables.size).toBe(0);
    expect(runs).toBe(0);
  });

  it('D1, R10, R9: a step the engine itself fails (a journal mismatch) fails that turn or that call, as a provider or a tool failure would', async () => {
    const journal = new MemoryJournal();
    await run(journal, counted(turns()), registry());
    const renamed = new MemoryJournal(journal.entries.map((entry) => entry && { ...entry, name: `${entry.name} (other code)` }));
    const end = loopEndOf(await run(renamed, counted(turns()), registry()));
    expect(end).toMatchObject({ reason: 'error', assistant: { errorMessage: expect.stringContaining('journal mismatch at 0: model call 1 (other code) journaled, model call 1 asked') } });
    const tools = new MemoryJournal([journal.entries[0], { name: 'tool other c1', value: { result: 'x' } }]);
    const messages = loopEndOf(await run(tools, counted(turns()), registry())).messages;
    expect(messages[2]).toMatchObject({ role: 'toolResult', content: 'error: journal mismatch at 1: tool other c1 journaled, tool lookup c1 asked', isError: true });
  });
});

