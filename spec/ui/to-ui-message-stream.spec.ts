/** U2: `toUiMessageStream` — a loop's events as the AI SDK's UI message stream, checked by `ai`'s own schema and reader. */
import { concat, EMPTY, lastValueFrom, map, Observable, of, tap, timer, toArray } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { UIMessageChunk } from 'ai';
import { agentTool, runEventedToolLoop, scriptedProvider, ToolRegistry, toolProgress } from '../../src/index.js';
import type { AgentMessage, ApprovalAnswer, ConversationEvent, LoopEvent, ProviderEvent } from '../../src/index.js';
import { call, end, marbleProvider, marbleTools, start, text } from '../../src/testing/index.js';
import { fromUiMessages, toUiMessageStream } from '../../src/ui/index.js';
import { invalidChunks, rebuild, stepsOfHistory, stepsOfMessage } from './support/ui-stream.js';

const testScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const ask: AgentMessage[] = [{ role: 'user', content: 'go' }];

/** A chunk as a short line: its type, then what identifies it and what it carries. */
function line(chunk: UIMessageChunk): string {
  const c = chunk as Record<string, unknown>;
  const said = [c['id'], c['toolCallId'], c['delta'], c['inputTextDelta'], c['errorText'], c['finishReason'], c['reason']].filter((v) => v !== undefined).map(String);
  if (c['output'] !== undefined) said.push(`=> ${String(c['output'])}${c['preliminary'] === true ? ' (preliminary)' : ''}`);
  if (c['messageMetadata'] !== undefined) said.push(JSON.stringify(c['messageMetadata']));
  return [chunk.type, ...said].join(' ');
}

/** The chunks of a loop on `events` (a scripted provider's turns) and its tools. */
async function chunksOf(options: Parameters<typeof runEventedToolLoop>[0]): Promise<{ chunks: UIMessageChunk[]; events: LoopEvent[] }> {
  const events: LoopEvent[] = [];
  const chunks = await lastValueFrom(
    new Observable<LoopEvent>((subscriber) => runEventedToolLoop(options).subscribe({ next: (e) => (events.push(e), subscriber.next(e)), error: (e) => subscriber.error(e), complete: () => subscriber.complete() })).pipe(toUiMessageStream(), toArray()),
  );
  return { chunks, events };
}

/** U2's two checks on a run: every chunk valid, and the rebuilt message's steps are the history's turns. */
async function expectFaithful(chunks: UIMessageChunk[], history: readonly AgentMessage[], from: number): Promise<void> {
  expect(await invalidChunks(chunks)).toEqual([]);
  const message = await rebuild(chunks);
  expect(stepsOfMessage(message)).toEqual(stepsOfHistory(history, from));
  return undefined;
}

