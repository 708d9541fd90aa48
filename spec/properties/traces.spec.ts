/**
 * O1, O3 on generated scenarios (support/scenario.ts), every cancellation moment included: traceLoop passes the
 * run through unchanged, and every span it starts ends exactly once. `PROPERTY_RUNS=N` changes the number of
 * runs (default 300 here: each scenario runs twice).
 */
import fc from 'fast-check';
import type { LoopEvent } from '../../src/index.js';
import { traceLoop } from '../../src/otel/index.js';
import { memoryTracer, parentOf } from '../otel/memory-tracer.js';
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
});
