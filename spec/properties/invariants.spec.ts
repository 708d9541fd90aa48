/**
 * Property-based fault and cancellation suite (issue 5): the rules of CONTRACT.md, checked on
 * generated scenarios (spec/properties/support/scenario.ts). Each property runs RUNS scenarios
 * (default 1,000; `PROPERTY_RUNS=N` to change; `PROPERTY_SEED=S PROPERTY_PATH=P` with the seed and path
 * fast-check printed replays a failure at once, with `-t` to pick the property).
 * A failure prints the shrunk scenario, one line per provider event and tool call.
 */
import fc from 'fast-check';
import type { LoopEventOf } from '../../src/index.js';
import { RunRecord, installRxjsHooks, runReal, runScenario, runVirtual } from './support/harness.js';
import {
  checkAbort,
  checkCallerUntouched,
  checkCap,
  checkEnds,
  checkHooks,
  checkNoLeaks,
  checkSlots,
  checkText,
  checkToolStarts,
  checkUsage,
  checkValidHistories,
  comparable,
  trace,
} from './support/checks.js';
import { expectedRun } from './support/model.js';
import { Scenario, scenarioArb } from './support/scenario.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);
const SEED = process.env.PROPERTY_SEED === undefined ? undefined : Number(process.env.PROPERTY_SEED);
const PATH = process.env.PROPERTY_PATH;
const params = <T>(): fc.Parameters<T> => ({
  numRuns: RUNS,
  ...(SEED === undefined ? {} : { seed: SEED }),
  ...(PATH === undefined ? {} : { path: PATH, endOnFailure: true }),
});

/** Runs `check` on the record of every generated scenario (virtual ones synchronously, real ones on real timers). */
function holds(arb: fc.Arbitrary<Scenario>, check: (record: RunRecord) => void): Promise<void> {
  return fc.assert(
    fc.asyncProperty(arb, async (scenario) => {
      check(await runScenario(scenario));
    }),
    params(),
  );
}

let restoreHooks: () => void;
beforeAll(() => (restoreHooks = installRxjsHooks()));
afterAll(() => restoreHooks());

jest.setTimeout(60_000);

