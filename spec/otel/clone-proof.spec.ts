/**
 * R34 for traces: traceLoop learns what it records from the events and its options only, so a
 * `map((e) => structuredClone(e))` between the stages — the loop (or `conversation()`) and traceLoop, an inner
 * loop and its own traceLoop, that traceLoop and `agentTool` — changes no span it records (names, kinds,
 * parents, attributes, statuses, span events, ends) and no event it passes on.
 */
import { type Context, SpanStatusCode, context, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { NEVER, Observable, type OperatorFunction, Subject, concatMap, identity, lastValueFrom, map, of, timer, toArray } from 'rxjs';
import { ToolRegistry, agentTool, conversation, runEventedToolLoop, scriptedProvider, type ConversationEvent, type LoopEvent, type Provider, type Tool } from 'rx-tool-loop';
import { toolSpanContext, traceLoop } from 'rx-tool-loop/otel';
import { answerTurn, call, only, tool, toolTurn } from '../support/events.js';
import { type MemoryTracer, StackContextManager, memoryTracer } from './memory-tracer.js';

/** The stage between two others: nothing, or a structured clone of each value (what a worker, a queue or a journal hands on). */
const between = <T>(clone: boolean): OperatorFunction<T, T> => (clone ? map((value: T) => structuredClone(value)) : identity);

/** What a backend keeps of a span, without its ids and times: its place in the tree by names, and all it says. */
function recorded(memory: MemoryTracer): unknown[] {
  const spans = memory.finished();
  const byId = new Map(spans.map((span) => [span.spanContext().spanId, span]));
  const path = (span: ReadableSpan): string => {
    const parent = span.parentSpanContext === undefined ? undefined : byId.get(span.parentSpanContext.spanId);
    return parent === undefined ? span.name : `${path(parent)} > ${span.name}`;
  };
  return [
    spans.map((span) => ({
      path: path(span),
      kind: span.kind,
      attributes: span.attributes,
      status: span.status,
      events: span.events.map((event) => ({ name: event.name, attributes: event.attributes })),
      trace: spans.findIndex((first) => first.spanContext().traceId === span.spanContext().traceId),
    })),
    memory.ends(),
  ];
}

/** The events as data: a failure's stack (R25) names the code path it ran through, which a clone stage lengthens. */
const withoutStacks = (events: readonly unknown[]): unknown => JSON.parse(JSON.stringify(events, (key, value: unknown) => (key === 'stack' ? undefined : value)));

/** A tool that asks for its own span (toolSpanContext) and writes on it: the span's events show whether it found it. */
const lookup = tool(
  'lookup',
  (input: Record<string, string>, { call: own }) => {
    trace.getSpan(toolSpanContext(own) ?? context.active())?.addEvent('asked', { 'lookup.q': input.q ?? '' });
    return `found ${input.q ?? ''}`;
  },
  { q: 'the query' },
);
const failing = tool('failing', () => {
  throw new Error('index down');
});
const search = tool('search', (input: Record<string, string>) => `results for ${input.q ?? ''}`, { q: 'the query' });
const hanging = tool('slow', () => NEVER);

/** A researcher whose own loop has a traceLoop of its own, subscribed inside its call's span (O1). */
function tracedResearcher(memory: MemoryTracer, clone: boolean, provider: () => Provider = () => scriptedProvider([toolTurn(call('search', { q: 'zones' }, 'r1'), call('lookup', { q: 'inner' }, 'r2')), answerTurn('UTC')]), tools: Tool[] = []): Tool {
  return agentTool({
    name: 'researcher',
    description: 'researches, traced by its own traceLoop',
    input: { question: 'what to find out' },
    agent: (input, { call: own, signal }) => {
      const registry = tools.reduce((registry, tool) => registry.register(tool), new ToolRegistry().register(search).register(lookup).register(hanging));
      const inner = runEventedToolLoop({ provider: provider(), registry, messages: [{ role: 'user', content: String(input.question) }], signal });
      const traced = inner.pipe(between(clone), traceLoop<LoopEvent>({ tracer: memory.tracer, agentName: 'own-researcher', recordContent: true }), between(clone));
      return new Observable<LoopEvent>((subscriber) => context.with(toolSpanContext(own) ?? context.active(), () => traced.subscribe(subscriber)));
    },
  });
}

/** A librarian that the outer traceLoop traces from the events it forwards (A1). */
function librarian(clone: boolean, provider: () => Provider = () => scriptedProvider([toolTurn(call('search', { q: 'books' }, 'l1')), answerTurn('two books')])): Tool {
  return agentTool({
    name: 'librarian',
    description: 'finds books',
    model: 'small-model',
    agent: (_input, { signal }) =>
      runEventedToolLoop({ provider: provider(), registry: new ToolRegistry().register(search).register(hanging), messages: [{ role: 'user', content: 'books?' }], signal }).pipe(between(clone)),
  });
}

describe('R34 for traces: a structured clone between the stages changes nothing traceLoop records', () => {
  beforeAll(() => context.setGlobalContextManager(new StackContextManager()));
  afterAll(() => context.disable());

  it("R34, O1, O2: a conversation with tools (one that asks for toolSpanContext, one that fails, an unknown one, the same call id in both loops): the same spans, attributes and statuses, with content", async () => {
    const run = async (clone: boolean) => {
      const memory = memoryTracer();
      const provider = scriptedProvider([
        toolTurn(call('lookup', { q: 'a' }, 'c1'), call('failing', {}, 'c2'), call('nope', {}, 'c3')),
        answerTurn('done'),
        toolTurn(call('lookup', { q: 'b' }, 'c1')),
        answerTurn('again'),
      ]);
      const registry = new ToolRegistry().register(lookup).register(failing);
      const events = await lastValueFrom(
        of('first', 'second').pipe(
          conversation({ provider, registry }),
          between<ConversationEvent>(clone),
          traceLoop<ConversationEvent>({ tracer: memory.tracer, agentName: 'main', model: 'scripted', conversationId: 'thread-1', recordContent: true }),
          toArray(),
        ),
      );
      return { events, memory };
    };
    const plain = await run(false);
    const cloned = await run(true);
    expect(recorded(cloned.memory)).toEqual(recorded(plain.memory));
    expect(withoutStacks(cloned.events)).toEqual(withoutStacks(plain.events));
    // what the runs had to record: both lookups found their own span, the failure and the unknown tool are ERROR
    const spans = cloned.memory.finished();
    expect(spans.filter((span) => span.name === 'execute_tool lookup').map((span) => span.events.map((event) => event.attributes?.['lookup.q']))).toEqual([['a'], ['b']]);
    expect(spans.filter((span) => span.status.code === SpanStatusCode.ERROR).map((span) => span.name)).toEqual(['execute_tool failing', 'execute_tool nope']);
    expect(spans.every((span) => span.attributes['gen_ai.conversation.id'] === 'thread-1')).toBe(true);
    expect(only(cloned.events, 'loop_end')).toHaveLength(2);
  });

  it("R34, O1, A1: an agent tool whose inner loop has its own traceLoop, subscribed inside toolSpanContext(call), and one traced from its forwarded events: the same tree, traced once, with clones at every stage", async () => {
    const run = async (clone: boolean) => {
      const memory = memoryTracer();
      const provider = scriptedProvider([toolTurn(call('researcher', { question: 'which zone?' }, 'c1'), call('librarian', {}, 'c2'), call('lookup', { q: 'outer' }, 'c3')), answerTurn('noon, UTC')]);
      const registry = new ToolRegistry().register(tracedResearcher(memory, clone)).register(librarian(clone)).register(lookup);
      const events = await lastValueFrom(
        runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'What time is it?' }] }).pipe(
          between<LoopEvent>(clone),
          traceLoop<LoopEvent>({ tracer: memory.tracer, agentName: 'main', recordContent: true }),
          toArray(),
        ),
      );
      return { events, memory };
    };
    const plain = await run(false);
    const cloned = await run(true);
    expect(recorded(cloned.memory)).toEqual(recorded(plain.memory));
    expect(withoutStacks(cloned.events)).toEqual(withoutStacks(plain.events));
    expect(cloned.memory.tree()).toEqual([
      'invoke_agent main (INTERNAL)',
      '  chat (CLIENT)',
      '  execute_tool researcher (INTERNAL)',
      '    invoke_agent own-researcher (INTERNAL)',
      '      chat (CLIENT)',
      '      execute_tool search (INTERNAL)',
      '      execute_tool lookup (INTERNAL)',
      '      chat (CLIENT)',
      '  execute_tool librarian (INTERNAL)',
      '    invoke_agent librarian (INTERNAL)',
      '      chat small-model (CLIENT)',
      '      execute_tool search (INTERNAL)',
      '      chat small-model (CLIENT)',
      '  execute_tool lookup (INTERNAL)',
      '  chat (CLIENT)',
    ]);
    // the inner lookup (call r2, of the researcher's own traceLoop) and the outer one (c3) each found their own span
    const lookups = cloned.memory.finished().filter((span) => span.name === 'execute_tool lookup');
    expect(lookups.map((span) => [span.attributes['gen_ai.tool.call.id'], span.events.map((event) => event.attributes?.['lookup.q'])])).toEqual([
      ['r2', ['inner']],
      ['c3', ['outer']],
    ]);
    expect(cloned.memory.ends().every((span) => span.ends === 1)).toBe(true);
  });

  it('R34, O3, R7: an abort while an inner tool and an outer tool hang: the same spans end, the same way, with clones at every stage', async () => {
    const run = async (clone: boolean) => {
      const memory = memoryTracer();
      const abort = new AbortController();
      const provider = scriptedProvider([toolTurn(call('researcher', { question: 'slow?' }, 'c1'), call('librarian', {}, 'c2'), call('slow', {}, 'c3'))]);
      const stuckResearcher = tracedResearcher(memory, clone, () => scriptedProvider([toolTurn(call('slow', {}, 'r1'))]));
      const stuckLibrarian = librarian(clone, () => scriptedProvider([toolTurn(call('slow', {}, 'l1'))]));
      const registry = new ToolRegistry().register(stuckResearcher).register(stuckLibrarian).register(hanging);
      const started = new Subject<void>();
      started.subscribe(() => abort.abort());
      const events = await lastValueFrom(
        runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'go' }], signal: abort.signal }).pipe(
          between<LoopEvent>(clone),
          traceLoop<LoopEvent>({ tracer: memory.tracer, agentName: 'main' }),
          map((event) => {
            // every call running: the run is aborted
            if (event.type === 'tool_start' && event.call.id === 'c3') queueMicrotask(() => started.next());
            return event;
          }),
          toArray(),
        ),
      );
      return { events, memory };
    };
    const plain = await run(false);
    const cloned = await run(true);
    expect(recorded(cloned.memory)).toEqual(recorded(plain.memory));
    expect(withoutStacks(cloned.events)).toEqual(withoutStacks(plain.events));
    expect(only(cloned.events, 'loop_end')[0]!.reason).toBe('aborted');
    // the researcher's own traceLoop under its call, the librarian traced by the outer one (cut off at its aborted result)
    expect(cloned.memory.tree()).toEqual([
      'invoke_agent main (INTERNAL)',
      '  chat (CLIENT)',
      '  execute_tool researcher (INTERNAL) [ERROR: error: aborted]',
      '    invoke_agent own-researcher (INTERNAL)',
      '      chat (CLIENT)',
      '      execute_tool slow (INTERNAL)',
      '  execute_tool librarian (INTERNAL) [ERROR: error: aborted]',
      '    invoke_agent librarian (INTERNAL) [ERROR: error: aborted]',
      '      chat small-model (CLIENT)',
      '      execute_tool slow (INTERNAL) [ERROR: error: aborted]',
      '  execute_tool slow (INTERNAL) [ERROR: error: aborted]',
    ]);
    expect(cloned.memory.ends().every((span) => span.ends === 1)).toBe(true);
  });

  it('R34, O3, A3: unsubscribing mid-run ends the same spans, cancelled, at every depth, with clones at every stage', () => {
    const run = (clone: boolean) => {
      const memory = memoryTracer();
      const provider = scriptedProvider([toolTurn(call('researcher', { question: 'slow?' }, 'c1'), call('librarian', {}, 'c2'))]);
      const stuckResearcher = tracedResearcher(memory, clone, () => scriptedProvider([toolTurn(call('slow', {}, 'r1'))]));
      const stuckLibrarian = librarian(clone, () => scriptedProvider([toolTurn(call('slow', {}, 'l1'))]));
      const events: LoopEvent[] = [];
      const subscription = runEventedToolLoop({ provider, registry: new ToolRegistry().register(stuckResearcher).register(stuckLibrarian), messages: [{ role: 'user', content: 'go' }] })
        .pipe(between<LoopEvent>(clone), traceLoop<LoopEvent>({ tracer: memory.tracer, agentName: 'main' }))
        .subscribe((event) => events.push(event));
      subscription.unsubscribe();
      return { events, memory };
    };
    const plain = run(false);
    const cloned = run(true);
    expect(recorded(cloned.memory)).toEqual(recorded(plain.memory));
    expect(withoutStacks(cloned.events)).toEqual(withoutStacks(plain.events));
    const cancelled = cloned.memory.finished().filter((span) => span.attributes['rx_tool_loop.cancelled'] === true).map((span) => span.name);
    expect(cancelled).toEqual(expect.arrayContaining(['invoke_agent own-researcher', 'invoke_agent librarian', 'execute_tool researcher', 'execute_tool librarian', 'invoke_agent main']));
    expect(cloned.memory.ends().every((span) => span.ends === 1)).toBe(true);
  });
});

