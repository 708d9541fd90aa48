/**
 * C3 and C2 on generated conversations, in virtual time: prompts from two sources (some synchronous at
 * subscribe, some in the same frame from both), every policy, models that answer or call tools (synchronous
 * or not, inside their subscribe or after a delay), a saved history that resumes (C5), stop presses (`abort$`,
 * synchronous at subscribe or at a frame) and a `signal` that aborts on hearing of an event. 1,000 runs each
 * (`PROPERTY_RUNS=N` to change).
 *
 * - C2: prompts that arrive in one frame from separate sources behave as the policy says, and
 *   `TestScheduler.flush()` never throws from inside the conversation; left open (a): a prompt is dropped only
 *   by a press in its frame (or the signal), nothing typed is lost, and a press ends the running loop as aborted.
 * - C3 / R11: a consumer that unsubscribes synchronously while it hears event k leaves nothing open at that
 *   moment (no provider call, no tool, no subscription to `prompts$` or `abort$`), and nothing runs afterwards
 *   (no provider call, no handler). The same for a bare loop. Each run is left at one or two of its events,
 *   generated, so the runs stay cheap; over a thousand runs every index comes up.
 */
import fc from 'fast-check';
import { Observable, Subscription, merge, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { AgentMessage, ConversationEvent, ConversationPolicy, ProviderEvent, ProviderInput, ToolRegistry, conversation, runEventedToolLoop } from '../../src/index.js';
import { call, end, start, text } from '../../src/testing/index.js';
import { historyProblem } from './support/history.js';
import { HeldSubscriber } from '../../src/util/held-subscriber.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);

/** What one provider call does: `after` 0 sends it all inside the provider's subscribe. */
type Reply = { kind: 'answer'; after: number } | { kind: 'tools'; after: number; tools: ('email' | 'slow' | 'stuck')[] } | { kind: 'stall' };

interface Generated {
  policy: ConversationPolicy;
  /** `frame` -1: synchronous, at subscribe; `source` 0 or 1: two separate Observables, merged. */
  prompts: { frame: number; source: 0 | 1 }[];
  replies: Reply[];
  /** `abort$`'s presses, by frame; -1: synchronous, at subscribe. */
  presses: number[];
  /** Where the C3 / R11 properties leave: each taken modulo the number of events of the whole run. */
  leaves: number[];
  /** The consumer aborts the signal on hearing of this event (index), if any. */
  abortOn: number | undefined;
  resume: boolean;
}

const replyArb: fc.Arbitrary<Reply> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('answer' as const), after: fc.nat(2) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('tools' as const),
      after: fc.nat(2),
      tools: fc.array(fc.constantFrom('email' as const, 'slow' as const, 'stuck' as const), { minLength: 1, maxLength: 2 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'stall' as const }) },
);

const generatedArb: fc.Arbitrary<Generated> = fc.record({
  policy: fc.constantFrom<ConversationPolicy>('queue', 'switch', 'steer'),
  prompts: fc.array(fc.record({ frame: fc.integer({ min: -1, max: 8 }), source: fc.constantFrom<0 | 1>(0, 1) }), { minLength: 1, maxLength: 5 }),
  replies: fc.array(replyArb, { minLength: 1, maxLength: 5 }),
  presses: fc.array(fc.integer({ min: -1, max: 12 }), { maxLength: 3 }),
  leaves: fc.array(fc.nat(), { minLength: 1, maxLength: 2 }),
  abortOn: fc.option(fc.nat(30), { nil: undefined, freq: 4 }),
  resume: fc.boolean(),
});

/** What is open and what ran: every provider call, handler, tool and source subscription is counted. */
interface Counts {
  providerCalls: number;
  providersOpen: number;
  handlerCalls: number;
  toolsOpen: number;
  promptsOpen: number;
  abortsOpen: number;
}

