/** H8: calls that wait for a person (`approvals`), through the loop as users give them. */
import { NEVER, Observable, ReplaySubject, Subject, of, throwError } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import {
  AgentMessage,
  ApprovalAnswer,
  LoopEvent,
  LoopOptions,
  ToolApprovals,
  ToolCall,
  ToolRegistry,
  ToolResultMessage,
  conversation,
  runEventedToolLoop,
  scriptedProvider,
} from '../../src/index.js';
import { described, expectLoop, loopLegend, marbleProvider, marbleTools } from '../../src/testing/index.js';
import { answerTurn, call, collectSync, end, loopEndOf, only, start, text, tool, toolTurn } from '../support/events.js';

const ask = (content = 'go'): AgentMessage[] => [{ role: 'user', content }];
const testScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const answer = (toolCallId: string, decision: ApprovalAnswer['decision']): ApprovalAnswer => ({ toolCallId, decision });
const names = (name: string) => (toolCall: ToolCall) => toolCall.name === name;

/** A registry of `transfer` and `lookup`, each answering with its input, and the calls each handler saw. */
function bank() {
  const ran: ToolCall[] = [];
  const echo = (name: string) =>
    tool(name, (input, context) => {
      ran.push(context.call);
      return `${name} ${JSON.stringify(input)}`;
    });
  return { ran, registry: new ToolRegistry().register(echo('transfer')).register(echo('lookup')) };
}

/** A loop over scripted turns, collected synchronously. */
function runSync(options: Omit<LoopOptions, 'provider' | 'messages'> & { turns: Parameters<typeof scriptedProvider>[0]; messages?: readonly AgentMessage[] }) {
  const { turns, messages = ask(), ...rest } = options;
  return collectSync(runEventedToolLoop({ provider: scriptedProvider(turns), messages, ...rest })).values;
}

const results = (events: readonly LoopEvent[]): ToolResultMessage[] => only(events, 'tool_result').map((event) => event.message);
const types = (events: readonly LoopEvent[]) => events.map((event) => event.type);

