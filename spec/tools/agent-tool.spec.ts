/** A1–A3: agentTool runs a whole inner loop as a tool's run, forwards its events, and ends with its loop_end. */
import { NEVER, Observable, of, throwError, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import {
  AgentMessage,
  LoopEvent,
  LoopEventOf,
  ToolContext,
  ToolRegistry,
  agentTool,
  initialViewModel,
  reduceViewModel,
  runEventedToolLoop,
} from '../../src/index.js';
import { call, describeEvent, end, marbleProvider, marbleTools, start, text } from '../../src/testing/index.js';
import { only } from '../support/events.js';

const ask = (content: string): AgentMessage[] => [{ role: 'user', content }];
const scheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const usage = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens });

interface Seen {
  frame: number;
  event: LoopEvent;
}

/** Runs `body` in virtual time; it returns the outer loop, whose events are collected with their frames. */
function run(body: (helpers: Parameters<Parameters<TestScheduler['run']>[0]>[0]) => Observable<LoopEvent>, until = Infinity) {
  const seen: Seen[] = [];
  const ts = scheduler();
  let completed = false;
  ts.run((helpers) => {
    const subscription = body(helpers).subscribe({ next: (event) => seen.push({ frame: ts.now(), event }), complete: () => (completed = true) });
    if (until !== Infinity) ts.schedule(() => subscription.unsubscribe(), until);
  });
  return { seen, completed, lines: seen.map(({ frame, event }) => `${frame} ${describeEvent(event)}`) };
}