describe('R34: toolSpanContext(call) goes by the call, not by the object', () => {
  beforeAll(() => context.setGlobalContextManager(new StackContextManager()));
  afterAll(() => context.disable());

  /** A loop whose one call hangs, traced under `request`; its handler asks for its span at once and again on `ask`. */
  function hangingLoop(memory: MemoryTracer, request: Context, input: Record<string, string>, asked: (string | undefined)[], ask: Subject<void>) {
    const waiting = tool(
      'wait',
      (_input, { call: own }) => {
        const name = () => (trace.getSpan(toolSpanContext(own) ?? context.active()) as ReadableSpan | undefined)?.attributes['rx.request'] as string | undefined;
        asked.push(name());
        ask.subscribe(() => asked.push(name()));
        return NEVER;
      },
      { q: 'what' },
    );
    const loop = runEventedToolLoop({ provider: scriptedProvider([toolTurn(call('wait', input, 'c1'))]), registry: new ToolRegistry().register(waiting), messages: [{ role: 'user', content: 'go' }] }).pipe(
      traceLoop<LoopEvent>({ tracer: memory.tracer }),
      map((event) => {
        // the span this tool_start opened (before its handler runs) is marked with its request, to tell the loops' spans apart
        if (event.type === 'tool_start') trace.getSpan(toolSpanContext(event.call)!)!.setAttribute('rx.request', trace.getSpan(request)!.spanContext().spanId);
        return event;
      }),
    );
    return context.with(request, () => loop.subscribe());
  }

  it('R34, O1: two loops open at once with the same call id: each handler gets its own span — by the call\'s name and input, else by the trace active where it asks, else the latest started', () => {
    const memory = memoryTracer();
    const requestA = trace.setSpan(context.active(), memory.tracer.startSpan('request A'));
    const requestB = trace.setSpan(context.active(), memory.tracer.startSpan('request B'));
    const idOf = (request: Context) => trace.getSpan(request)!.spanContext().spanId;
    // different inputs: told apart by the input
    const askA = new Subject<void>();
    const askB = new Subject<void>();
    const askedA: (string | undefined)[] = [];
    const askedB: (string | undefined)[] = [];
    const a = hangingLoop(memory, requestA, { q: 'a' }, askedA, askA);
    const b = hangingLoop(memory, requestB, { q: 'b' }, askedB, askB);
    expect([askedA, askedB]).toEqual([[idOf(requestA)], [idOf(requestB)]]); // asked at their start
    askA.next();
    askB.next();
    expect([askedA.at(-1), askedB.at(-1)]).toEqual([idOf(requestA), idOf(requestB)]);
    // the same call in both (id, name and input): the one in the trace active where it is asked
    const askC = new Subject<void>();
    const askD = new Subject<void>();
    const askedC: (string | undefined)[] = [];
    const askedD: (string | undefined)[] = [];
    const c = hangingLoop(memory, requestA, { q: 'same' }, askedC, askC);
    const d = hangingLoop(memory, requestB, { q: 'same' }, askedD, askD);
    expect([askedC, askedD]).toEqual([[idOf(requestA)], [idOf(requestB)]]); // asked at their start: D's inside its request
    context.with(requestA, () => askC.next());
    context.with(requestB, () => askD.next());
    expect([askedC.at(-1), askedD.at(-1)]).toEqual([idOf(requestA), idOf(requestB)]);
    // and asked outside any trace: the latest started
    askC.next();
    expect(askedC.at(-1)).toBe(idOf(requestB));
    for (const subscription of [a, b, c, d]) subscription.unsubscribe();
    expect(memory.ends().filter((span) => span.name !== 'request A' && span.name !== 'request B').every((span) => span.ends === 1)).toBe(true);
  });
});

