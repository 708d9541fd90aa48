/**
 * R20, R9, R10, R7: hostile registries and providers, generated. A registry whose `get` or `getSpecs` throws
 * (on its n-th call, or as a getter on its n-th read) or gives odd values; a provider that throws, returns no
 * Observable, errors at once, or sends events whose fields throw when read (on their n-th read, so that every
 * place the loop reads them gets its turn); tools whose `schema`, `input` or `handler` throw when read. Whatever
 * happens, the loop's Observable never errors, ends with exactly one `loop_end`, last, and completes; every
 * `turn_start` has its `turn_end`; and nothing reaches RxJS's unhandled-error path (in Node: a dead process).
 */
import fc from 'fast-check';
import { Observable, asapScheduler, config, of, scheduled, throwError } from 'rxjs';
import { LoopEvent, Provider, ProviderEvent, Tool, ToolRegistry, runEventedToolLoop } from '../../src/index.js';
import { call, end, start, text } from '../support/events.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 300);

/** Whether a loop is running: only its reads are counted and may throw, not the checks made of its events afterwards. */
let looping = false;

/** A copy of `value` whose `key` throws on its `at`-th read (0 = the first) by the loop, and reads as it was otherwise. */
function flaky<T extends object>(value: T, key: string, at: number): T {
  const copy = { ...value } as Record<string, unknown>;
  const real = copy[key];
  let reads = 0;
  Object.defineProperty(copy, key, {
    enumerable: true,
    get() {
      if (looping && reads++ === at) throw new Error(`hostile ${key}`);
      return real;
    },
  });
  return copy as T;
}

/**
 * How a value misbehaves: not at all, or a field that throws on its n-th read — up to the 8th, past every read
 * the loop makes of one field (each phase of a turn reads an event's `type` again: a throw at a late read once
 * escaped from a scheduled provider, seed 1101449590).
 */
const hostility = (keys: readonly string[]) =>
  fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, fc.record({ key: fc.constantFrom(...keys), at: fc.nat(7) }));

type Hostility = { key: string; at: number } | undefined;
const applied = <T extends object>(value: T, how: Hostility): T => (how === undefined ? value : flaky(value, how.key, how.at));

const toolArb = fc.record({
  name: fc.constantFrom('a', 'b'),
  behaviour: fc.constantFrom('value', 'throws', 'promise', 'rejects', 'observable-error'),
  hostile: hostility(['schema', 'input', 'handler', 'inputSchema']),
});

const callArb = fc.record({ name: fc.constantFrom('a', 'b', 'missing'), hostile: hostility(['input', 'id', 'name']), eventHostile: hostility(['call', 'type']) });

const turnArb = fc.record({
  kind: fc.constantFrom('events', 'events', 'events', 'throws', 'undefined', 'number', 'promise', 'array', 'errors-at-once', 'errors-later'),
  texts: fc.array(hostility(['text', 'type']), { maxLength: 3 }),
  calls: fc.array(callArb, { maxLength: 3 }),
  endHostile: hostility(['stopReason', 'type', 'usage', 'reasoning']),
  async: fc.boolean(),
});

const registryArb = fc.record({
  getThrowsAt: fc.option(fc.nat(4), { nil: undefined }),
  getSpecsThrowsAt: fc.option(fc.nat(4), { nil: undefined }),
  getReturns: fc.constantFrom('tool', 'tool', 'tool', 'undefined', 'number', 'object'),
  specsReturn: fc.constantFrom('array', 'array', 'array', 'undefined', 'string'),
  // the methods themselves as getters that throw on a later read (the first read is the call-time check)
  methodGetter: hostility(['get', 'getSpecs']).map((how) => (how === undefined ? undefined : { key: how.key, at: how.at + 1 })),
});

const scenarioArb = fc.record({ registry: registryArb, tools: fc.array(toolArb, { maxLength: 2 }), turns: fc.array(turnArb, { minLength: 1, maxLength: 3 }) });
type Scenario = typeof scenarioArb extends fc.Arbitrary<infer S> ? S : never;

function toolOf({ name, behaviour, hostile }: Scenario['tools'][number]): Tool {
  const handler = (): ReturnType<Tool['handler']> => {
    switch (behaviour) {
      case 'throws':
        throw new Error('tool threw');
      case 'promise':
        return Promise.resolve(`${name} later`);
      case 'rejects':
        return Promise.reject(new Error('tool rejected'));
      case 'observable-error':
        return throwError(() => new Error('tool errored'));
      default:
        return `${name} ran`;
    }
  };
  return applied<Tool>({ name, description: `the ${name} tool`, input: {}, handler }, hostile);
}