describe('agentTool (A1–A3)', () => {
  it('A1: the inner loop is subscribed at tool_start and each inner event comes up at once as a tool_update with event and content', () => {
    let innerEvents: Seen[] = [];
    let innerSubscribedAt = -1;
    let outer: Seen[] = [];
    const ts = scheduler();
    ts.run(({ cold }) => {
      const inner = marbleProvider(cold('-s-t-t-e|', { s: start, t: text('ab'), e: end('stop', { usage: usage(3, 4) }) }));
      const researcher = agentTool({
        name: 'researcher',
        description: 'finds things out',
        input: { question: 'what to find out' },
        agent: (input, context) =>
          new Observable<LoopEvent>((subscriber) => {
            innerSubscribedAt = ts.now();
            return runEventedToolLoop({ provider: inner, registry: new ToolRegistry(), messages: ask(String(input['question'])), signal: context.signal }).subscribe({
              next: (event) => {
                innerEvents.push({ frame: ts.now(), event });
                subscriber.next(event);
              },
              complete: () => subscriber.complete(),
            });
          }),
      });
      const provider = marbleProvider(cold('-s-a--------u|', { s: start, a: call('researcher', { question: 'why?' }), u: end('toolUse') }), cold('-s-e|', { s: start, e: end('stop') }));
      runEventedToolLoop({ provider, registry: new ToolRegistry().register(researcher), messages: ask('plan') }).subscribe((event) => outer.push({ frame: ts.now(), event }));
    });
    const start$ = outer.find(({ event }) => event.type === 'tool_start')!;
    expect(innerSubscribedAt).toBe(start$.frame);
    const updates = outer.filter((s): s is { frame: number; event: LoopEventOf<'tool_update'> } => s.event.type === 'tool_update');
    // every inner event, loop_end included, in order and in its own frame
    expect(updates.map(({ event }) => event.event)).toEqual(innerEvents.map(({ event }) => event));
    expect(updates.map(({ frame }) => frame)).toEqual(innerEvents.map(({ frame }) => frame));
    expect(updates.map(({ event }) => event.content)).toEqual([
      'turn_start 1',
      'message_start',
      'ab',
      'abab',
      'message_end stop',
      'turn_end 1 (stop): user, assistant "abab"',
      'loop_end stop',
    ]);
    expect(updates.every(({ event }) => event.toolName === 'researcher' && event.toolCallId === 'researcher')).toBe(true);
    expect(describeEvent(updates[2]!.event)).toBe('tool_update researcher: text_delta ab');
    expect(innerEvents[0]!.event).toEqual({ type: 'turn_start', turn: 1 });
    expect((innerEvents.map(({ event }) => event).find((e) => e.type === 'loop_end') as LoopEventOf<'loop_end'>).messages[0]).toEqual({ role: 'user', content: 'why?' });
  });

  it('A1: the text so far is the current inner turn\'s: it starts again at each inner turn_start', () => {
    const { seen } = run(({ cold }) => {
      const inner = marbleProvider(cold('-s-t-a-u|', { s: start, t: text('one'), a: call('look'), u: end('toolUse') }), cold('-s-t-e|', { s: start, t: text('two'), e: end('stop') }));
      const researcher = agentTool({ name: 'researcher', description: 'r', input: {}, agent: () => runEventedToolLoop({ provider: inner, registry: marbleTools({ look: 'seen' }), messages: ask('q') }) });
      return runEventedToolLoop({ provider: marbleProvider(cold('(sau|)', { s: start, a: call('researcher'), u: end('toolUse') }), cold('(se|)', { s: start, e: end('stop') })), registry: new ToolRegistry().register(researcher), messages: ask('go') });
    });
    const contents = only(seen.map(({ event }) => event), 'tool_update').filter((u) => u.event?.type === 'text_delta').map((u) => u.content);
    expect(contents).toEqual(['one', 'two']);
  });

  it('A2: the inner loop_end is the result: its assistant content, details { reason, messages, usage } as JSON; the outer usage counts its own calls only, the view model adds the inner loop usage (C4)', () => {
    const { seen } = run(({ cold }) => {
      const inner = marbleProvider(cold('-s-t-e|', { s: start, t: text('42'), e: end('stop', { usage: usage(10, 5) }) }));
      const researcher = agentTool({ name: 'researcher', description: 'r', input: {}, agent: () => runEventedToolLoop({ provider: inner, registry: new ToolRegistry(), messages: ask('q') }) });
      const provider = marbleProvider(cold('-s-a-u|', { s: start, a: call('researcher'), u: end('toolUse', { usage: usage(1, 1) }) }), cold('-s-e|', { s: start, e: end('stop', { usage: usage(2, 2) }) }));
      return runEventedToolLoop({ provider, registry: new ToolRegistry().register(researcher), messages: ask('go') });
    });
    const events = seen.map(({ event }) => event);
    const [result] = only(events, 'tool_result');
    expect(result!.message).toEqual({
      role: 'toolResult',
      toolCallId: 'researcher',
      toolName: 'researcher',
      content: '42',
      isError: false,
      details: {
        reason: 'stop',
        messages: [
          { role: 'user', content: 'q' },
          { role: 'assistant', content: '42', stopReason: 'stop' },
        ],
        usage: usage(10, 5),
      },
    });
    expect(JSON.parse(JSON.stringify(result!.message))).toEqual(result!.message);
    const loopEnd = events[events.length - 1] as LoopEventOf<'loop_end'>;
    expect(loopEnd.usage).toEqual(usage(3, 3));
    // C4: the view model's usage adds the inner loop's
    expect(events.reduce(reduceViewModel, initialViewModel).usage).toEqual(usage(13, 8));
  });

  it.each([
    ['error', 'error', 'error: sub-agent researcher ended with error: overloaded'],
    ['maxTurns', 'maxTurns', 'error: sub-agent researcher ended with maxTurns: looking'],
    ['length', 'length', 'error: sub-agent researcher ended with length: cut'],
  ] as const)('A2: an inner loop that ends with %s is an error result that says so', (_reason, how, content) => {
    const { seen } = run(({ cold }) => {
      const turn =
        how === 'maxTurns'
          ? cold('-s-t-a-u|', { s: start, t: text('looking'), a: call('look'), u: end('toolUse') })
          : how === 'length'
            ? cold('-s-t-e|', { s: start, t: text('cut'), e: end('length') })
            : cold('-s-e|', { s: start, e: end('error', { errorMessage: 'overloaded' }) });
      const researcher = agentTool({
        name: 'researcher',
        description: 'r',
        input: {},
        agent: () => runEventedToolLoop({ provider: marbleProvider(turn), registry: marbleTools({ look: 'x' }), messages: ask('q'), maxTurns: 1 }),
      });
      const provider = marbleProvider(cold('-s-a-u|', { s: start, a: call('researcher'), u: end('toolUse') }), cold('-s-e|', { s: start, e: end('stop') }));
      return runEventedToolLoop({ provider, registry: new ToolRegistry().register(researcher), messages: ask('go') });
    });
    const [result] = only(seen.map(({ event }) => event), 'tool_result');
    expect(result!.message).toMatchObject({ content, isError: true, details: { reason: _reason } });
  });

  it('A2: an inner loop ended by its tools (terminated) is a result, not an error', () => {
    const { seen } = run(({ cold }) => {
      const researcher = agentTool({
        name: 'researcher',
        description: 'r',
        input: {},
        agent: () =>
          runEventedToolLoop({ provider: marbleProvider(cold('-s-t-a-u|', { s: start, t: text('done'), a: call('stop'), u: end('toolUse') })), registry: marbleTools({ stop: { content: 'ok', terminate: true } }), messages: ask('q') }),
      });
      const provider = marbleProvider(cold('-s-a-u|', { s: start, a: call('researcher'), u: end('toolUse') }), cold('-s-e|', { s: start, e: end('stop') }));
      return runEventedToolLoop({ provider, registry: new ToolRegistry().register(researcher), messages: ask('go') });
    });
    expect(only(seen.map(({ event }) => event), 'tool_result')[0]!.message).toMatchObject({ content: 'done', isError: false, details: { reason: 'terminated' } });
  });

  it('A3: unsubscribing the outer loop tears the inner loop down: its provider call and its tool are unsubscribed, its signal aborts', () => {
    let signal: AbortSignal | undefined;
    const ts = scheduler();
    ts.run(({ cold, expectSubscriptions }) => {
      const innerTurn = cold('-s-a---------u|', { s: start, a: call('search'), u: end('toolUse') });
      const search = cold<string>('---------(r|)', { r: 'found' });
      const researcher = agentTool({
        name: 'researcher',
        description: 'r',
        input: {},
        agent: (_input, context: ToolContext) => {
          signal = context.signal;
          return runEventedToolLoop({ provider: marbleProvider(innerTurn), registry: marbleTools({ search }), messages: ask('q'), signal: context.signal });
        },
      });
      const outerTurn = cold('-s-a-u|', { s: start, a: call('researcher'), u: end('toolUse') });
      const subscription = runEventedToolLoop({ provider: marbleProvider(outerTurn), registry: new ToolRegistry().register(researcher), messages: ask('go') }).subscribe();
      ts.schedule(() => subscription.unsubscribe(), 8);
      // the researcher starts at 3; its turn at 3, its search at 3 + 3 = 6; all torn down at 8
      expectSubscriptions(innerTurn.subscriptions).toBe('---^----!');
      expectSubscriptions(search.subscriptions).toBe('------^-!');
    });
    expect(signal?.aborted).toBe(true);
  });

  it.each([
    ['options.signal', 'signal'],
    ['toolTimeoutMs', 'timeout'],
  ] as const)('A3: %s tears the inner loop down, and the call ends with its result', (_label, how) => {
    let innerSubs = '';
    let toolSubs = '';
    const { seen } = run(({ cold }) => {
      const innerTurn = cold('-s-a---------u|', { s: start, a: call('search'), u: end('toolUse') });
      const search = cold<string>('---------(r|)', { r: 'found' });
      const researcher = agentTool({
        name: 'researcher',
        description: 'r',
        input: {},
        agent: (_input, context) => runEventedToolLoop({ provider: marbleProvider(innerTurn), registry: marbleTools({ search }), messages: ask('q'), signal: context.signal }),
      });
      const controller = new AbortController();
      if (how === 'signal') timer(8).subscribe(() => controller.abort());
      const provider = marbleProvider(cold('-s-a-u|', { s: start, a: call('researcher'), u: end('toolUse') }), cold('-s-e|', { s: start, e: end('stop') }));
      const loop = runEventedToolLoop({ provider, registry: new ToolRegistry().register(researcher), messages: ask('go'), ...(how === 'signal' ? { signal: controller.signal } : { toolTimeoutMs: 5 }) });
      return new Observable<LoopEvent>((subscriber) => {
        const s = loop.subscribe(subscriber);
        return () => {
          s.unsubscribe();
          innerSubs = innerTurn.subscriptions.map((l) => `${l.subscribedFrame}-${l.unsubscribedFrame}`).join(',');
          toolSubs = search.subscriptions.map((l) => `${l.subscribedFrame}-${l.unsubscribedFrame}`).join(',');
        };
      });
    });
    const [result] = only(seen.map(({ event }) => event), 'tool_result');
    expect(result!.message.content).toBe(how === 'signal' ? 'error: aborted' : 'error: tool timed out after 5 ms');
    // torn down at the abort (8) or the deadline (3 + 5): no inner loop_end came up
    expect(innerSubs).toBe('3-8');
    expect(toolSubs).toBe('6-8');
    expect(only(seen.map(({ event }) => event), 'tool_update').some((u) => u.event?.type === 'loop_end')).toBe(false);
  });

  it('A3, R35: wired as the README shows (signal: context.signal), a cancel of the outer call reaches the inner loop\'s Promise tool through real signals', () => {
    let searchSignal: AbortSignal | undefined;
    let researcherSignal: AbortSignal | undefined;
    const search = { name: 'search', description: 's', input: {}, handler: (_input: unknown, context: ToolContext) => ((searchSignal = context.signal), new Promise<string>(() => {})) };
    const researcher = agentTool({
      name: 'researcher',
      description: 'r',
      agent: (_input, context) => runEventedToolLoop({ provider: () => of(start, call('search'), end('toolUse')), registry: new ToolRegistry().register(search), messages: ask('q'), signal: (researcherSignal = context.signal) }),
    });
    const seen: LoopEvent[] = [];
    const subscription = runEventedToolLoop({ provider: () => of(start, call('researcher'), end('toolUse')), registry: new ToolRegistry().register(researcher), messages: ask('go') }).subscribe((event) => seen.push(event));
    expect(seen.some((event) => event.type === 'tool_update' && event.event?.type === 'tool_start')).toBe(true); // the search is running
    expect(Object.getPrototypeOf(researcherSignal)).toBe(AbortSignal.prototype);
    expect(searchSignal?.aborted).toBe(false);
    subscription.unsubscribe();
    expect(researcherSignal?.aborted).toBe(true);
    expect(searchSignal?.aborted).toBe(true);
  });

  it('A3: a call the outer hooks deny never subscribes the inner loop', () => {
    const agent = jest.fn(() => NEVER as Observable<LoopEvent>);
    const { seen } = run(({ cold }) => {
      const researcher = agentTool({ name: 'researcher', description: 'r', input: {}, agent });
      const provider = marbleProvider(cold('-s-a-u|', { s: start, a: call('researcher'), u: end('toolUse') }), cold('-s-e|', { s: start, e: end('stop') }));
      return runEventedToolLoop({ provider, registry: new ToolRegistry().register(researcher), messages: ask('go'), beforeToolCall: () => ({ action: 'deny', reason: 'no budget' }) });
    });
    expect(agent).not.toHaveBeenCalled();
    expect(only(seen.map(({ event }) => event), 'tool_result')[0]!.message.content).toBe('denied: no budget');
  });

  it('A4: nesting is unbounded: an agent tool inside an agent tool forwards its inner events, named at every depth', () => {
    const { seen, completed } = run(({ cold }) => {
      const leaf = agentTool({
        name: 'leaf',
        description: 'l',
        input: {},
        agent: () => runEventedToolLoop({ provider: marbleProvider(cold('-s-t-e|', { s: start, t: text('deep'), e: end('stop') })), registry: new ToolRegistry(), messages: ask('q') }),
      });
      const middle = agentTool({
        name: 'middle',
        description: 'm',
        input: {},
        agent: () =>
          runEventedToolLoop({
            provider: marbleProvider(cold('-s-a-u|', { s: start, a: call('leaf'), u: end('toolUse') }), cold('-s-e|', { s: start, e: end('stop') })),
            registry: new ToolRegistry().register(leaf),
            messages: ask('q'),
          }),
      });
      const provider = marbleProvider(cold('-s-a-u|', { s: start, a: call('middle'), u: end('toolUse') }), cold('-s-e|', { s: start, e: end('stop') }));
      return runEventedToolLoop({ provider, registry: new ToolRegistry().register(middle), messages: ask('go') });
    });
    expect(completed).toBe(true);
    const lines = seen.map(({ event }) => describeEvent(event));
    expect(lines).toContain('tool_update middle: tool_update leaf: text_delta deep');
    expect(lines).toContain('tool_update middle: tool_result leaf: deep');
  });

  it('A1, A2: an agent that throws, returns something else, or emits what is no event is an error result (R9); one that ends without loop_end produced no result (R14); an error end without a message says its reason alone', () => {
    const cases: [string, () => Observable<LoopEvent>][] = [
      ['error: nope', () => {
        throw new Error('nope');
      }],
      ['error: sub-agent researcher: agent returned a number, not an Observable of loop events', () => 3 as unknown as Observable<LoopEvent>],
      ['error: tool produced no result', () => of<LoopEvent>({ type: 'turn_start', turn: 1 })],
      ['error: inner broke', () => throwError(() => new Error('inner broke'))],
      ['error: sub-agent researcher emitted null, not a loop event', () => of(null as unknown as LoopEvent)],
      ['error: sub-agent researcher ended with error', () => of<LoopEvent>({ type: 'loop_end', reason: 'error', assistant: { role: 'assistant', content: '', stopReason: 'error' }, messages: [], usage: { inputTokens: 0, outputTokens: 0 } })],
    ];
    for (const [content, agent] of cases) {
      const { seen } = run(({ cold }) => {
        const researcher = agentTool({ name: 'researcher', description: 'r', input: {}, agent });
        const provider = marbleProvider(cold('-s-a-u|', { s: start, a: call('researcher'), u: end('toolUse') }), cold('-s-e|', { s: start, e: end('stop') }));
        return runEventedToolLoop({ provider, registry: new ToolRegistry().register(researcher), messages: ask('go') });
      });
      expect(only(seen.map(({ event }) => event), 'tool_result')[0]!.message).toMatchObject({ content, isError: true });
    }
  });

  it('O2 (revised), A1: with model, every update that forwards an inner event carries details { model } (for traces); without it, no details; a model that is no string is refused', () => {
    const updatesOf = (model?: string) => {
      const { seen } = run(({ cold }) => {
        const inner = marbleProvider(cold('-s-t-e|', { s: start, t: text('UTC'), e: end('stop') }));
        const researcher = agentTool({ name: 'researcher', description: 'r', input: {}, ...(model === undefined ? {} : { model }), agent: () => runEventedToolLoop({ provider: inner, registry: new ToolRegistry(), messages: ask('q') }) });
        return runEventedToolLoop({ provider: marbleProvider(cold('(sau|)', { s: start, a: call('researcher'), u: end('toolUse') }), cold('(se|)', { s: start, e: end('stop') })), registry: new ToolRegistry().register(researcher), messages: ask('go') });
      });
      return only(seen.map(({ event }) => event), 'tool_update');
    };
    const named = updatesOf('claude-haiku-4-5');
    expect(named.map((update) => update.event?.type)).toEqual(['turn_start', 'message_start', 'text_delta', 'message_end', 'turn_end', 'loop_end']);
    expect(named.every((update) => JSON.stringify(update.details) === '{"model":"claude-haiku-4-5"}')).toBe(true);
    const plain = updatesOf();
    expect(plain).toHaveLength(6);
    expect(plain.some((update) => 'details' in update)).toBe(false);
    expect(() => agentTool({ name: 'r', description: 'r', input: {}, model: 4 as never, agent: () => NEVER })).toThrow(new TypeError('agentTool: model must be a string (got 4, a number)'));
  });

  it('A1: agentTool refuses a definition without an agent function, naming it', () => {
    expect(() => agentTool({ name: 'r', description: 'r', input: {}, agent: 'x' as never })).toThrow(new TypeError('agentTool: agent must be a function that returns the inner loop (got "x", a string)'));
    expect(() => agentTool(null as never)).toThrow(TypeError);
  });

  it('A1: the spec is the one given (input, inputSchema or schema), as the registry tells the model (R24); given none, no input', () => {
    const agent = () => NEVER as Observable<LoopEvent>;
    const registry = new ToolRegistry()
      .register(agentTool({ name: 'a', description: 'A', input: { question: 'what' }, agent }))
      .register(agentTool({ name: 'b', description: 'B', inputSchema: { type: 'object', required: ['q'] }, agent }))
      .register(agentTool({ name: 'c', description: 'C', agent }));
    expect(registry.getSpecs()).toEqual([
      { name: 'a', description: 'A', input: { question: 'what' } },
      { name: 'b', description: 'B', inputSchema: { type: 'object', required: ['q'] } },
      { name: 'c', description: 'C', input: {} }, // given none: no input
    ]);
  });
});