describe('approvals (H8)', () => {
  const events = { s: start, a: call('approve_me'), b: call('other'), h: text('while I wait'), u: end('toolUse'), t: text('ok'), e: end('stop') };
  const legend = loopLegend(events, {
    1: 'turn_start 1',
    2: 'turn_start 2',
    W: 'tool_approval approve_me',
    β: 'tool_start other',
    B: 'tool_result other: done',
    α: 'tool_start approve_me',
    A: 'tool_result approve_me: ran',
    E: 'turn_end 1 (toolUse): user, assistant "while I wait"[approve_me,other], toolResult approve_me, toolResult other',
    F: 'turn_end 2 (stop): user, assistant "while I wait"[approve_me,other], toolResult approve_me, toolResult other, assistant "ok"',
    L: 'loop_end stop',
  });

  it('H8, H1: a call that needs approval waits alone: tool_approval, the model streams on, the other call runs, the decision starts it', () => {
    testScheduler().run((helpers) => {
      const { cold, hot, expectSubscriptions } = helpers;
      const decisions = hot<ApprovalAnswer>('----x-------------d', { x: answer('someone-else', false), d: answer('approve_me', true) });
      const provider = marbleProvider(cold('-s-a-----b---h-u|', events), cold('-----s-t-e|', events));
      const registry = marbleTools({ approve_me: cold('--(x|)', { x: 'ran' }), other: cold('-----(y|)', { y: 'done' }) });
      const run = runEventedToolLoop({ provider, registry, messages: ask(), approvals: { needsApproval: names('approve_me'), decisions } });
      expectLoop(helpers, run).toBe('1s-(aW)--(bβ)hBu--α-(AE2)s-t-e(FL|)', legend);
      // subscribed when the call got its slot, left at its answer
      expectSubscriptions(decisions.subscriptions).toBe('---^--------------!');
    });
  });

  it('H8, H1: in sequential mode the call behind a waiting approval waits for its slot, as behind a running tool', () => {
    testScheduler().run((helpers) => {
      const { cold, hot, expectSubscriptions } = helpers;
      const other = cold('------(y|)', { y: 'done' });
      const decisions = hot<ApprovalAnswer>('----------d', { d: answer('approve_me', true) });
      const provider = marbleProvider(cold('-s-a-----b-u|', events), cold('-----s-t-e|', events));
      const registry = marbleTools({ approve_me: cold('-(x|)', { x: 'ran' }), other });
      const run = runEventedToolLoop({ provider, registry, messages: ask(), toolExecution: 'sequential', approvals: { needsApproval: names('approve_me'), decisions } });
      const sequential = loopLegend(events, {
        ...legend,
        E: 'turn_end 1 (toolUse): user, assistant[approve_me,other], toolResult approve_me, toolResult other',
        F: 'turn_end 2 (stop): user, assistant[approve_me,other], toolResult approve_me, toolResult other, assistant "ok"',
      });
      expectLoop(helpers, run).toBe('1s-(aW)--bα(uAβ)-(BE2)s-t-e(FL|)', sequential);
      expectSubscriptions(other.subscriptions).toBe('-----------^-----!');
    });
  });

  it('H8: a decision known before the run (of, ReplaySubject) answers at once: no tool_approval', () => {
    const { registry } = bank();
    const turns = [toolTurn(call('transfer', { n: '1' }, 'c1')), answerTurn('done')];
    const replay = new ReplaySubject<ApprovalAnswer>();
    replay.next(answer('c1', true));
    for (const decisions of [of(answer('other', false), answer('c1', true)), replay]) {
      const events = runSync({ turns, registry, approvals: { needsApproval: () => true, decisions } });
      expect(types(events)).not.toContain('tool_approval');
      expect(results(events).map((result) => result.content)).toEqual(['transfer {"n":"1"}']);
    }
  });

  it('H8: false denies the call (`denied: not approved`, isError) without tool_start; afterToolCall sees the denial (H3)', () => {
    const { ran, registry } = bank();
    const seen: string[] = [];
    const events = runSync({
      turns: [toolTurn(call('transfer', {}, 'c1')), answerTurn('done')],
      registry,
      approvals: { needsApproval: () => true, decisions: of(answer('c1', false)) },
      afterToolCall: (result) => void seen.push(result.content),
    });
    expect(ran).toEqual([]);
    expect(types(events)).not.toContain('tool_start');
    expect(results(events)).toEqual([expect.objectContaining({ toolCallId: 'c1', content: 'denied: not approved', isError: true })]);
    expect(seen).toEqual(['denied: not approved']);
  });

  it('H8, H2: a ToolDecision acts as beforeToolCall\'s: run on a rewritten input (checked again), deny with a reason, answer', () => {
    const { ran, registry } = bank();
    const turns = [toolTurn(call('transfer', { n: '1' }, 'c1'), call('transfer', { n: '2' }, 'c2'), call('transfer', { n: '3' }, 'c3'), call('transfer', { n: '4' }, 'c4')), answerTurn('done')];
    const decisions = of(
      answer('c1', { action: 'run', input: { n: '10' } }),
      answer('c2', { action: 'deny', reason: 'too much' }),
      answer('c3', { action: 'answer', output: 'cached' }),
      answer('c4', { action: 'run', input: null as never }),
    );
    const events = runSync({ turns, registry, approvals: { needsApproval: () => true, decisions } });
    expect(results(events).map((result) => [result.content, result.isError])).toEqual([
      ['transfer {"n":"10"}', false],
      ['denied: too much', true],
      ['cached', false],
      [expect.stringMatching(/^error: invalid input/), true],
    ]);
    expect(ran).toEqual([{ id: 'c1', name: 'transfer', input: { n: '10' } }]);
    // the history keeps the model's own call (H2)
    expect(loopEndOf(events).messages[1]).toMatchObject({ toolCalls: [{ id: 'c1', input: { n: '1' } }, {}, {}, {}] });
  });

  it('H8, H4: an answer that is no decision, an erroring decisions and a throwing needsApproval fail the call (`approval failed: …`), and the loop goes on', () => {
    const { ran, registry } = bank();
    const turns = [toolTurn(call('transfer', {}, 'c1')), answerTurn('done')];
    const failing = (approvals: ToolApprovals) => {
      const events = runSync({ turns, registry, approvals });
      expect(loopEndOf(events).reason).toBe('stop');
      return results(events)[0]!;
    };
    expect(failing({ needsApproval: () => true, decisions: of(answer('c1', 'yes' as never)) })).toMatchObject({
      content: 'error: approval failed: approval decision must be true, false or a ToolDecision (got "yes", a string)',
      isError: true,
    });
    const broken = failing({ needsApproval: () => true, decisions: throwError(() => new Error('queue down')) });
    expect(broken).toMatchObject({ content: 'error: approval failed: queue down', isError: true, details: { error: { name: 'Error', message: 'queue down' } } });
    const throwing = failing({
      needsApproval: () => {
        throw new Error('no policy');
      },
      decisions: NEVER,
    });
    expect(throwing).toMatchObject({ content: 'error: approval failed: no policy', isError: true });
    expect(ran).toEqual([]);
  });

  it('H8, R20: only `true` from needsApproval asks; decisions that are no object are passed over; an answer whose id throws when read fails the call', () => {
    const turns = [toolTurn(call('transfer', {}, 'c1')), answerTurn('done')];
    // a truthy 1 is not `true`: the call runs unasked, and decisions are never subscribed
    const unasked = bank();
    const idle = new Subject<ApprovalAnswer>();
    const ranAtOnce = runSync({ turns, registry: unasked.registry, approvals: { needsApproval: () => 1 as never, decisions: idle } });
    expect(only(ranAtOnce, 'tool_approval')).toEqual([]);
    expect(unasked.ran).toHaveLength(1);
    expect(idle.observed).toBe(false);
    // null, a string and a number on decisions are not answers: the call's own answer after them decides
    const passed = bank();
    const noise = of(null, 'c1', 7, answer('c1', true)) as Observable<ApprovalAnswer>;
    const decided = runSync({ turns, registry: passed.registry, approvals: { needsApproval: () => true, decisions: noise } });
    expect(only(decided, 'tool_approval')).toEqual([]);
    expect(results(decided)[0]).toMatchObject({ content: 'transfer {}', isError: false });
    // an answer whose toolCallId throws when read
    const hostile = bank();
    const throwingId = {
      get toolCallId(): string {
        throw new Error('no id');
      },
      decision: true,
    };
    const failed = runSync({ turns, registry: hostile.registry, approvals: { needsApproval: () => true, decisions: of(throwingId) } });
    expect(results(failed)[0]).toMatchObject({ content: 'error: approval failed: no id', isError: true });
    expect(loopEndOf(failed).reason).toBe('stop');
    expect(hostile.ran).toEqual([]);
  });

  it('H8, H4: decisions that error later fail the waiting call then, after its tool_approval', () => {
    testScheduler().run((helpers) => {
      const { cold } = helpers;
      const events = { s: start, a: call('approve_me'), u: end('toolUse'), e: end('stop') };
      const decisions = cold<ApprovalAnswer>('---------#', undefined, new Error('queue down'));
      const run = runEventedToolLoop({
        provider: marbleProvider(cold('-s-a----u|', events), cold('-----(se|)', events)),
        registry: marbleTools({ approve_me: 'ran' }),
        messages: ask(),
        approvals: { needsApproval: () => true, decisions },
      });
      const failed = loopLegend(events, {
        1: 'turn_start 1',
        W: 'tool_approval approve_me',
        A: 'tool_result approve_me: error: approval failed: queue down (isError)',
        E: 'turn_end 1 (toolUse): user, assistant[approve_me], toolResult approve_me',
        2: 'turn_start 2',
        F: 'turn_end 2 (stop): user, assistant[approve_me], toolResult approve_me, assistant',
        L: 'loop_end stop',
      });
      expectLoop(helpers, run).toBe('1s-(aW)-u---(AE2)(seFL|)', failed);
    });
  });

  it('H8: needsApproval false runs the call as without approvals, and decisions are never subscribed', () => {
    const { ran, registry } = bank();
    const decisions = new Subject<ApprovalAnswer>();
    const events = runSync({ turns: [toolTurn(call('lookup', {}, 'c1')), answerTurn('done')], registry, approvals: { needsApproval: names('transfer'), decisions } });
    expect(types(events)).toEqual(['turn_start', 'message_start', 'tool_call', 'tool_start', 'tool_result', 'message_end', 'turn_end', 'turn_start', 'message_start', 'text_delta', 'message_end', 'turn_end', 'loop_end']);
    expect(ran).toHaveLength(1);
    expect(decisions.observed).toBe(false);
  });

  it('H8, H2: asked after beforeToolCall let the call run, on the input it rewrote; a call it denied is never asked', () => {
    const { ran, registry } = bank();
    const asked: ToolCall[] = [];
    const events = runSync({
      turns: [toolTurn(call('transfer', { n: '1' }, 'c1'), call('transfer', { n: '2' }, 'c2')), answerTurn('done')],
      registry,
      beforeToolCall: (toolCall) => (toolCall.id === 'c1' ? { action: 'run', input: { n: '100' } } : { action: 'deny', reason: 'no' }),
      approvals: {
        needsApproval: (toolCall) => {
          asked.push(toolCall);
          return true;
        },
        decisions: of(answer('c1', true)),
      },
    });
    expect(asked).toEqual([{ id: 'c1', name: 'transfer', input: { n: '100' } }]);
    expect(ran).toEqual([{ id: 'c1', name: 'transfer', input: { n: '100' } }]);
    expect(results(events).map((result) => result.content)).toEqual(['transfer {"n":"100"}', 'denied: no']);
  });

  it('H8: tool_approval carries the call as it would run and, as R29\'s tool_result, the history to save at that moment', () => {
    const { registry } = bank();
    const decisions = new Subject<ApprovalAnswer>();
    const seen: LoopEvent[] = [];
    const subscription = runEventedToolLoop({
      provider: () =>
        new Observable((subscriber) => {
          subscriber.next(start);
          subscriber.next(text('moving money'));
          subscriber.next(call('lookup', { q: 'x' }, 'c1'));
          subscriber.next(call('transfer', { n: '1' }, 'c2'));
        }),
      registry,
      messages: ask(),
      beforeToolCall: (toolCall) => (toolCall.name === 'transfer' ? { action: 'run', input: { n: '5' } } : undefined),
      approvals: { needsApproval: names('transfer'), decisions },
    }).subscribe((event) => seen.push(event));
    const [waiting] = only(seen, 'tool_approval');
    expect(waiting!.call).toEqual({ id: 'c2', name: 'transfer', input: { n: '5' } });
    // the model still streams: its message as known so far, the result that is in, the waiting call without one
    expect(waiting!.messages).toEqual([
      ...ask(),
      { role: 'assistant', content: 'moving money', stopReason: 'toolUse', toolCalls: [{ id: 'c1', name: 'lookup', input: { q: 'x' } }, { id: 'c2', name: 'transfer', input: { n: '1' } }] },
      expect.objectContaining({ toolCallId: 'c1', content: 'lookup {"q":"x"}' }),
    ]);
    // a history R21 accepts (its last assistant message still waits), which R22 resumes
    expect(() => runEventedToolLoop({ provider: scriptedProvider([]), registry, messages: waiting!.messages })).not.toThrow();
    subscription.unsubscribe();
  });

  it('H8, R29: past 256 messages tool_approval.messages is made when first read, as tool_result\'s, and is the history of that moment', () => {
    const { registry } = bank();
    const long: AgentMessage[] = Array.from({ length: 300 }, (_, i) => ({ role: 'user' as const, content: `m${i}` }));
    const decisions = new Subject<ApprovalAnswer>();
    const seen: LoopEvent[] = [];
    runEventedToolLoop({
      provider: scriptedProvider([toolTurn(call('lookup', {}, 'c1'), call('transfer', {}, 'c2')), answerTurn('done')]),
      registry,
      messages: long,
      approvals: { needsApproval: names('transfer'), decisions },
    }).subscribe((event) => seen.push(event));
    decisions.next(answer('c2', true)); // the run goes on: what was handed out before must not change
    const [waiting] = only(seen, 'tool_approval');
    expect(Object.getOwnPropertyDescriptor(waiting!, 'messages')?.get).toBeDefined();
    expect(waiting!.messages.slice(300)).toEqual([
      { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [{ id: 'c1', name: 'lookup', input: {} }, { id: 'c2', name: 'transfer', input: {} }] },
      expect.objectContaining({ toolCallId: 'c1' }),
    ]);
    expect(waiting!.messages).toHaveLength(302);
    expect({ ...waiting! }.messages).toBe(waiting!.messages); // enumerable, and the same array once made
  });

  it('H8, R16: the tool\'s timeout starts at tool_start, never while it waits for a decision', () => {
    testScheduler().run((helpers) => {
      const { cold, hot } = helpers;
      const events = { s: start, a: call('approve_me'), u: end('toolUse'), t: text('ok'), e: end('stop') };
      const decisions = hot<ApprovalAnswer>('-----------d', { d: answer('approve_me', true) });
      const run = runEventedToolLoop({
        provider: marbleProvider(cold('-s-a----u|', events), cold('-----s-t-e|', events)),
        registry: marbleTools({ approve_me: cold('--(x|)', { x: 'ran' }) }),
        messages: ask(),
        toolTimeoutMs: 3,
        approvals: { needsApproval: () => true, decisions },
      });
      const timed = loopLegend(events, {
        1: 'turn_start 1',
        W: 'tool_approval approve_me',
        α: 'tool_start approve_me',
        A: 'tool_result approve_me: ran',
        E: 'turn_end 1 (toolUse): user, assistant[approve_me], toolResult approve_me',
        2: 'turn_start 2',
        F: 'turn_end 2 (stop): user, assistant[approve_me], toolResult approve_me, assistant "ok"',
        L: 'loop_end stop',
      });
      expectLoop(helpers, run).toBe('1s-(aW)-u--α-(AE2)s-t-e(FL|)', timed);
    });
  });
});

