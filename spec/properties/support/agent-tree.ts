/**
 * Generated trees of agent tools (A1–A4), nested up to three deep, for the property suites: each loop's model
 * streams text and asks for leaf tools (that answer after some frames, or never) and for sub-agents (loops of
 * their own), in virtual time; a cancellation moment to play against it; and a tally of what runs.
 */
import fc from 'fast-check';
import { Observable, concat, map, timer } from 'rxjs';
import { LoopEvent, ProviderEvent, ToolRegistry, agentTool, runEventedToolLoop } from '../../../src/index.js';
import { call, end, start, text } from '../../../src/testing/index.js';

export type CallSpec = { kind: 'leaf'; after: number } | { kind: 'agent'; agent: AgentSpec };
export interface TurnSpec {
  /** frames before each event: message_start, the texts, the calls, message_end */
  delays: number[];
  texts: number;
  calls: CallSpec[];
}
export interface AgentSpec {
  turns: TurnSpec[];
  /** whether its loop gets the call's context.signal (A3): without it, unsubscription alone must tear it down */
  signal: boolean;
}
export type Cancel = { kind: 'none' } | { kind: 'unsubscribe' | 'signal'; at: number } | { kind: 'timeout'; ms: number };

const delay = fc.nat(3);
const leafArb: fc.Arbitrary<CallSpec> = fc.record({ kind: fc.constant('leaf' as const), after: fc.oneof({ weight: 4, arbitrary: fc.nat(6) }, { weight: 1, arbitrary: fc.constant(-1) }) });

/** A loop at `depth` (0: the main loop); its calls are sub-agents down to depth 3, three agent tools deep. */
export function agentArb(depth: number): fc.Arbitrary<AgentSpec> {
  const callArb: fc.Arbitrary<CallSpec> =
    depth >= 3 ? leafArb : fc.oneof({ weight: 2, arbitrary: leafArb }, { weight: 2, arbitrary: fc.record({ kind: fc.constant('agent' as const), agent: agentArb(depth + 1) }) });
  const turnArb = fc
    .record({ texts: fc.nat(2), calls: fc.array(callArb, { maxLength: depth >= 2 ? 1 : 2 }) })
    .chain(({ texts, calls }) => fc.record({ texts: fc.constant(texts), calls: fc.constant(calls), delays: fc.array(delay, { minLength: texts + calls.length + 2, maxLength: texts + calls.length + 2 }) }));
  return fc.record({ turns: fc.array(turnArb, { minLength: 1, maxLength: 2 }), signal: fc.boolean() });
}

export const cancelArb: fc.Arbitrary<Cancel> = fc.oneof(
  fc.constant({ kind: 'none' as const }),
  fc.record({ kind: fc.constant('unsubscribe' as const), at: fc.nat(40) }),
  fc.record({ kind: fc.constant('signal' as const), at: fc.nat(40) }),
  fc.record({ kind: fc.constant('timeout' as const), ms: fc.integer({ min: 1, max: 20 }) }),
);

/** What the run left: open provider calls and tools at every depth, and what ran after the teardown. */
export interface Tally {
  open: Set<string>;
  ranAfterTeardown: string[];
  tornDown: boolean;
}

/** A tracked Observable: open while subscribed and not finished; running it after the teardown is noted. */
export function tracked<T>(name: string, tally: Tally, source: () => Observable<T>): Observable<T> {
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
export function loopOf(spec: AgentSpec, path: string, tally: Tally, timeoutMs: number | undefined, signal?: AbortSignal): Observable<LoopEvent> {
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

/** A never-answering leaf needs a way out: a cancel, or a timeout. */
export const hangs = (spec: AgentSpec): boolean => spec.turns.some((turn) => turn.calls.some((c) => (c.kind === 'leaf' ? c.after < 0 : hangs(c.agent))));