/** A provider whose every reply comes a timer tick after it is asked: a run that crosses the event loop. */
const later = (provider: Provider): Provider => (input) => timer(1).pipe(concatMap(() => provider(input)));

describe('R34 for traces, asynchronous runs with the context manager the SDKs register (AsyncLocalStorage)', () => {
  beforeAll(() => context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable()));
  afterAll(() => context.disable());

  it("R34, O1, A1: an agent tool with its own traceLoop (inside toolSpanContext) whose loop holds an agent tool without one, every reply a tick later: traced once each, the same with clones at every stage", async () => {
    const run = async (clone: boolean) => {
      const memory = memoryTracer();
      const researcher = tracedResearcher(
        memory,
        clone,
        () => later(scriptedProvider([toolTurn(call('librarian', {}, 'r1'), call('lookup', { q: 'inner' }, 'r2')), answerTurn('UTC')])),
        [librarian(clone, () => later(scriptedProvider([toolTurn(call('search', { q: 'books' }, 'l1')), answerTurn('two books')])))],
      );
      const provider = later(scriptedProvider([toolTurn(call('researcher', { question: 'which zone?' }, 'c1'), call('lookup', { q: 'outer' }, 'c2')), answerTurn('noon, UTC')]));
      const events = await lastValueFrom(
        runEventedToolLoop({ provider, registry: new ToolRegistry().register(researcher).register(lookup), messages: [{ role: 'user', content: 'What time is it?' }] }).pipe(
          between<LoopEvent>(clone),
          traceLoop<LoopEvent>({ tracer: memory.tracer, agentName: 'main' }),
          toArray(),
        ),
      );
      return { events, memory };
    };
    const plain = await run(false);
    const cloned = await run(true);
    expect(recorded(cloned.memory)).toEqual(recorded(plain.memory));
    expect(withoutStacks(cloned.events)).toEqual(withoutStacks(plain.events));
    expect(cloned.memory.tree()).toEqual([
      'invoke_agent main (INTERNAL)',
      '  chat (CLIENT)',
      '  execute_tool researcher (INTERNAL)',
      '    invoke_agent own-researcher (INTERNAL)',
      '      chat (CLIENT)',
      '      execute_tool librarian (INTERNAL)',
      '        invoke_agent librarian (INTERNAL)',
      '          chat small-model (CLIENT)',
      '          execute_tool search (INTERNAL)',
      '          chat small-model (CLIENT)',
      '      execute_tool lookup (INTERNAL)',
      '      chat (CLIENT)',
      '  execute_tool lookup (INTERNAL)',
      '  chat (CLIENT)',
    ]);
    const lookups = cloned.memory.finished().filter((span) => span.name === 'execute_tool lookup');
    const asked = lookups.map((span) => [span.attributes['gen_ai.tool.call.id'], span.events.map((event) => event.attributes?.['lookup.q'])]);
    expect(asked.sort()).toEqual([
      ['c2', ['outer']],
      ['r2', ['inner']],
    ]);
    expect(cloned.memory.ends().every((span) => span.ends === 1)).toBe(true);
  });
});