function registryOf({ registry: plan, tools }: Scenario): ToolRegistry {
  const real = new ToolRegistry();
  for (const tool of tools) {
    try {
      real.register(tool.hostile === undefined ? toolOf(tool) : toolOf({ ...tool, hostile: undefined }));
    } catch {
      // a second tool of one name: the first stands
    }
  }
  const byName = new Map<string, Tool>(tools.map((tool) => [tool.name, toolOf(tool)]));
  let gets = 0;
  let specs = 0;
  const odd: Record<string, unknown> = { undefined, number: 3, object: { name: 'odd' }, string: 'specs' };
  const hostile = {
    get(name: string) {
      if (gets++ === plan.getThrowsAt) throw new Error('hostile get');
      if (plan.getReturns !== 'tool') return odd[plan.getReturns];
      return real.get(name) === undefined ? undefined : byName.get(name);
    },
    getSpecs() {
      if (specs++ === plan.getSpecsThrowsAt) throw new Error('hostile getSpecs');
      return plan.specsReturn === 'array' ? real.getSpecs() : odd[plan.specsReturn];
    },
  };
  return applied(hostile, plan.methodGetter) as unknown as ToolRegistry;
}

function providerOf({ turns }: Scenario): Provider {
  let n = 0;
  return () => {
    const turn = turns[n++];
    if (turn === undefined) return of(start, text('done'), end('stop'));
    switch (turn.kind) {
      case 'throws':
        throw new Error('hostile provider');
      case 'undefined':
        return undefined as unknown as Observable<ProviderEvent>;
      case 'number':
        return 3 as unknown as Observable<ProviderEvent>;
      case 'promise':
        return Promise.resolve(start) as unknown as Observable<ProviderEvent>;
      case 'array':
        return [start, end('stop')] as unknown as Observable<ProviderEvent>;
      case 'errors-at-once':
        return throwError(() => new Error('refused'));
    }
    const events: ProviderEvent[] = [start];
    turn.texts.forEach((how, i) => events.push(applied(text(`t${i} `), how)));
    turn.calls.forEach((c, i) => {
      const made = call(c.name, {}, `c${n}-${i}`) as Extract<ProviderEvent, { type: 'tool_call' }>;
      events.push(applied({ type: 'tool_call', call: applied(made.call, c.hostile) }, c.eventHostile));
    });
    if (turn.kind === 'errors-later') {
      const source = turn.async ? scheduled(events, asapScheduler) : of(...events);
      return new Observable<ProviderEvent>((subscriber) => {
        source.subscribe({ next: (e) => subscriber.next(e), complete: () => subscriber.error(new Error('cut')) });
      });
    }
    events.push(applied(end(turn.calls.length > 0 ? 'toolUse' : 'stop'), turn.endHostile));
    return turn.async ? scheduled(events, asapScheduler) : of(...events);
  };
}

/** Plays the scenario to its end (or its error); `unhandled` collects what reached RxJS's unhandled-error path. */
function play(scenario: Scenario): Promise<{ events: LoopEvent[]; error?: unknown; completed: boolean; unhandled: unknown[] }> {
  const unhandled: unknown[] = [];
  config.onUnhandledError = (error) => unhandled.push(error);
  let loop: Observable<LoopEvent>;
  looping = true;
  try {
    loop = runEventedToolLoop({ provider: providerOf(scenario), registry: registryOf(scenario), messages: [{ role: 'user', content: 'go' }], maxTurns: 4 });
  } catch (error) {
    // only a call-time refusal is allowed: the registry's methods as read then
    looping = false;
    return Promise.resolve({ events: [], error, completed: false, unhandled: [] });
  }
  return new Promise((resolve) => {
    const events: LoopEvent[] = [];
    // a loop that hangs is a failure too: it gets a second, far more than the few ticks a scenario takes
    const hang = setTimeout(() => {
      looping = false;
      resolve({ events, completed: false, unhandled });
    }, 1000);
    const done = (result: { error?: unknown; completed: boolean }) => {
      looping = false;
      clearTimeout(hang);
      // anything RxJS reports later (it throws in a timeout) is seen before the verdict
      setTimeout(() => resolve({ events, ...result, unhandled }), 0);
    };
    loop.subscribe({ next: (event) => events.push(event), error: (error: unknown) => done({ error, completed: false }), complete: () => done({ completed: true }) });
  });
}

describe('R20 hostile registries and providers, generated', () => {
  afterEach(() => {
    config.onUnhandledError = null;
  });

  it('R20, R7: whatever a registry or provider throws, the loop never errors, ends with one loop_end, last, and nothing goes unhandled', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (scenario) => {
        const run = await play(scenario);
        if (run.events.length === 0 && run.error !== undefined) {
          // refused at call time: only ever the registry's own methods, read by the option check
          expect(String(run.error)).toMatch(/hostile (get|getSpecs)/);
          return;
        }
        expect(run.unhandled).toEqual([]);
        expect(run.error).toBeUndefined();
        expect(run.completed).toBe(true);
        const types = run.events.map((e) => e.type);
        expect(types.filter((t) => t === 'loop_end')).toHaveLength(1);
        expect(types.at(-1)).toBe('loop_end');
        expect(types.filter((t) => t === 'turn_start').length).toBe(types.filter((t) => t === 'turn_end').length);
        // R9: every call the loop took has exactly one result
        for (const turnEnd of run.events.filter((e): e is Extract<LoopEvent, { type: 'turn_end' }> => e.type === 'turn_end')) {
          expect(turnEnd.toolResults.length).toBe(turnEnd.turn === 0 ? turnEnd.toolResults.length : (turnEnd.assistant.toolCalls?.length ?? 0));
        }
      }),
      { numRuns: RUNS },
    );
  }, 120_000);
});
