/**
 * O1, O3 on generated scenarios (support/scenario.ts) and on generated trees of agent tools
 * (support/agent-tree.ts), every cancellation moment included: traceLoop passes the run through unchanged, and
 * every span it starts ends exactly once, at every depth — also when the tracer throws (O3 exactly).
 * `PROPERTY_RUNS=N` changes the number of runs (default 300 and 100 here, 150 and 60 with a hostile tracer:
 * each scenario runs twice).
 */
import fc from 'fast-check';
import { type MonoTypeOperatorFunction, Observable, Subscriber, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { LoopEvent } from '../../src/index.js';
import { traceLoop } from '../../src/otel/index.js';
import { memoryTracer, parentOf } from '../otel/memory-tracer.js';
import { HOSTILE_METHODS, type Hostility, hostileTracer } from '../otel/hostile-tracer.js';
import { type AgentSpec, type Cancel, type Tally, agentArb, cancelArb, hangs, loopOf } from './support/agent-tree.js';
import { type RunRecord, installRxjsHooks, runVirtual } from './support/harness.js';
import { comparable, trace } from './support/checks.js';
import { scenarioArb } from './support/scenario.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 300);
const SEED = process.env.PROPERTY_SEED === undefined ? undefined : Number(process.env.PROPERTY_SEED);

let restoreHooks: () => void;
beforeAll(() => (restoreHooks = installRxjsHooks()));
afterAll(() => restoreHooks());

jest.setTimeout(60_000);

const count = (events: readonly LoopEvent[], test: (event: LoopEvent) => boolean) => events.filter(test).length;

describe('traceLoop on generated scenarios', () => {
  it('O1, O3: under every cancellation moment the events pass unchanged in their frames, and every started span ends exactly once: one invoke_agent per loop, a chat per provider turn, an execute_tool per call, children of it; only an unsubscribe leaves spans marked cancelled', () => {
    fc.assert(
      fc.property(scenarioArb({ mode: 'virtual' }), (scenario) => {
        const memory = memoryTracer();
        const traced = runVirtual(scenario, undefined, traceLoop<LoopEvent>({ tracer: memory.tracer, agentName: 'agent', recordContent: true }));
        const plain = runVirtual(scenario);
        const why = (what: string, record: RunRecord = traced) => `${what}\n${trace(record)}\nspans: ${JSON.stringify(memory.ends())}`;

        if (JSON.stringify(comparable(traced, true)) !== JSON.stringify(comparable(plain, true))) throw new Error(why('the traced run differs from the plain one'));
        const unended = memory.ends().filter((span) => span.ends !== 1);
        if (unended.length > 0) throw new Error(why(`spans not ended exactly once: ${JSON.stringify(unended)}`));

        const events = traced.events.map((e) => e.event);
        const spans = memory.finished();
        const agents = spans.filter((span) => span.name === 'invoke_agent agent');
        const chats = spans.filter((span) => span.name === 'chat');
        const tools = spans.filter((span) => span.name.startsWith('execute_tool '));
        const expected = {
          agents: events.length > 0 ? 1 : 0,
          chats: count(events, (e) => e.type === 'turn_start' && e.turn >= 1),
          // every call with a result, and every call started but cut off by an unsubscribe before it
          tools: count(events, (e) => e.type === 'tool_result') + count(events, (e) => e.type === 'tool_start' && !events.some((r) => r.type === 'tool_result' && r.message.toolCallId === e.call.id)),
        };
        const actual = { agents: agents.length, chats: chats.length, tools: tools.length };
        if (JSON.stringify(actual) !== JSON.stringify(expected)) throw new Error(why(`spans ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`));
        if (spans.length !== memory.ends().length) throw new Error(why('a started span was never exported'));
        for (const span of [...chats, ...tools]) {
          if (parentOf(spans, span) !== agents[0]) throw new Error(why(`${span.name} is not a child of invoke_agent`));
        }

        const ended = events.at(-1)?.type === 'loop_end';
        const cancelled = spans.filter((span) => span.attributes['rx_tool_loop.cancelled'] === true);
        if (ended && cancelled.length > 0) throw new Error(why('a loop that ended has spans marked cancelled'));
        if (!ended && events.length > 0 && !agents.every((span) => span.attributes['rx_tool_loop.cancelled'] === true)) {
          throw new Error(why('an unsubscribed loop\'s invoke_agent span is not marked cancelled'));
        }
      }),
      { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }) },
    );
  });

  it('O1, O3, A4: agent tools nested up to three deep, under every cancellation moment: the events pass unchanged, every started span ends exactly once at every depth, each inner loop is one invoke_agent under its call\'s execute_tool span, and only an unsubscribe leaves spans marked cancelled', () => {
    fc.assert(
      fc.property(agentArb(0), cancelArb, (spec, cancel) => {
        fc.pre(!hangs(spec) || cancel.kind !== 'none');
        const memory = memoryTracer();
        const traced = runTree(spec, cancel, traceLoop<LoopEvent>({ tracer: memory.tracer, agentName: 'agent', recordContent: true }));
        const plain = runTree(spec, cancel);
        const why = (what: string) => `${what}\nspec: ${JSON.stringify(spec)}\ncancel: ${JSON.stringify(cancel)}\nspans: ${JSON.stringify(memory.ends())}`;

        if (JSON.stringify(traced) !== JSON.stringify(plain)) throw new Error(why('the traced run differs from the plain one'));
        const unended = memory.ends().filter((span) => span.ends !== 1);
        if (unended.length > 0) throw new Error(why(`spans not ended exactly once: ${JSON.stringify(unended)}`));
        const spans = memory.finished();
        if (spans.length !== memory.ends().length) throw new Error(why('a started span was never exported'));

        // what each loop, at every depth, should have made: its events are the ones its agent tool forwarded
        const loops = loopsOf(traced.map((e) => e.event));
        const expected: string[] = [];
        for (const [, { name, events }] of loops) {
          if (events.length > 0) expected.push(`invoke_agent ${name}`);
          for (const e of events) if (e.type === 'turn_start' && e.turn >= 1) expected.push('chat');
          for (const e of events) if (e.type === 'tool_result') expected.push(`execute_tool ${e.message.toolName}`);
          for (const e of events) {
            if (e.type === 'tool_start' && !events.some((r) => r.type === 'tool_result' && r.message.toolCallId === e.call.id)) expected.push(`execute_tool ${e.call.name}`);
          }
        }
        const actual = spans.map((span) => span.name);
        if (JSON.stringify(actual.slice().sort()) !== JSON.stringify(expected.slice().sort())) throw new Error(why(`spans ${JSON.stringify(actual.sort())}, expected ${JSON.stringify(expected.sort())}`));

        // the tree: chat and tool spans under an invoke_agent; each inner loop's invoke_agent under its own call's span
        for (const span of spans) {
          const parent = parentOf(spans, span);
          if (span.name === 'invoke_agent agent') {
            if (parent !== undefined) throw new Error(why('the outer invoke_agent has a parent'));
          } else if (span.name.startsWith('invoke_agent ')) {
            if (parent?.name !== `execute_tool ${span.name.slice('invoke_agent '.length)}`) throw new Error(why(`${span.name} is not under its call's execute_tool span`));
          } else if (!parent?.name.startsWith('invoke_agent ')) throw new Error(why(`${span.name} is not under an invoke_agent span`));
        }
        for (const [path, { events }] of loops) {
          if (path === '' || events.length === 0) continue;
          const id = path.slice(path.lastIndexOf('/') + 1);
          const under = spans.filter((span) => span.name.startsWith('invoke_agent ') && parentOf(spans, span)?.attributes['gen_ai.tool.call.id'] === id);
          if (under.length !== 1) throw new Error(why(`call ${id}'s inner loop has ${under.length} invoke_agent spans`));
        }

        const ended = traced.at(-1)?.event.type === 'loop_end';
        const cancelled = spans.filter((span) => span.attributes['rx_tool_loop.cancelled'] === true);
        if (ended && cancelled.length > 0) throw new Error(why('a loop that ended has spans marked cancelled'));
        if (!ended && traced.length > 0 && spans.find((span) => span.name === 'invoke_agent agent')?.attributes['rx_tool_loop.cancelled'] !== true) {
          throw new Error(why("an unsubscribed loop's invoke_agent span is not marked cancelled"));
        }
      }),
      { numRuns: TREE_RUNS, ...(SEED === undefined ? {} : { seed: SEED }) },
    );
  });
});

