/**
 * C2, C3, C5 on generated conversations: prompts at random frames (some in the same frame), every policy,
 * models that answer, call tools (quick, slow, failing, never answering), fail or stall, presses of the stop
 * button (`abort$`) at random frames, and sometimes a signal that aborts at a random frame. Whatever happens:
 * every history handed out is provider-valid and survives a JSON round trip, each prompt joins the history at
 * most once and in arrival order or is dropped (left open (a)): all of them one way or the other unless the
 * signal stopped the conversation, and the conversation completes. 1,000 runs a property (`PROPERTY_RUNS=N`).
 * The histories are checked by the property suite's own oracle (spec/properties/support/history.ts), not by
 * the library's checks.
 */
import fc from 'fast-check';
import { Observable, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { AgentMessage, ConversationEvent, ConversationPolicy, LoopViewModel, ProviderEvent, ToolRegistry, conversation, initialViewModel, reduceViewModel } from '../../src/index.js';
import { call, end, start, text } from '../../src/testing/index.js';
import { historyProblem, jsonProblem } from '../properties/support/history.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);

/** What one provider call does. */
type Reply =
  | { kind: 'answer'; after: number }
  | { kind: 'tools'; after: number; calls: { tool: 'quick' | 'slow' | 'broken' | 'stuck'; at: number }[] }
  | { kind: 'fail'; after: number }
  | { kind: 'stall' };

interface Generated {
  policy: ConversationPolicy;
  prompts: { frame: number; text: string }[];
  replies: Reply[];
  abortAt: number | undefined;
  /** The frames `abort$` presses at. */
  presses: number[];
  maxTurns: number;
}

const replyArb: fc.Arbitrary<Reply> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('answer' as const), after: fc.nat(3) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('tools' as const),
      after: fc.nat(3),
      calls: fc.array(fc.record({ tool: fc.constantFrom('quick' as const, 'slow' as const, 'broken' as const, 'stuck' as const), at: fc.nat(2) }), { minLength: 1, maxLength: 3 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('fail' as const), after: fc.nat(3) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'stall' as const }) },
);

const generatedArb: fc.Arbitrary<Generated> = fc.record({
  policy: fc.constantFrom<ConversationPolicy>('queue', 'switch', 'steer'),
  prompts: fc
    .array(fc.nat(25), { minLength: 1, maxLength: 6 })
    .map((frames) => frames.sort((a, b) => a - b).map((frame, i) => ({ frame, text: `prompt ${i}` }))),
  replies: fc.array(replyArb, { minLength: 1, maxLength: 8 }),
  abortAt: fc.option(fc.nat(40), { nil: undefined }),
  presses: fc.array(fc.nat(30), { maxLength: 3 }),
  maxTurns: fc.integer({ min: 1, max: 4 }),
});

/** The n-th provider call plays replies[n % length]; a stalled reply never ends (only an abort or a switch ends it). */
function provider(replies: Reply[]) {
  let calls = 0;
  return () => {
    const reply = replies[calls % replies.length]!;
    const n = ++calls;
    return new Observable<ProviderEvent>((subscriber) => {
      if (reply.kind === 'stall') return void subscriber.next(start);
      const timers = [timer(reply.after).subscribe(() => {
        subscriber.next(start);
        if (reply.kind === 'fail') return subscriber.error(new Error('overloaded'));
        if (reply.kind === 'answer') {
          subscriber.next(text(`answer ${n}`));
          subscriber.next(end('stop'));
          return subscriber.complete();
        }
        reply.calls.forEach((c, i) => subscriber.next(call(c.tool, {}, `c${n}_${i}`)));
        subscriber.next(end('toolUse'));
        subscriber.complete();
      })];
      return () => timers.forEach((t) => t.unsubscribe());
    });
  };
}

function registry(): ToolRegistry {
  return new ToolRegistry()
    .register({ name: 'quick', description: 'q', input: {}, handler: () => 'done' })
    .register({ name: 'slow', description: 's', input: {}, handler: () => new Observable<string>((s) => timer(4).subscribe(() => (s.next('late'), s.complete()))) })
    .register({ name: 'broken', description: 'b', input: {}, handler: () => { throw new Error('broken'); } })
    .register({ name: 'stuck', description: 'n', input: {}, handler: () => new Observable<string>(() => undefined) });
}

