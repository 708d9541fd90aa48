/**
 * A1–A4 on generated trees of agent tools, nested up to three deep, in virtual time: each loop's model streams
 * text and asks for leaf tools (that answer after some frames, or never) and for sub-agents (loops of their
 * own), and the run is cancelled at a generated moment — unsubscribed, aborted by `signal`, cut by
 * `toolTimeoutMs` — or not at all. After each run: every history handed out at every depth (`turn_end`,
 * `loop_end`, each agent tool's `details.messages`) is one a provider accepts, nothing is left running (no
 * provider call, no tool, at any depth), nothing runs after the outer loop was torn down, and a loop that was not
 * unsubscribed ends with exactly one `loop_end`.
 */
import fc from 'fast-check';
import { Observable, concat, map, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { AgentMessage, LoopEvent, ProviderEvent, ToolRegistry, agentTool, runEventedToolLoop } from '../../src/index.js';
import { assertValidHistory, call, end, start, text } from '../../src/testing/index.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 150);

type CallSpec = { kind: 'leaf'; after: number } | { kind: 'agent'; agent: AgentSpec };
interface TurnSpec {
  /** frames before each event: message_start, the texts, the calls, message_end */
  delays: number[];
  texts: number;
  calls: CallSpec[];
}
interface AgentSpec {
  turns: TurnSpec[];
  /** whether its loop gets the call's context.signal (A3): without it, unsubscription alone must tear it down */
  signal: boolean;
}
type Cancel = { kind: 'none' } | { kind: 'unsubscribe' | 'signal'; at: number } | { kind: 'timeout'; ms: number };

const delay = fc.nat(3);
const leafArb: fc.Arbitrary<CallSpec> = fc.record({ kind: fc.constant('leaf' as const), after: fc.oneof({ weight: 4, arbitrary: fc.nat(6) }, { weight: 1, arbitrary: fc.constant(-1) }) });

/** A loop at `depth` (0: the main loop); its calls are sub-agents down to depth 3, three agent tools deep. */
function agentArb(depth: number): fc.Arbitrary<AgentSpec> {
  const callArb: fc.Arbitrary<CallSpec> =
    depth >= 3 ? leafArb : fc.oneof({ weight: 2, arbitrary: leafArb }, { weight: 2, arbitrary: fc.record({ kind: fc.constant('agent' as const), agent: agentArb(depth + 1) }) });
  const turnArb = fc
    .record({ texts: fc.nat(2), calls: fc.array(callArb, { maxLength: depth >= 2 ? 1 : 2 }) })
    .chain(({ texts, calls }) => fc.record({ texts: fc.constant(texts), calls: fc.constant(calls), delays: fc.array(delay, { minLength: texts + calls.length + 2, maxLength: texts + calls.length + 2 }) }));
  return fc.record({ turns: fc.array(turnArb, { minLength: 1, maxLength: 2 }), signal: fc.boolean() });
}

const cancelArb: fc.Arbitrary<Cancel> = fc.oneof(
  fc.constant({ kind: 'none' as const }),
  fc.record({ kind: fc.constant('unsubscribe' as const), at: fc.nat(40) }),
  fc.record({ kind: fc.constant('signal' as const), at: fc.nat(40) }),
  fc.record({ kind: fc.constant('timeout' as const), ms: fc.integer({ min: 1, max: 20 }) }),
);

/** What the run left: open provider calls and tools at every depth, and what ran after the teardown. */
interface Tally {
  open: Set<string>;
  ranAfterTeardown: string[];
  tornDown: boolean;
}

/** A tracked Observable: open while subscribed and not finished; running it after the teardown is noted. */
function tracked<T>(name: string, tally: Tally, source: () => Observable<T>): Observable<T> {
  return new Observable<T>((subscriber) => {
    if (tally.tornDown) tally.ranAfterTeardown.push(name);
    tally.open.add(name);
    // finished by itself (before it tells anyone) or torn down: no longer running
    const subscription = source().subscribe({
      next: (value) => subscriber.next(value),
      error: (error: unknown) => {
        tally.open.delete(name);
        subscriber.error(error);
      },
      complete: () => {
        tally.open.delete(name);
        subscriber.complete();
      },
    });
    subscription.add(() => tally.open.delete(name));
    return subscription;
  });
}

/** The loop of `spec` at `path` (`a`, `a.1`, …): its provider plays the scripted turns, then answers. */
function loopOf(spec: AgentSpec, path: string, tally: Tally, timeoutMs: number | undefined, signal?: AbortSignal): Observable<LoopEvent> {
  const registry = new ToolRegistry();
  let turn = 0;
  const provider = () => {
    const script = spec.turns[turn];
    const n = ++turn;
    const events: ProviderEvent[] =
      script === undefined
        ? [start, text('done'), end('stop')]
        : [start, ...Array.from({ length: script.texts }, (_, i) => text(`t${i}`)), ...script.calls.map((_, i) => call(`${n}_${i}`, {}, `${path}.${n}.${i}`)), end(script.calls.length > 0 ? 'toolUse' : 'stop')];
    const delays = script?.delays ?? [0, 0, 0];
    return tracked(`${path} call ${n}`, tally, () => concat(...events.map((event, i) => timer(delays[i] ?? 0).pipe(map(() => event)))));
  };
  spec.turns.forEach((script, t) =>
    script.calls.forEach((callSpec, i) => {
      const name = `${t + 1}_${i}`;
      const where = `${path}.${t + 1}.${i}`;
      if (callSpec.kind === 'leaf') {
        registry.register({ name, description: 'a leaf', input: {}, handler: () => tracked(`${where} tool`, tally, () => (callSpec.after < 0 ? new Observable<string>(() => undefined) : timer(callSpec.after).pipe(map(() => 'ok')))) });
      } else {
        registry.register(agentTool({ name, description: 'a sub-agent', input: {}, agent: (_input, context) => loopOf(callSpec.agent, where, tally, timeoutMs, callSpec.agent.signal ? context.signal : undefined) }));
      }
    }),
  );
  return runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: path }], maxTurns: spec.turns.length + 1, ...(timeoutMs !== undefined ? { toolTimeoutMs: timeoutMs } : {}), ...(signal !== undefined ? { signal } : {}) });
}