describe('cancellation while an approval waits (H8, H5, R11)', () => {
  it('H8: unsubscribing while a call waits tears the decisions subscription down', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const events = { s: start, a: call('approve_me'), b: call('other') };
      const decisions = hot<ApprovalAnswer>('-');
      const run = runEventedToolLoop({
        provider: marbleProvider(cold('-s-a-----b', events)),
        registry: marbleTools({ approve_me: 'ran', other: 'done' }),
        messages: ask(),
        approvals: { needsApproval: names('approve_me'), decisions },
      });
      expectObservable(run.pipe(described), '^-----------!').toBe('01-(23)--(456)', {
        0: 'turn_start 1',
        1: 'message_start',
        2: 'tool_call approve_me',
        3: 'tool_approval approve_me',
        4: 'tool_call other',
        5: 'tool_start other',
        6: 'tool_result other: done',
      });
      expectSubscriptions(decisions.subscriptions).toBe('---^--------!');
    });
  });

  it('H8, R11: options.signal while a call waits: `error: aborted`, the decisions torn down, the history valid', () => {
    testScheduler().run((helpers) => {
      const { cold, hot, expectSubscriptions } = helpers;
      const events = { s: start, a: call('approve_me'), u: end('toolUse') };
      const decisions = cold<ApprovalAnswer>('----------(d|)', { d: answer('approve_me', true) });
      const controller = new AbortController();
      hot('----------x').subscribe(() => controller.abort());
      const run = runEventedToolLoop({
        provider: marbleProvider(cold('-s-a----u|', events)),
        registry: marbleTools({ approve_me: 'ran' }),
        messages: ask(),
        signal: controller.signal,
        approvals: { needsApproval: () => true, decisions },
      });
      const legend = loopLegend(events, {
        1: 'turn_start 1',
        W: 'tool_approval approve_me',
        A: 'tool_result approve_me: error: aborted (isError)',
        E: 'turn_end 1 (aborted: aborted): user, assistant[approve_me], toolResult approve_me',
        L: 'loop_end aborted',
      });
      expectLoop(helpers, run).toBe('1s-(aW)-u-(AEL|)', legend);
      expectSubscriptions(decisions.subscriptions).toBe('---^------!');
    });
  });

  it('H8: decisions that complete without an answer for the call leave it waiting, until the signal aborts it', () => {
    const { ran, registry } = bank();
    const controller = new AbortController();
    const seen: LoopEvent[] = [];
    runEventedToolLoop({
      provider: scriptedProvider([toolTurn(call('transfer', {}, 'c1'))]),
      registry,
      messages: ask(),
      signal: controller.signal,
      approvals: { needsApproval: () => true, decisions: of(answer('c2', true)) },
    }).subscribe((event) => seen.push(event));
    expect(types(seen)).toEqual(['turn_start', 'message_start', 'tool_call', 'tool_approval', 'message_end']);
    controller.abort();
    expect(ran).toEqual([]);
    expect(results(seen)).toEqual([expect.objectContaining({ content: 'error: aborted', isError: true })]);
    expect(loopEndOf(seen).reason).toBe('aborted');
  });
});