/** An Observable counted open from its subscribe until it completes (a source that has completed is done) or is closed. */
function tracked<T>(counts: Counts, key: 'providersOpen' | 'toolsOpen' | 'promptsOpen' | 'abortsOpen', body: (subscriber: { next: (value: T) => void; complete: () => void; closed: boolean }) => Subscription | void): Observable<T> {
  return new Observable<T>((subscriber) => {
    let open = true;
    const close = () => {
      if (open) counts[key]--;
      open = false;
    };
    counts[key]++;
    subscriber.add(close);
    const inner = body({
      next: (value) => subscriber.next(value),
      complete: () => {
        close();
        subscriber.complete();
      },
      get closed() {
        return subscriber.closed;
      },
    });
    if (inner) subscriber.add(inner);
  });
}

/** The n-th provider call plays replies[n % length]. */
function provider(replies: Reply[], counts: Counts) {
  let calls = 0;
  return (_input: ProviderInput) => {
    counts.providerCalls++;
    const reply = replies[calls % replies.length]!;
    const n = ++calls;
    return tracked<ProviderEvent>(counts, 'providersOpen', (subscriber) => {
      const play = () => {
        subscriber.next(start);
        if (reply.kind === 'stall') return;
        if (reply.kind === 'answer') {
          subscriber.next(text(`answer ${n}`));
          subscriber.next(end('stop'));
          return subscriber.complete();
        }
        reply.tools.forEach((tool, i) => subscriber.next(call(tool, {}, `c${n}_${i}`)));
        subscriber.next(end('toolUse'));
        subscriber.complete();
      };
      if (reply.kind !== 'stall' && reply.after > 0) return timer(reply.after).subscribe(play);
      play();
    });
  };
}

function registry(counts: Counts): ToolRegistry {
  const handler = (body: (subscriber: { next: (value: string) => void; complete: () => void }) => Subscription | void) => () => {
    counts.handlerCalls++;
    return tracked<string>(counts, 'toolsOpen', body);
  };
  return new ToolRegistry()
    .register({ name: 'email', description: 'sends an email at once', input: {}, handler: handler((s) => (s.next('sent'), s.complete())) })
    .register({ name: 'slow', description: 'answers after 3 frames', input: {}, handler: handler((s) => timer(3).subscribe(() => (s.next('late'), s.complete()))) })
    .register({ name: 'stuck', description: 'never answers', input: {}, handler: handler(() => undefined) });
}

/** A saved run whose call of `email` never got its result (C5: it resumes first). */
const SAVED: AgentMessage[] = [
  { role: 'user', content: 'mail Bob' },
  { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [{ id: 'saved', name: 'email', input: {} }] },
];

interface Played {
  events: ConversationEvent[];
  completed: boolean;
  failed: unknown;
  counts: Counts;
  /** The counts at the moment the consumer left (right after its synchronous unsubscribe), if it did. */
  atLeave: Counts | undefined;
  /** Each prompt's text, the frame it arrived in, and whether the conversation had completed by then. */
  arrivals: { text: string; frame: number; late: boolean }[];
  /** The frame of each event. */
  frames: number[];
  /** Each press of `abort$`: its frame, and how many events the consumer had heard by then. */
  pressed: { frame: number; heard: number }[];
}