const TREE_RUNS = Number(process.env.PROPERTY_RUNS ?? 100);

const hostilityArb: fc.Arbitrary<Hostility> = fc.record({
  methods: fc.subarray([...HOSTILE_METHODS], { minLength: 1 }),
  rate: fc.constantFrom(0.05, 0.3, 1),
  seed: fc.integer(),
});

/** `operator`, with what its subscription's `unsubscribe()` throws kept in `thrown` instead of thrown on. */
function watchingUnsubscribe(operator: MonoTypeOperatorFunction<LoopEvent>, thrown: unknown[]): MonoTypeOperatorFunction<LoopEvent> {
  return (source) =>
    new Observable<LoopEvent>((subscriber) => {
      // made and tied to the consumer before it subscribes: an unsubscribe inside the subscribe reaches it at once
      const inner = new Subscriber<LoopEvent>({ next: (event) => subscriber.next(event), error: (error: unknown) => subscriber.error(error), complete: () => subscriber.complete() });
      subscriber.add(() => {
        try {
          inner.unsubscribe();
        } catch (error) {
          thrown.push(error);
        }
      });
      source.pipe(operator).subscribe(inner);
    });
}

describe('traceLoop with a tracer that throws (O3 exactly)', () => {
  it('O3 exactly: whatever the tracer throws, from startSpan or any span method, end during an unsubscribe included, the run is the untraced run, event for event in its frames; unsubscribe() never throws; every span started is ended exactly once', () => {
    fc.assert(
      fc.property(scenarioArb({ mode: 'virtual' }), hostilityArb, (scenario, hostility) => {
        const hostile = hostileTracer(hostility);
        const thrownOut: unknown[] = [];
        const traced = runVirtual(scenario, undefined, watchingUnsubscribe(traceLoop<LoopEvent>({ tracer: hostile.tracer, agentName: 'agent', recordContent: true }), thrownOut));
        const plain = runVirtual(scenario);
        const why = (what: string) => `${what}\n${trace(traced)}\nhostility: ${JSON.stringify(hostility)}, thrown ${hostile.thrown()}\nspans: ${JSON.stringify(hostile.ends())}`;

        if (JSON.stringify(comparable(traced, true)) !== JSON.stringify(comparable(plain, true))) throw new Error(why(`the traced run differs from the plain one:\n${JSON.stringify(comparable(traced, true))}\n${JSON.stringify(comparable(plain, true))}`));
        if (String(traced.error) !== String(plain.error) || traced.completed !== plain.completed) throw new Error(why(`the traced run ended otherwise: ${String(traced.error)}`));
        if (JSON.stringify(traced.rxjsNotes) !== JSON.stringify(plain.rxjsNotes)) throw new Error(why(`rxjs reported: ${traced.rxjsNotes.join('; ')}`));
        if (thrownOut.length > 0) throw new Error(why(`unsubscribe() threw: ${String(thrownOut[0])}`));
        const unended = hostile.ends().filter((span) => span.ends !== 1);
        if (unended.length > 0) throw new Error(why(`spans not ended exactly once: ${JSON.stringify(unended)}`));
      }),
      { numRuns: HOSTILE_RUNS, ...(SEED === undefined ? {} : { seed: SEED }) },
    );
  });

  it('O3 exactly, A4: agent tools nested up to three deep under every cancellation moment, with a tracer that throws: the events are the untraced run\'s, unsubscribe() never throws, every span started at every depth is ended exactly once', () => {
    fc.assert(
      fc.property(agentArb(0), cancelArb, hostilityArb, (spec, cancel, hostility) => {
        fc.pre(!hangs(spec) || cancel.kind !== 'none');
        const hostile = hostileTracer(hostility);
        const thrownOut: unknown[] = [];
        const traced = runTree(spec, cancel, watchingUnsubscribe(traceLoop<LoopEvent>({ tracer: hostile.tracer, agentName: 'agent', recordContent: true }), thrownOut));
        const plain = runTree(spec, cancel);
        const why = (what: string) => `${what}\nspec: ${JSON.stringify(spec)}\ncancel: ${JSON.stringify(cancel)}\nhostility: ${JSON.stringify(hostility)}\nspans: ${JSON.stringify(hostile.ends())}`;

        if (JSON.stringify(traced) !== JSON.stringify(plain)) throw new Error(why('the traced run differs from the plain one'));
        if (thrownOut.length > 0) throw new Error(why(`unsubscribe() threw: ${String(thrownOut[0])}`));
        const unended = hostile.ends().filter((span) => span.ends !== 1);
        if (unended.length > 0) throw new Error(why(`spans not ended exactly once: ${JSON.stringify(unended)}`));
      }),
      { numRuns: HOSTILE_TREE_RUNS, ...(SEED === undefined ? {} : { seed: SEED }) },
    );
  });
});