describe('the two-request model (H8, R22)', () => {
  /** Run 1: the call waits; the server saves `tool_approval.messages` and stops. */
  function firstRequest(registry: ToolRegistry): readonly AgentMessage[] {
    const decisions = new Subject<ApprovalAnswer>();
    let saved: readonly AgentMessage[] | undefined;
    const subscription = runEventedToolLoop({
      provider: scriptedProvider([toolTurn(text('sending'), call('transfer', { n: '7' }, 'c1'))]),
      registry,
      messages: ask('send 7'),
      approvals: { needsApproval: names('transfer'), decisions },
    }).subscribe((event) => {
      if (event.type === 'tool_approval') saved = event.messages;
    });
    subscription.unsubscribe(); // the server stops: the request is over
    expect(decisions.observed).toBe(false);
    return saved!;
  }

  /** Run 2: the saved history and the decision; turn 0 runs (or denies) the call, with no tool_approval. */
  function secondRequest(registry: ToolRegistry, history: readonly AgentMessage[], decision: boolean): LoopEvent[] {
    return runSync({
      turns: [answerTurn('done')],
      registry,
      messages: history,
      approvals: { needsApproval: names('transfer'), decisions: of({ toolCallId: 'c1', decision }) },
    });
  }

  it('H8, R22: run 1 emits tool_approval and its history is saved; run 2, given it and `true`, runs the call in turn 0 without tool_approval', () => {
    const { ran, registry } = bank();
    const saved = firstRequest(registry);
    expect(ran).toEqual([]);
    const events = secondRequest(registry, saved, true);
    expect(types(events)).not.toContain('tool_approval');
    expect(only(events, 'turn_start').map((event) => event.turn)).toEqual([0, 1]);
    expect(ran).toEqual([{ id: 'c1', name: 'transfer', input: { n: '7' } }]);
    const { messages } = loopEndOf(events);
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
    expect(messages[2]).toMatchObject({ toolCallId: 'c1', content: 'transfer {"n":"7"}', isError: false });
  });

  it('H8, R22: with `false`, turn 0 answers the call `denied: not approved` and the handler never runs', () => {
    const { ran, registry } = bank();
    const events = secondRequest(registry, firstRequest(registry), false);
    expect(types(events)).not.toContain('tool_approval');
    expect(ran).toEqual([]);
    expect(loopEndOf(events).messages[2]).toMatchObject({ toolCallId: 'c1', content: 'denied: not approved', isError: true });
  });

  it('H8, R34: the saved history put through structuredClone resumes the same', () => {
    const { ran, registry } = bank();
    const saved = firstRequest(registry);
    const direct = loopEndOf(secondRequest(registry, saved, true)).messages;
    const cloned = loopEndOf(secondRequest(registry, structuredClone(saved), true)).messages;
    expect(cloned).toEqual(direct);
    expect(ran).toHaveLength(2);
  });
});