/** Plays `generated` in virtual time; with `leaveAt`, the consumer unsubscribes while it hears that event. */
function play(generated: Generated, leaveAt?: number, bare = false): Played {
  const counts: Counts = { providerCalls: 0, providersOpen: 0, handlerCalls: 0, toolsOpen: 0, promptsOpen: 0, abortsOpen: 0 };
  const played: Played = { events: [], completed: false, failed: undefined, counts, atLeave: undefined, arrivals: [], frames: [], pressed: [] };
  const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
  scheduler.run(({ flush }) => {
    const controller = new AbortController();
    const texts = generated.prompts.map((_, i) => `prompt ${i}`);
    const source = (which: 0 | 1) =>
      tracked<string>(counts, 'promptsOpen', (subscriber) => {
        const mine = generated.prompts.map((p, i) => ({ ...p, text: texts[i]! })).filter((p) => p.source === which);
        const say = (text: string) => {
          played.arrivals.push({ text, frame: scheduler.now(), late: played.completed });
          subscriber.next(text);
        };
        for (const p of mine) if (p.frame === -1 && !subscriber.closed) say(p.text);
        const timers = new Subscription();
        for (const p of mine) if (p.frame >= 0) timers.add(timer(p.frame).subscribe(() => say(p.text)));
        timers.add(timer(9).subscribe(() => subscriber.complete()));
        return timers;
      });
    const presses = tracked<number>(counts, 'abortsOpen', (subscriber) => {
      const press = (frame: number) => {
        played.pressed.push({ frame: scheduler.now(), heard: played.events.length });
        subscriber.next(frame);
      };
      for (const frame of generated.presses) if (frame === -1 && !subscriber.closed) press(frame);
      const timers = new Subscription();
      for (const frame of generated.presses) if (frame >= 0) timers.add(timer(frame).subscribe(() => press(frame)));
      return timers;
    });
    const options = { provider: provider(generated.replies, counts), registry: registry(counts), maxTurns: 3, toolTimeoutMs: 7, signal: controller.signal };
    const run$: Observable<ConversationEvent> = bare
      ? runEventedToolLoop({ ...options, messages: generated.resume ? SAVED : [{ role: 'user', content: 'hi' }] })
      : merge(source(0), source(1)).pipe(conversation({ ...options, policy: generated.policy, abort$: presses, ...(generated.resume ? { messages: SAVED } : {}) }));
    const consumer: HeldSubscriber<ConversationEvent> = new HeldSubscriber<ConversationEvent>({
      next: (event) => {
        const index = played.events.push(event) - 1;
        played.frames.push(scheduler.now());
        if (index === generated.abortOn) controller.abort();
        if (index === leaveAt) {
          consumer.unsubscribe();
          played.atLeave = { ...counts };
        }
      },
      complete: () => (played.completed = true),
      error: (error: unknown) => (played.failed = error),
    });
    run$.subscribe(consumer);
    flush();
    if (!consumer.closed) consumer.unsubscribe(); // a stalled run: leave at the end
  });
  return played;
}

const params = { numRuns: RUNS };

/** `expect(actual).toEqual(expected)`, asked only when they differ: a thousand runs of cheap checks stay cheap. */
function same(actual: object, expected: object): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) expect(actual).toEqual(expected);
}

/**
 * The events a run is left at: generated ones (modulo the run's length), so that 1,000 runs stay cheap — each
 * run replays a few leave points, not all of them; over the runs every index comes up.
 */
function leavePoints(generated: Generated, whole: Played): number[] {
  return whole.events.length === 0 ? [] : [...new Set(generated.leaves.map((leave) => leave % whole.events.length))];
}

/**
 * C2 and left open (a) on a conversation played whole: prompts from separate sources in one frame behave as the
 * policy says; every prompt joins once, in order, or is dropped by a press of `abort$` in its frame (or the
 * signal); a press while a loop runs ends it as aborted; every history handed out is valid (R4, R29).
 */
