/**
 * T9 revised: random runs on real timers, as a user records them — scripted replies with gaps between their
 * events, series tools (one with progress, one a Promise) and an agent tool (its inner loop on timers too), a `beforeToolCall` that denies,
 * answers or waits, an abort at any moment (in the go of the subscription included), conversations under
 * each policy — for `recordMarbles` with `frameMs` 1 or 10.
 */
import fc from 'fast-check';
import { Observable, concat, map, merge, of, timer } from 'rxjs';
import { ToolRegistry, agentTool, conversation, runEventedToolLoop, type ConversationEvent, type Provider, type ProviderEvent, type ToolDecision } from 'rx-tool-loop';
import { call, end, start, text } from 'rx-tool-loop/testing';

const ms = (max: number) => fc.integer({ min: 0, max });

const callArb = fc.record({
  tool: fc.constantFrom('search', 'agent', 'quick', 'progress', 'promise'),
  hook: fc.constantFrom('none', 'deny', 'answer', 'wait'),
  hookMs: ms(8),
});
const turnArb = fc.record({
  /** Milliseconds before each event (0: in the same go as the one before). */
  gaps: fc.array(ms(6), { minLength: 6, maxLength: 6 }),
  texts: fc.integer({ min: 0, max: 2 }),
  calls: fc.array(callArb, { maxLength: 2 }),
});
export const realRunArb = fc.record({
  frameMs: fc.constantFrom(1, 10),
  turns: fc.array(turnArb, { minLength: 1, maxLength: 3 }),
  /** The search tool's time (0: it answers in the go of its start). */
  searchMs: ms(10),
  searchFails: fc.boolean(),
  inner: fc.record({ gaps: fc.array(ms(4), { minLength: 4, maxLength: 4 }), search: fc.boolean() }),
  /** When the run is aborted (0: right after the subscription, in its go), or never. */
  abortMs: fc.option(ms(60), { nil: undefined }),
  conversation: fc.option(fc.record({ policy: fc.constantFrom('queue' as const, 'switch' as const, 'steer' as const), secondMs: ms(30) }), { nil: undefined }),
});
export type RealRun = typeof realRunArb extends fc.Arbitrary<infer T> ? T : never;

/** `events`, each `gaps[i]` ms after the one before (0: in the same go). */
function timed(events: readonly ProviderEvent[], gaps: readonly number[]): Observable<ProviderEvent> {
  return concat(...events.map((event, i) => ((gaps[i] ?? 0) === 0 ? of(event) : timer(gaps[i]!).pipe(map(() => event)))));
}

/** A provider playing `turns` in order on real timers; past them, a short answer at once. */
function provider(turns: Observable<ProviderEvent>[]): Provider {
  let n = 0;
  return () => turns[n++] ?? of(start, text('done'), end('stop'));
}

/** The run `plan` describes, and the abort to make once it is subscribed (for an abort in the subscription's go). */
export function realRun(plan: RealRun): { run$: Observable<ConversationEvent>; afterSubscribe: () => void } {
  const decisions = new Map<string, RealRun['turns'][number]['calls'][number]>();
  const turns = plan.turns.map((turn, n) => {
    const events: ProviderEvent[] = [start];
    for (let i = 0; i < turn.texts; i++) events.push(text(`text ${n + 1}.${i} `));
    turn.calls.forEach((c, i) => {
      const id = `c${n + 1}_${i}`;
      decisions.set(id, c);
      events.push(call(c.tool, { q: id }, id));
    });
    events.push(end(turn.calls.length > 0 ? 'toolUse' : 'stop'));
    return timed(events, turn.gaps);
  });
  const search = () =>
    plan.searchMs === 0 ? 'hits' : timer(plan.searchMs).pipe(map(() => (plan.searchFails ? { content: 'search is down', isError: true } : 'hits')));
  const inner = () =>
    runEventedToolLoop({
      provider: provider([
        timed(plan.inner.search ? [start, call('search', {}, 'i1'), end('toolUse')] : [start, text('inner answer'), end('stop')], plan.inner.gaps),
        timed([start, text('inner done'), end('stop')], plan.inner.gaps),
      ]),
      registry: new ToolRegistry().register({ name: 'search', description: 'search', input: {}, handler: search }),
      messages: [{ role: 'user', content: 'research' }],
    });
  const registry = new ToolRegistry()
    .register({ name: 'search', description: 'search', input: {}, handler: search })
    .register({ name: 'quick', description: 'quick', input: {}, handler: () => 'quick answer' })
    // a value at once, the answer later (R14: the first shows as progress when the second comes)
    .register({ name: 'progress', description: 'progress', input: {}, handler: () => concat(of('working'), timer(plan.searchMs + 1).pipe(map(() => 'worked'))) })
    // a Promise tool on a real timer
    .register({ name: 'promise', description: 'promise', input: {}, handler: () => new Promise<string>((resolve) => setTimeout(() => resolve('promised'), plan.searchMs)) })
    .register(agentTool({ name: 'agent', description: 'agent', agent: inner }));
  const beforeToolCall = (c: { id: string; name: string }) => {
    const planned = decisions.get(c.id);
    if (planned === undefined || planned.hook === 'none') return undefined;
    const decision: ToolDecision | undefined =
      planned.hook === 'deny' ? { action: 'deny', reason: `no ${c.name}` } : planned.hook === 'answer' ? { action: 'answer', output: `canned ${c.name}` } : undefined;
    return planned.hookMs === 0 ? decision : timer(planned.hookMs).pipe(map(() => decision));
  };
  const controller = new AbortController();
  const options = { provider: provider(turns), registry, beforeToolCall };
  let afterSubscribe = () => {};
  if (plan.abortMs === 0 && plan.conversation === undefined) afterSubscribe = () => controller.abort();
  else if (plan.abortMs !== undefined && plan.conversation === undefined) afterSubscribe = () => void setTimeout(() => controller.abort(), plan.abortMs);
  if (plan.conversation === undefined) return { run$: runEventedToolLoop({ ...options, messages: [{ role: 'user', content: 'go' }], signal: controller.signal }), afterSubscribe };
  const prompts = merge(of('first'), timer(plan.conversation.secondMs).pipe(map(() => 'second')));
  const abort$ = plan.abortMs === undefined ? undefined : timer(plan.abortMs);
  return { run$: prompts.pipe(conversation({ ...options, policy: plan.conversation.policy, ...(abort$ !== undefined ? { abort$ } : {}) })), afterSubscribe };
}