describe('R34 for traces, without a context manager', () => {
  it("O1 (decided), R34: toolSpanContext(call) still finds the span by the call; an inner loop's own traceLoop cannot be told (OpenTelemetry carries no context), so that loop is traced by both", async () => {
    const memory = memoryTracer();
    const researcher = tracedResearcher(memory, true, () => scriptedProvider([toolTurn(call('lookup', { q: 'inner' }, 'r1')), answerTurn('UTC')]));
    const provider = scriptedProvider([toolTurn(call('researcher', { question: 'which zone?' }, 'c1')), answerTurn('noon')]);
    await lastValueFrom(
      runEventedToolLoop({ provider, registry: new ToolRegistry().register(researcher), messages: [{ role: 'user', content: 'What time is it?' }] }).pipe(
        between<LoopEvent>(true),
        traceLoop<LoopEvent>({ tracer: memory.tracer, agentName: 'main' }),
      ),
    );
    expect(memory.tree()).toEqual([
      'invoke_agent main (INTERNAL)',
      '  chat (CLIENT)',
      '  execute_tool researcher (INTERNAL)',
      '    invoke_agent researcher (INTERNAL)',
      '      chat (CLIENT)',
      '      execute_tool lookup (INTERNAL)',
      '      chat (CLIENT)',
      '  chat (CLIENT)',
      'invoke_agent own-researcher (INTERNAL)',
      '  chat (CLIENT)',
      '  execute_tool lookup (INTERNAL)',
      '  chat (CLIENT)',
    ]);
    // the lookup found its own span (of its own traceLoop's), by its call, through the clones
    expect(memory.finished().filter((span) => span.events.length > 0).map((span) => [span.name, span.parentSpanContext === undefined])).toEqual([['execute_tool lookup', false]]);
    expect(memory.ends().every((span) => span.ends === 1)).toBe(true);
  });
});