describe('properties of the evented tool loop (generated scenarios)', () => {
  it('never errors; exactly one loop_end, last, unless unsubscribed (R7, R9, R10)', async () => {
    await holds(scenarioArb(), checkEnds);
  });

  it('every messages it hands out is provider-valid: each call followed directly by its one result, in call order (R4, R11)', async () => {
    await holds(scenarioArb(), checkValidHistories);
  });

  it('subscribes the provider at most maxTurns times, and says maxTurns when the cap stops it (R8)', async () => {
    await holds(scenarioArb(), checkCap);
  });

  it('leaves nothing running after completion or unsubscribe: subscriptions, signals, timers, listeners (R11, R16)', async () => {
    await holds(scenarioArb(), checkNoLeaks);
  });

  it('never mutates the caller messages (R1)', async () => {
    await holds(scenarioArb(), checkCallerUntouched);
  });

  it('gives the same history for the same input (determinism)', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb(), async (scenario) => {
        if (scenario.mode === 'virtual') {
          // virtual time: every event, at the same frame
          const first = runVirtual(scenario);
          const second = runVirtual(scenario);
          expect(comparable(second, true)).toEqual(comparable(first, true));
          return;
        }
        // real time: only where no timing race is part of the scenario (no timeout, no cancellation)
        if (scenario.cancel !== undefined || scenario.deadline !== undefined || scenario.toolTimeoutMs !== undefined) return;
        const [first, second] = [await runReal(scenario), await runReal(scenario)];
        expect(comparable(second, false)).toEqual(comparable(first, false));
      }),
      params(),
    );
  });

  it('R23: each handler runs right after its tool_start; each tool_start is followed by exactly one tool_result of its call, with only its tool_updates between; no tool_update before it; none for a call whose handler never runs. R3, H1: a call takes its slot as soon as one is free, in call order, starts there and then (its beforeToolCall asked, or its tool_start), and holds it until its tool_result', async () => {
    await holds(scenarioArb(), (record) => {
      checkToolStarts(record);
      checkSlots(record);
    });
  });

  it('H1–H6: each hook is asked once in its place and its answer is what happens: no tool_start nor handler for a denied or answered call, the results the model predicts from the decisions, prepareTurn the provider input; a hook torn down saw its signal abort, one that answered did not', async () => {
    await holds(scenarioArb({ hooks: true }), (record) => {
      checkHooks(record);
      checkSlots(record);
    });
  });

  it('turn_end and loop_end usage are the running sums of the message_end usage the loop re-emitted (R27)', async () => {
    await holds(scenarioArb(), checkUsage);
  });

  it('the assistant text is the joined text_deltas the provider sent, up to its first fault (R2, R4, R10)', async () => {
    await holds(scenarioArb(), checkText);
  });

  it('aborting the signal ends the loop with aborted, starts nothing more (no turn, provider call or tool), and every call gets a result (R11)', async () => {
    await holds(
      scenarioArb().filter((s) => s.cancel?.how === 'signal' || s.deadline?.how === 'signal'),
      checkAbort,
    );
  });

  it('matches the reference model of CONTRACT.md: results, history, loop_end reason, turns (virtual time, no cancellation)', () => {
    fc.assert(
      fc.property(scenarioArb({ mode: 'virtual', cancel: false }), (scenario) => {
        const record = runVirtual(scenario);
        checkEnds(record);
        const expected = expectedRun(scenario);
        const end = record.events[record.events.length - 1]!.event as LoopEventOf<'loop_end'>;
        try {
          expect(record.providerCalls.length).toBe(expected.providerCalls);
          expect(end.reason).toBe(expected.reason);
          expect(end.messages).toEqual(expected.history);
          for (const [id, call] of expected.calls) {
            const updates = record.events.flatMap(({ event }) => (event.type === 'tool_update' && event.toolCallId === id ? [event.content] : []));
            expect({ id, updates }).toEqual({ id, updates: call.updates });
            expect({ id, handlerRuns: record.tools.filter((t) => t.call.id === id).length }).toEqual({ id, handlerRuns: call.runs ? 1 : 0 });
            // R23: a tool_start exactly for the calls whose handler runs, on the input beforeToolCall gave
            const starts = record.events.flatMap(({ event }) => (event.type === 'tool_start' && event.call.id === id ? [event.call.input] : []));
            expect({ id, starts: starts.length }).toEqual({ id, starts: call.runs ? 1 : 0 });
            if (call.startInput !== undefined) expect({ id, input: starts[0] }).toEqual({ id, input: call.startInput });
            // H2, H3: which hooks are asked, and what afterToolCall sees
            const asked = record.hooks.filter((h) => h.hook === 'beforeToolCall' && h.id === id).length;
            expect({ id, beforeToolCallAsked: asked }).toEqual({ id, beforeToolCallAsked: call.asked ? 1 : 0 });
            const saw = record.hooks.filter((h) => h.hook === 'afterToolCall' && h.id === id).map((h) => h.given);
            expect({ id, afterToolCallSaw: saw }).toEqual({ id, afterToolCallSaw: call.afterSees === undefined ? [] : [call.afterSees] });
          }
          // H6: prepareTurn, once per turn
          const prepared = record.hooks.filter((h) => h.hook === 'prepareTurn').map((h) => h.context.turn);
          expect({ prepareTurnAsked: prepared }).toEqual({ prepareTurnAsked: scenario.hooks?.prepare ? Array.from({ length: expected.turns }, (_, i) => i + 1) : [] });
        } catch (error) {
          throw new Error(`${(error as Error).message}\n${trace(record)}`);
        }
      }),
      params(),
    );
  });
});