const HOSTILE_RUNS = Number(process.env.PROPERTY_RUNS ?? 150);
const HOSTILE_TREE_RUNS = Number(process.env.PROPERTY_RUNS ?? 60);

/** The run of a generated tree in virtual time, through `operator` if given: its events and their frames. */
function runTree(spec: AgentSpec, cancel: Cancel, operator?: MonoTypeOperatorFunction<LoopEvent>): { frame: number; event: LoopEvent }[] {
  const tally: Tally = { open: new Set(), ranAfterTeardown: [], tornDown: false };
  const seen: { frame: number; event: LoopEvent }[] = [];
  const ts = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
  ts.run(() => {
    const controller = new AbortController();
    if (cancel.kind === 'signal') timer(cancel.at).subscribe(() => controller.abort());
    const loop = loopOf(spec, 'a', tally, cancel.kind === 'timeout' ? cancel.ms : undefined, cancel.kind === 'signal' ? controller.signal : undefined);
    const subscription = (operator === undefined ? loop : loop.pipe(operator)).subscribe((event) => seen.push({ frame: ts.now(), event }));
    if (cancel.kind === 'unsubscribe') timer(cancel.at).subscribe(() => subscription.unsubscribe());
  });
  return seen;
}

/**
 * The events of every loop of a run, by path ('' for the outer loop, then `/callId` for each agent tool's inner
 * loop): an inner loop's events are the ones its call's updates forward; `name` is its agent's (the tool's).
 */
function loopsOf(events: readonly LoopEvent[]): Map<string, { name: string; events: LoopEvent[] }> {
  const loops = new Map<string, { name: string; events: LoopEvent[] }>();
  const add = (path: string, name: string, event: LoopEvent) => {
    let loop = loops.get(path);
    if (loop === undefined) loops.set(path, (loop = { name, events: [] }));
    loop.events.push(event);
    if (event.type === 'tool_update' && event.event !== undefined) add(`${path}/${event.toolCallId}`, event.toolName, event.event);
  };
  loops.set('', { name: 'agent', events: [] });
  for (const event of events) add('', 'agent', event);
  return loops;
}