function run(generated: Generated): { events: ConversationEvent[]; completed: boolean; failed: unknown; stopped: boolean } {
  const result = { events: [] as ConversationEvent[], completed: false, failed: undefined as unknown, stopped: false };
  new TestScheduler((a, b) => expect(a).toEqual(b)).run(({ flush }) => {
    const controller = new AbortController();
    if (generated.abortAt !== undefined) timer(generated.abortAt).subscribe(() => controller.abort());
    // prompts as a cold line: several in one frame form a group
    const prompts = new Observable<string>((subscriber) => {
      const subscriptions = generated.prompts.map(({ frame, text }) => timer(frame).subscribe(() => subscriber.next(text)));
      const last = Math.max(...generated.prompts.map((p) => p.frame));
      subscriptions.push(timer(last + 1).subscribe(() => subscriber.complete()));
      return () => subscriptions.forEach((s) => s.unsubscribe());
    });
    prompts
      .pipe(
        conversation({
          provider: provider(generated.replies),
          registry: registry(),
          policy: generated.policy,
          maxTurns: generated.maxTurns,
          toolTimeoutMs: 30,
          abort$: new Observable<number>((subscriber) => {
            const presses = generated.presses.map((frame) => timer(frame).subscribe(() => subscriber.next(frame)));
            return () => presses.forEach((press) => press.unsubscribe());
          }),
          ...(generated.abortAt === undefined ? {} : { signal: controller.signal }),
        }),
      )
      .subscribe({
        next: (e) => result.events.push(e),
        complete: () => {
          result.completed = true;
          result.stopped = controller.signal.aborted; // the signal ended it, not the prompts
        },
        error: (e: unknown) => (result.failed = e),
      });
    flush();
  });
  return result;
}

/** A stalled provider holds its loop until an abort (a stuck tool times out: toolTimeoutMs). */
function ends(generated: Generated): boolean {
  return generated.abortAt !== undefined || !generated.replies.some((reply) => reply.kind === 'stall');
}

describe('conversation properties (C2, C3, C5)', () => {
  it('C2, C3, left open (a): every history is provider-valid and JSON-safe; each prompt joins once, in order, or is dropped once by abort$ or the signal; it completes and never errors', () => {
    fc.assert(
      fc.property(generatedArb, (generated) => {
        const { events, completed, failed, stopped } = run(generated);
        expect(failed).toBeUndefined();
        if (ends(generated)) expect(completed).toBe(true);

        for (const event of events) {
          if (!('messages' in event)) continue;
          // R29: a tool_result's history may still wait for results: one the loop resumes (R21, R22)
          const waiting = event.type === 'tool_result';
          const problem = historyProblem(event.messages, { waiting, fields: waiting });
          if (problem !== undefined) throw new Error(`the history of a ${event.type}: ${problem}`);
          const lost = jsonProblem(event.messages);
          if (lost !== undefined) throw new Error(`the history of a ${event.type} does not survive JSON: ${lost}`);
        }
        // the prompts that joined: once each, in arrival order; with those dropped (by abort$ or the signal),
        // once each, all that were sent unless the signal stopped it
        const joined = events.filter((e): e is Extract<ConversationEvent, { type: 'user_message' }> => e.type === 'user_message').map((e) => e.message.content);
        const dropped = events.filter((e): e is Extract<ConversationEvent, { type: 'prompt_dropped' }> => e.type === 'prompt_dropped').map((e) => e.message.content);
        const sent = generated.prompts.map((p) => p.text);
        expect(joined).toEqual(sent.filter((prompt) => joined.includes(prompt)));
        expect(new Set([...joined, ...dropped]).size).toBe(joined.length + dropped.length);
        if (generated.presses.length === 0 && generated.abortAt === undefined) expect(dropped).toEqual([]);
        if (completed && !stopped) expect([...joined, ...dropped].sort()).toEqual([...sent].sort());
        // the last history holds every joined prompt exactly once, in order
        const last = [...events].reverse().find((e): e is ConversationEvent & { messages: readonly AgentMessage[] } => 'messages' in e);
        if (last !== undefined) {
          const prompts = last.messages.filter((m) => m.role === 'user' && m.content.startsWith('prompt ')).map((m) => m.content);
          expect(prompts).toEqual(joined);
        }
        // a completed conversation ends with its last loop's loop_end
        if (completed && events.length > 0) expect(events.at(-1)!.type).toBe('loop_end');
      }),
      { numRuns: RUNS },
    );
  });

  it('C4 revised: the view model of any conversation is never idle once a loop has started; a user_message or prompt_dropped never changes the status', () => {
    fc.assert(
      fc.property(generatedArb, (generated) => {
        const { events } = run(generated);
        let state: LoopViewModel = initialViewModel;
        let started = false;
        for (const event of events) {
          const next = reduceViewModel(state, event);
          if (event.type === 'turn_start') {
            started = true;
            expect(next.status).toBe(event.turn === 0 ? 'tools' : 'streaming');
          }
          if (event.type === 'user_message' || event.type === 'prompt_dropped' || event.type === 'turn_end') expect(next.status).toBe(state.status);
          if (started) expect(next.status).not.toBe('idle');
          state = next;
        }
        if (events.at(-1)?.type === 'loop_end') expect(['done', 'error', 'aborted']).toContain(state.status);
      }),
      { numRuns: RUNS },
    );
  });
});