function checkWhole(generated: Generated, played: Played): void {
  const { events, completed, failed, counts, arrivals } = played;
  expect(failed).toBeUndefined();
  const users = events.filter((e): e is Extract<ConversationEvent, { type: 'user_message' }> => e.type === 'user_message').map((e) => e.message.content);
  const dropped = events.filter((e): e is Extract<ConversationEvent, { type: 'prompt_dropped' }> => e.type === 'prompt_dropped').map((e) => e.message.content);
  const sent = arrivals.map((a) => a.text);
  // every prompt the conversation received before it completed either joined or was dropped, once — with or
  // without a signal (C3: nothing the user typed is lost); those that joined, in arrival order
  expect(users).toEqual(sent.filter((t) => users.includes(t)));
  expect(new Set([...users, ...dropped]).size).toBe(users.length + dropped.length);
  const received = arrivals.filter((a) => !a.late).map((a) => a.text);
  if (completed) expect({ accounted: [...users, ...dropped].sort() }).toEqual({ accounted: [...received].sort() });
  if (dropped.length > 0) expect(generated.presses.length > 0 || generated.abortOn !== undefined).toBe(true);
  if (completed) expect({ providersOpen: counts.providersOpen, toolsOpen: counts.toolsOpen, promptsOpen: counts.promptsOpen }).toEqual({ providersOpen: 0, toolsOpen: 0, promptsOpen: 0 });

  const frameOf = new Map(arrivals.map((a) => [a.text, a.frame]));
  const kinds = events.map((e) => (e.type === 'user_message' ? e.message.content : e.type));
  if (generated.policy === 'switch') {
    // of several arriving in one frame, one loop runs on: no turn_start between the user_messages of one frame
    kinds.forEach((kind, i) => {
      if (!frameOf.has(kind)) return;
      const next = kinds.slice(i + 1).find((k) => k === 'turn_start' || (frameOf.has(k) && frameOf.get(k) === frameOf.get(kind)));
      if (next !== undefined && next !== 'turn_start') expect(kinds.slice(i + 1, kinds.indexOf(next))).not.toContain('turn_start');
    });
  }
  if (generated.policy === 'queue') {
    // each loop takes one prompt: never two user_messages before one turn_start
    const starts = kinds.filter((k) => k === 'turn_start' || frameOf.has(k)).join(' ');
    expect(starts).not.toMatch(/prompt \d+ prompt \d+/);
  }
  // left open (a): a prompt is dropped only by a press of abort$ in its frame, or once the signal aborted
  const { frames, pressed } = played;
  events.forEach((event, i) => {
    if (event.type !== 'prompt_dropped') return;
    const byPress = pressed.some((press) => press.frame === frames[i] && press.heard <= i);
    const bySignal = generated.abortOn !== undefined && generated.abortOn < i;
    expect({ dropped: event.message.content, frame: frames[i], by: byPress ? 'press' : bySignal ? 'signal' : 'nothing' }).not.toMatchObject({ by: 'nothing' });
  });
  // R11 through abort$: a press while a loop runs ends that loop as aborted
  for (const press of pressed) {
    const before = events.slice(0, press.heard);
    const lastStart = before.map((e) => e.type).lastIndexOf('turn_start');
    const lastEnd = before.map((e) => e.type).lastIndexOf('loop_end');
    if (lastStart <= lastEnd) continue; // no loop ran then
    const ended = events.slice(press.heard).find((e) => e.type === 'loop_end');
    if (ended !== undefined) expect({ press: press.frame, reason: ended.reason }).toEqual({ press: press.frame, reason: 'aborted' });
  }
  for (const event of events) {
    if (!('messages' in event)) continue;
    // R29: a tool_result's history may still wait for results: one the loop resumes (R21, R22)
    const waiting = event.type === 'tool_result';
    const problem = historyProblem(event.messages, { waiting, fields: waiting });
    if (problem !== undefined) throw new Error(`the history of a ${event.type}: ${problem}`);
  }
}

describe('C2, C3 / R11: conversations played whole, and left at any event (property)', () => {
  it('C2, C3, left open (a): a conversation of prompts from separate sources in one frame, abort$ presses and a signal plays as its policy says, drops a prompt only at a press (or the signal), ends the running loop as aborted at a press, flush never throws; a consumer that leaves while it hears any event leaves no provider call, tool, prompts$ or abort$ open, and nothing runs after', () => {
    fc.assert(
      fc.property(generatedArb, (generated) => {
        const whole = play(generated); // throws if flush() does
        checkWhole(generated, whole);
        for (const k of leavePoints(generated, whole)) {
          const left = play(generated, k);
          expect(left.atLeave).toBeDefined();
          same({ k, ...left.atLeave! }, { k, ...left.atLeave!, providersOpen: 0, toolsOpen: 0, promptsOpen: 0, abortsOpen: 0 });
          // nothing ran after it left, and nothing was opened again
          same({ k, ...left.counts }, { k, ...left.atLeave! });
        }
      }),
      params,
    );
  });

  it('R11: a consumer that leaves while it hears any event of a bare loop leaves no provider call or tool open, and nothing runs after', () => {
    fc.assert(
      fc.property(generatedArb, (generated) => {
        const whole = play(generated, undefined, true);
        for (const k of leavePoints(generated, whole)) {
          const left = play(generated, k, true);
          same({ k, providersOpen: left.atLeave!.providersOpen, toolsOpen: left.atLeave!.toolsOpen }, { k, providersOpen: 0, toolsOpen: 0 });
          same({ k, ...left.counts }, { k, ...left.atLeave! });
        }
      }),
      params,
    );
  });
});