/** Every history the run handed out, at every depth: each turn_end's and loop_end's, each agent tool's details.messages. */
function histories(event: LoopEvent, found: (readonly AgentMessage[])[] = []): (readonly AgentMessage[])[] {
  if (event.type === 'turn_end' || event.type === 'loop_end') found.push(event.messages);
  if (event.type === 'tool_update' && event.event !== undefined) histories(event.event, found);
  if (event.type === 'tool_result') {
    const details = event.message.details as { messages?: readonly AgentMessage[] } | undefined;
    if (Array.isArray(details?.messages)) found.push(details.messages);
  }
  return found;
}

/** The innermost event an update forwards, through every level. */
function innermost(event: LoopEvent): LoopEvent {
  return event.type === 'tool_update' && event.event !== undefined ? innermost(event.event) : event;
}

/** What is still open under a call id (its tool, or its sub-agent's calls and tools, at any depth). */
const openUnder = (tally: Tally, id: string) => [...tally.open].filter((name) => name.startsWith(`${id} `) || name.startsWith(`${id}.`));

/** A never-answering leaf needs a way out: a cancel, or a timeout. */
const hangs = (spec: AgentSpec): boolean => spec.turns.some((turn) => turn.calls.some((c) => (c.kind === 'leaf' ? c.after < 0 : hangs(c.agent))));

describe('agent tools nested up to three deep, under every cancellation moment (A1–A4)', () => {
  it('A3, A4: every history is valid at every depth, nothing is left running, nothing runs after the teardown, one loop_end unless unsubscribed', () => {
    fc.assert(
      fc.property(agentArb(0), cancelArb, (spec, cancel) => {
        fc.pre(!hangs(spec) || cancel.kind !== 'none');
        const tally: Tally = { open: new Set(), ranAfterTeardown: [], tornDown: false };
        const events: LoopEvent[] = [];
        const stillOpen: string[] = [];
        let completed = false;
        const ts = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
        ts.run(() => {
          const controller = new AbortController();
          if (cancel.kind === 'signal') timer(cancel.at).subscribe(() => controller.abort());
          const loop = loopOf(spec, 'a', tally, cancel.kind === 'timeout' ? cancel.ms : undefined, cancel.kind === 'signal' ? controller.signal : undefined);
          const subscription = loop.subscribe({
            next: (event) => {
              events.push(event);
              // at the moment a call's result is told (at any depth), nothing of it runs any more
              const told = innermost(event);
              if (told.type === 'tool_result') stillOpen.push(...openUnder(tally, told.message.toolCallId));
              if (event.type === 'loop_end') stillOpen.push(...tally.open);
            },
            complete: () => (completed = true),
          });
          subscription.add(() => (tally.tornDown = true));
          if (cancel.kind === 'unsubscribe') {
            timer(cancel.at).subscribe(() => {
              subscription.unsubscribe();
              stillOpen.push(...tally.open); // torn down in that very call
            });
          }
        });
        const unsubscribed = cancel.kind === 'unsubscribe' && !completed;
        expect(stillOpen).toEqual([]);
        expect([...tally.open]).toEqual([]);
        expect(tally.ranAfterTeardown).toEqual([]);
        for (const history of events.flatMap((event) => histories(event))) assertValidHistory(history);
        if (!unsubscribed) {
          expect(completed).toBe(true);
          expect(events.filter((event) => event.type === 'loop_end')).toHaveLength(1);
          expect(events[events.length - 1]!.type).toBe('loop_end');
        }
      }),
      { numRuns: RUNS },
    );
  });
});