describe('the approvals option (H8, R20)', () => {
  const options = { provider: scriptedProvider([answerTurn('hi')]), registry: new ToolRegistry(), messages: ask() };

  it('H8, R20: approvals must be an object with a function needsApproval and an Observable decisions: a TypeError naming it, at call time', () => {
    expect(() => runEventedToolLoop({ ...options, approvals: 'yes' as never })).toThrow(
      new TypeError('runEventedToolLoop: approvals must be an object { needsApproval, decisions } (got "yes", a string)'),
    );
    expect(() => runEventedToolLoop({ ...options, approvals: { needsApproval: true, decisions: NEVER } as never })).toThrow(
      new TypeError('runEventedToolLoop: approvals.needsApproval must be a function (got true, a boolean)'),
    );
    expect(() => runEventedToolLoop({ ...options, approvals: { needsApproval: () => true, decisions: [answer('c1', true)] } as never })).toThrow(
      /^runEventedToolLoop: approvals\.decisions must be an Observable \(got /,
    );
    expect(() => conversation({ ...options, approvals: {} as never })).toThrow(new TypeError('conversation: approvals.needsApproval must be a function (got undefined)'));
  });

  it('H8, C1: conversation() passes approvals to each loop', () => {
    const { ran, registry } = bank();
    const events = collectSync(
      of('send 1', 'send 2').pipe(
        conversation({
          provider: scriptedProvider([toolTurn(call('transfer', { n: '1' }, 'c1')), answerTurn('sent'), toolTurn(call('transfer', { n: '2' }, 'c2')), answerTurn('not sent')]),
          registry,
          approvals: { needsApproval: names('transfer'), decisions: of(answer('c1', true), answer('c2', false)) },
        }),
      ),
    ).values;
    expect(ran).toEqual([{ id: 'c1', name: 'transfer', input: { n: '1' } }]);
    expect(only(events, 'tool_result').map((event) => event.message.content)).toEqual(['transfer {"n":"1"}', 'denied: not approved']);
  });
});