describe('agentTool hands up attachments (F5)', () => {
  const png = { type: 'image' as const, mimeType: 'image/png', data: 'iVBORw0KGgo=' };
  const pdf = { type: 'file' as const, mimeType: 'application/pdf', url: 'https://example.com/q3.pdf' };
  const designer = (innerTurns: string, reason: 'stop' | 'error') =>
    agentTool({
      name: 'designer',
      description: 'Draws charts',
      agent: () =>
        runEventedToolLoop({
          provider: marbleProvider(
            of(start, call('draw', {}, 'd1'), call('cite', {}, 'd2'), end('toolUse')),
            of(start, text(innerTurns), reason === 'stop' ? end('stop') : end('error', { errorMessage: 'overloaded' })),
          ),
          registry: marbleTools({ draw: { content: 'drawn', attachments: [png] }, cite: { content: 'cited', attachments: [pdf] } }),
          messages: [{ role: 'user', content: 'draw it', attachments: [{ type: 'image', mimeType: 'image/png', data: 'AAAA' }] }],
        }),
    });

  it("F5: a sub-agent that succeeds hands up its inner tools' attachments, in order, as its result's; its own prompt's stay below", () => {
    const { seen } = run(() =>
      runEventedToolLoop({
        provider: marbleProvider(of(start, call('designer', {}, 'c1'), end('toolUse')), of(start, text('Here it is.'), end('stop'))),
        registry: new ToolRegistry().register(designer('Done.', 'stop')),
        messages: ask('a chart please'),
      }),
    );
    const [result] = only(seen.map((s) => s.event), 'tool_result');
    expect(result!.message).toMatchObject({ content: 'Done.', isError: false, attachments: [png, pdf] });
  });

  it('F5: a sub-agent that fails hands up none: the error result is text', () => {
    const { seen } = run(() =>
      runEventedToolLoop({
        provider: marbleProvider(of(start, call('designer', {}, 'c1'), end('toolUse')), of(start, text('Sorry.'), end('stop'))),
        registry: new ToolRegistry().register(designer('', 'error')),
        messages: ask('a chart please'),
      }),
    );
    const [result] = only(seen.map((s) => s.event), 'tool_result');
    expect(result!.message.content).toBe('error: sub-agent designer ended with error: overloaded');
    expect(result!.message.attachments).toBeUndefined();
  });
});