describe('toUiMessageStream (U2)', () => {
  it('U2: a turn a step — text, a call, its progress as a preliminary output and its result, the next turn, finish with usage', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const diagram = {
        turn1:  '-s----h----a----u|',
        a:      '           --p------(R|)',
        turn2:  '                    -s----t----e|',
        chunks: '(SP)--(Th)-A-p--D---(OFP)-(Ut)-E(Ff|)',
      };
      const provided = { s: start, h: text('Hi'), a: call('a'), u: end('toolUse', { usage: { inputTokens: 5, outputTokens: 2 } }), t: text('Sunny.'), e: end('stop', { usage: { inputTokens: 9, outputTokens: 3 } }) };
      const chunks = runEventedToolLoop({
        provider: marbleProvider(cold(diagram.turn1, provided), cold(diagram.turn2, provided)),
        registry: marbleTools({ a: cold('--p------(R|)', { p: toolProgress('50%'), R: 'sunny' }) }),
        messages: ask,
      }).pipe(toUiMessageStream({ messageId: () => 'm1' }), map(line));
      expectObservable(chunks).toBe(diagram.chunks, {
        S: 'start',
        P: 'start-step',
        T: 'text-start text-1',
        h: 'text-delta text-1 Hi',
        A: 'tool-input-available a',
        p: 'tool-output-available a => 50% (preliminary)',
        D: 'text-end text-1',
        O: 'tool-output-available a => sunny',
        F: 'finish-step',
        U: 'text-start text-2',
        t: 'text-delta text-2 Sunny.',
        E: 'text-end text-2',
        f: 'finish stop {"usage":{"inputTokens":14,"outputTokens":5}}',
      });
    });
  });

  it('U2, H8: a call that waits for approval is a tool-approval-request; the message ends there and the loop is left; the next request\'s decision runs it in the same step', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const provided = { s: start, a: call('guarded', { door: 'front' }), u: end('toolUse'), t: text('Opened.'), e: end('stop') };
      const guarded = cold('--(R|)', { R: 'opened' });
      const decisions = cold<ApprovalAnswer>('-');
      const first = runEventedToolLoop({
        provider: marbleProvider(cold('-s----a----u|', provided)),
        registry: marbleTools({ guarded }),
        messages: ask,
        approvals: { needsApproval: (c) => c.name === 'guarded', decisions },
      }).pipe(toUiMessageStream(), map(line));
      expectObservable(first).toBe('(SP)--(AW)-(Ff|)', {
        S: 'start',
        P: 'start-step',
        A: 'tool-input-available guarded',
        W: 'tool-approval-request guarded',
        F: 'finish-step',
        f: 'finish tool-calls {"usage":{"inputTokens":0,"outputTokens":0}}',
      });
      // the call waited from its tool_approval until the message ended: then the loop was left, and its wait with it
      expectSubscriptions(decisions.subscriptions).toBe('------^----!');
      // the next request: the saved history and the person's answer; turn 0 runs the call, its output joins the step that asked
      const saved: AgentMessage[] = [...ask, { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [{ id: 'guarded', name: 'guarded', input: { door: 'front' } }] }];
      const second = runEventedToolLoop({
        provider: marbleProvider(cold('-s----t----e|', provided)),
        registry: marbleTools({ guarded: 'opened' }),
        messages: saved,
        approvals: { needsApproval: (c) => c.name === 'guarded', decisions: of<ApprovalAnswer>({ toolCallId: 'guarded', decision: true }) },
      }).pipe(toUiMessageStream(), map(line));
      expectObservable(second).toBe('(SOP)-(Tt)-D(Ff|)', {
        S: 'start',
        O: 'tool-output-available guarded => opened',
        P: 'start-step',
        T: 'text-start text-1',
        t: 'text-delta text-1 Opened.',
        D: 'text-end text-1',
        F: 'finish-step',
        f: 'finish stop {"usage":{"inputTokens":0,"outputTokens":0}}',
      });
    });
  });

  it('U2, H8: a synchronous loop that waits for approval is closed at once when its message ends (nothing runs after)', () => {
    const seen: string[] = [];
    const provider = scriptedProvider([[start, call('guarded', {}, 'g1'), call('later', {}, 'l1'), end('toolUse')]]);
    const registry = new ToolRegistry()
      .register({ name: 'guarded', description: 'g', input: {}, handler: () => 'opened' })
      .register({ name: 'later', description: 'l', input: {}, handler: () => (seen.push('later ran'), 'done') });
    const chunks: string[] = [];
    // an abort at the reply's end would make the loop go on (results, turn_end, loop_end) if it were still subscribed
    const controller = new AbortController();
    runEventedToolLoop({ provider, registry, messages: ask, signal: controller.signal, approvals: { needsApproval: (c) => c.name === 'guarded', decisions: EMPTY } })
      .pipe(
        tap({ next: (event) => (seen.push(event.type), event.type === 'message_end' && controller.abort()), unsubscribe: () => seen.push('left') }),
        toUiMessageStream(),
        map(line),
      )
      .subscribe((chunk) => chunks.push(chunk));
    expect(chunks.slice(-2)).toEqual(['finish-step', 'finish tool-calls {"usage":{"inputTokens":0,"outputTokens":0}}']);
    expect(seen.slice(seen.indexOf('message_end'))).toEqual(['message_end', 'left']);
  });

  it('U2, H8: a call queued behind the waiting one\'s slot is left to the next request, whose turn 0 runs it with the decided one', async () => {
    const ran: string[] = [];
    const registry = new ToolRegistry()
      .register({ name: 'guarded', description: 'g', input: {}, handler: () => (ran.push('guarded'), 'opened') })
      .register({ name: 'later', description: 'l', input: {}, handler: () => (ran.push('later'), 'done') });
    const provider = () => scriptedProvider([[start, call('guarded', {}, 'g1'), call('later', {}, 'l1'), end('toolUse')], [start, text('Both done.'), end('stop')]]);
    const approvals = (decisions: Observable<ApprovalAnswer>) => ({ needsApproval: (c: { name: string }) => c.name === 'guarded', decisions });
    const first = await lastValueFrom(runEventedToolLoop({ provider: provider(), registry, messages: ask, maxConcurrency: 1, approvals: approvals(EMPTY) }).pipe(toUiMessageStream(), toArray()));
    expect(first.map(line).slice(-4)).toEqual(['tool-approval-request g1', 'tool-input-available l1', 'finish-step', 'finish tool-calls {"usage":{"inputTokens":0,"outputTokens":0}}']);
    expect(ran).toEqual([]);
    // the page approves g1; useChat sends the message back
    const shown = await rebuild(first);
    const answered = { ...shown, parts: shown.parts.map((p) => ((p as { state?: string }).state === 'approval-requested' ? ({ ...p, state: 'approval-responded', approval: { id: 'g1', approved: true } } as typeof p) : p)) };
    const { messages, decisions } = fromUiMessages([{ id: 'u', role: 'user', parts: [{ type: 'text', text: 'go' }] }, answered]);
    const second = await lastValueFrom(runEventedToolLoop({ provider: scriptedProvider([[start, text('Both done.'), end('stop')]]), registry, messages, maxConcurrency: 1, approvals: approvals(decisions) }).pipe(toUiMessageStream(), toArray()));
    expect(ran).toEqual(['guarded', 'later']);
    const whole = await rebuild(second, answered);
    expect(stepsOfMessage(whole)).toEqual([
      { text: '', reasoning: '', tools: [{ id: 'g1', name: 'guarded', input: {}, result: { content: 'opened', isError: false } }, { id: 'l1', name: 'later', input: {}, result: { content: 'done', isError: false } }] },
      { text: 'Both done.', reasoning: '', tools: [] },
    ]);
  });

  it('U2: an aborted loop ends its message with its usage as metadata, then abort', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const controller = new AbortController();
      timer(9).subscribe(() => controller.abort());
      const chunks = runEventedToolLoop({
        provider: marbleProvider(cold('-s---h--------u|', { s: start, h: text('Hi'), u: end('stop') })),
        registry: marbleTools({}),
        messages: ask,
        signal: controller.signal,
      }).pipe(toUiMessageStream(), map(line));
      expectObservable(chunks).toBe('(SP)-(Th)(DFMX|)', {
        S: 'start',
        P: 'start-step',
        T: 'text-start text-1',
        h: 'text-delta text-1 Hi',
        D: 'text-end text-1',
        F: 'finish-step',
        M: 'message-metadata {"usage":{"inputTokens":0,"outputTokens":0}}',
        X: 'abort aborted',
      });
    });
  });

  it('U2: streamed call arguments are tool-input-start and -delta, then -available; reasoning is its own part', async () => {
    const turns: ProviderEvent[][] = [
      [
        start,
        { type: 'reasoning_delta', text: 'They want ' },
        { type: 'reasoning_delta', text: 'the weather.' },
        text('Let me look.'),
        { type: 'tool_call_delta', index: 0, id: 'w1', name: 'weather', argumentsDelta: '{"city":' },
        { type: 'tool_call_delta', index: 0, argumentsDelta: '"Paris"}' },
        call('weather', { city: 'Paris' }, 'w1'),
        { type: 'message_end', stopReason: 'toolUse', reasoning: [{ type: 'thinking', thinking: 'They want the weather.' }] },
      ],
      [start, text('Sunny.'), end('stop')],
    ];
    const registry = new ToolRegistry().register({ name: 'weather', description: 'weather', input: { city: 'a city' }, handler: ({ city }) => `sunny in ${city}` });
    const { chunks, events } = await chunksOf({ provider: scriptedProvider(turns), registry, messages: ask });
    // the scripted tool answers at once, before the reply's end closes the text
    expect(chunks.map(line).slice(0, 13)).toEqual([
      'start',
      'start-step',
      'reasoning-start reasoning-1',
      'reasoning-delta reasoning-1 They want ',
      'reasoning-delta reasoning-1 the weather.',
      'text-start text-2',
      'text-delta text-2 Let me look.',
      'tool-input-start w1',
      'tool-input-delta w1 {"city":',
      'tool-input-delta w1 "Paris"}',
      'tool-input-available w1',
      'tool-output-available w1 => sunny in Paris',
      'text-end text-2',
    ]);
    const last = events[events.length - 1] as LoopEvent & { type: 'loop_end' };
    await expectFaithful(chunks, last.messages, 1);
  });

  it('U2: parallel calls — one fails, one is unknown, one is an agent tool whose inner events are preliminary outputs — rebuild the history', async () => {
    const inner = scriptedProvider([[start, text('found it'), end('stop')]]);
    const researcher = agentTool({ name: 'research', description: 'researches', input: { topic: 'what' }, agent: ({ topic }) => runEventedToolLoop({ provider: inner, registry: new ToolRegistry(), messages: [{ role: 'user', content: String(topic) }] }) });
    const registry = new ToolRegistry()
      .register(researcher)
      .register({ name: 'boom', description: 'fails', input: {}, handler: () => Promise.reject(new Error('kaput')) });
    const provider = scriptedProvider([
      [start, text('Three at once.'), call('research', { topic: 'rx' }, 'r1'), call('boom', {}, 'b1'), call('nope', {}, 'n1'), end('toolUse')],
      [start, text('Done.'), end('stop', { usage: { inputTokens: 1, outputTokens: 1 } })],
    ]);
    const { chunks, events } = await chunksOf({ provider, registry, messages: ask });
    expect(chunks.map(line)).toEqual(expect.arrayContaining(['tool-output-error b1 error: kaput', 'tool-output-error n1 unknown tool: nope']));
    expect(chunks.filter((c) => c.type === 'tool-output-available' && c.preliminary === true).length).toBeGreaterThan(0);
    const last = events[events.length - 1] as LoopEvent & { type: 'loop_end' };
    await expectFaithful(chunks, last.messages, 1);
    // and back: the rebuilt message, as useChat sends it, is the loop's history
    const message = await rebuild(chunks);
    const { messages } = fromUiMessages([{ id: 'u', role: 'user', parts: [{ type: 'text', text: 'go' }] }, message]);
    // what the UI does not carry: a result's details (for the application only), the reply's stop reason as the API said it
    const carried = last.messages.map((m) => {
      if (m.role === 'assistant') return { ...m, stopReason: m.toolCalls === undefined ? 'stop' : 'toolUse' };
      if (m.role !== 'toolResult') return m;
      const { details: _details, ...rest } = m;
      return rest;
    });
    expect(messages).toEqual(carried);
  });

  it('U2: a conversation\'s loops are messages of their own — `start` again, with the next messageId; prompts send nothing', async () => {
    const ids = ['m1', 'm2'];
    const loop = (answer: string, history: AgentMessage[]) => runEventedToolLoop({ provider: scriptedProvider([[start, text(answer), end('stop')]]), registry: new ToolRegistry(), messages: history });
    const second: AgentMessage[] = [...ask, { role: 'assistant', content: 'one', stopReason: 'stop' }, { role: 'user', content: 'again' }];
    const events$ = concat(
      of<ConversationEvent>({ type: 'user_message', message: { role: 'user', content: 'go' }, messages: ask }),
      loop('one', ask),
      of<ConversationEvent>({ type: 'user_message', message: { role: 'user', content: 'again' }, messages: second }),
      loop('two', second),
    );
    const chunks = await lastValueFrom(events$.pipe(toUiMessageStream({ messageId: () => ids.shift()! }), toArray()));
    expect(chunks.filter((c) => c.type === 'start')).toEqual([{ type: 'start', messageId: 'm1' }, { type: 'start', messageId: 'm2' }]);
    expect(await invalidChunks(chunks)).toEqual([]);
    // readUIMessageStream starts a new message when the id changes
    const built = await rebuild(chunks);
    expect({ id: built.id, steps: stepsOfMessage(built) }).toEqual({ id: 'm2', steps: [{ text: 'two', reasoning: '', tools: [] }] });
  });

  it("U2, H8: a conversation's second loop that waits for approval finishes with its own usage, not the first loop's too", async () => {
    const second: AgentMessage[] = [...ask, { role: 'assistant', content: 'one', stopReason: 'stop' }, { role: 'user', content: 'again' }];
    const registry = new ToolRegistry().register({ name: 'guarded', description: 'g', input: {}, handler: () => 'opened' });
    const events$ = concat(
      runEventedToolLoop({ provider: scriptedProvider([[start, text('one'), end('stop', { usage: { inputTokens: 100, outputTokens: 10 } })]]), registry, messages: ask }),
      of<ConversationEvent>({ type: 'user_message', message: { role: 'user', content: 'again' }, messages: second }),
      runEventedToolLoop({
        provider: scriptedProvider([[start, call('guarded', {}, 'g1'), end('toolUse', { usage: { inputTokens: 5, outputTokens: 2 } })]]),
        registry,
        messages: second,
        approvals: { needsApproval: () => true, decisions: EMPTY },
      }),
    );
    const chunks = await lastValueFrom(events$.pipe(toUiMessageStream(), toArray()));
    expect(chunks.filter((c) => c.type === 'finish').map(line)).toEqual([
      'finish stop {"usage":{"inputTokens":100,"outputTokens":10}}',
      'finish tool-calls {"usage":{"inputTokens":5,"outputTokens":2}}',
    ]);
  });

  it('U2: a provider error is an error chunk, then finish with reason error; the client sees the API\'s message', async () => {
    const provider = scriptedProvider([[start, text('Hal'), end('error', { errorMessage: '429 slow down' })]]);
    const { chunks, events } = await chunksOf({ provider, registry: new ToolRegistry(), messages: ask });
    expect(chunks.map(line).slice(-3)).toEqual(['finish-step', 'error 429 slow down', 'finish error {"usage":{"inputTokens":0,"outputTokens":0}}']);
    const last = events[events.length - 1] as LoopEvent & { type: 'loop_end' };
    await expectFaithful(chunks, last.messages, 1);
  });

  it("U2: the loop's end as the AI SDK's finish reason — length, and other for maxTurns, terminated and budget", async () => {
    const usage = { inputTokens: 1, outputTokens: 1 };
    const finishOf = async (reason: Extract<LoopEvent, { type: 'loop_end' }>['reason']): Promise<string> => {
      const events: LoopEvent[] = [
        { type: 'turn_start', turn: 1 },
        { type: 'loop_end', reason, assistant: { role: 'assistant', content: '', stopReason: 'stop' }, messages: ask, usage },
      ];
      const chunks = await lastValueFrom(of(...events).pipe(toUiMessageStream(), toArray()));
      return line(chunks.at(-1)!);
    };
    const reasons = ['length', 'maxTurns', 'terminated', 'budget'] as const;
    expect(await Promise.all(reasons.map(finishOf))).toEqual([
      'finish length {"usage":{"inputTokens":1,"outputTokens":1}}',
      'finish other {"usage":{"inputTokens":1,"outputTokens":1}}',
      'finish other {"usage":{"inputTokens":1,"outputTokens":1}}',
      'finish other {"usage":{"inputTokens":1,"outputTokens":1}}',
    ]);
  });

  it('U2: prompt_dropped sends nothing (the client has its prompt)', async () => {
    const dropped: ConversationEvent = { type: 'prompt_dropped', message: { role: 'user', content: 'later' } };
    expect(await lastValueFrom(of(dropped).pipe(toUiMessageStream(), toArray()))).toEqual([]);
    const loop = () => runEventedToolLoop({ provider: scriptedProvider([[start, text('one'), end('stop')]]), registry: new ToolRegistry(), messages: ask });
    const alone = await lastValueFrom(loop().pipe(toUiMessageStream({ messageId: () => 'm1' }), toArray()));
    const withDropped = await lastValueFrom(concat(of(dropped), loop(), of(dropped)).pipe(toUiMessageStream({ messageId: () => 'm1' }), toArray()));
    expect(withDropped).toEqual(alone);
  });

  it('U2: an error of the source is an error chunk, and the stream completes', async () => {
    const failing = new Observable<LoopEvent>((subscriber) => subscriber.error(new Error('bad history')));
    expect((await lastValueFrom(failing.pipe(toUiMessageStream(), toArray()))).map(line)).toEqual(['error bad history']);
  });

  it('U2: a messageId() that throws errors the stream with its error and unsubscribes the loop', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const events$ = cold<ConversationEvent>('-a-b', {
        a: { type: 'turn_start', turn: 1 } as ConversationEvent,
        b: { type: 'turn_start', turn: 2 } as ConversationEvent,
      });
      const failing = () => {
        throw new Error('no id');
      };
      expectObservable(events$.pipe(toUiMessageStream({ messageId: failing }))).toBe('-#', undefined, new Error('no id'));
      expectSubscriptions(events$.subscriptions).toBe('^!');
    });
  });

  it('U2: a bad option is refused at call time, naming it and showing it (R31: an array is no options object)', () => {
    expect(() => toUiMessageStream({ messageId: 'm1' as never })).toThrow('toUiMessageStream: options.messageId must be a function');
    expect(() => toUiMessageStream({ messageId: 'm1' as never })).toThrow('toUiMessageStream: options.messageId must be a function that returns an id (got "m1", a string)');
    expect(() => toUiMessageStream([] as never)).toThrow('toUiMessageStream: options must be an object (got [], an array)');
    expect(() => toUiMessageStream(null as never)).toThrow('toUiMessageStream: options must be an object (got null)');
  });
});
