/** H1–H5: beforeToolCall and afterToolCall, through the loop as users give them. */
import { EMPTY, NEVER, Observable, Subject, delay, lastValueFrom, of, throwError, toArray } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import {
  AgentMessage,
  HookContext,
  LoopOptions,
  ToolCall,
  ToolContext,
  ToolDecision,
  ToolRegistry,
  ToolResultMessage,
  defineTool,
  runEventedToolLoop,
  scriptedProvider,
} from '../../src/index.js';
import { expectLoop, loopLegend, marbleProvider, marbleTools } from '../../src/testing/index.js';
import type { StandardSchemaV1 } from '../../src/types.js';
import { answerTurn, call, collectSync, end, loopEndOf, only, start, text, tool, toolTurn } from '../support/events.js';

const ask = (content = 'go'): AgentMessage[] => [{ role: 'user', content }];
const testScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

/** A loop over scripted turns, collected synchronously. */
function runSync(options: Omit<LoopOptions, 'provider' | 'messages'> & { turns: Parameters<typeof scriptedProvider>[0]; messages?: AgentMessage[] }) {
  const { turns, messages = ask(), ...rest } = options;
  return collectSync(runEventedToolLoop({ provider: scriptedProvider(turns), messages, ...rest })).values;
}

const results = (events: ReturnType<typeof runSync>) => only(events, 'tool_result').map((event) => event.message);
const contents = (events: ReturnType<typeof runSync>) => results(events).map((message) => message.content);

describe('beforeToolCall (H1, H2)', () => {
  const events = { s: start, a: call('approve_me'), b: call('other'), h: text('while I wait'), u: end('toolUse'), t: text('ok'), e: end('stop') };
  const legend = loopLegend(events, {
    1: 'turn_start 1',
    2: 'turn_start 2',
    β: 'tool_start other',
    B: 'tool_result other: done',
    α: 'tool_start approve_me',
    A: 'tool_result approve_me: ran',
    E: 'turn_end 1 (toolUse): user, assistant "while I wait"[approve_me,other], toolResult approve_me, toolResult other',
    F: 'turn_end 2 (stop): user, assistant "while I wait"[approve_me,other], toolResult approve_me, toolResult other, assistant "ok"',
    L: 'loop_end stop',
  });

  it('H1: waiting for a decision holds only that call: the model streams on, another call runs, then the approved one starts', () => {
    testScheduler().run((helpers) => {
      const { cold, expectSubscriptions } = helpers;
      const turn1 = cold('-s-a-b------h-u|', events);
      const approval = cold<ToolDecision>('-------------(r|)', { r: { action: 'run' } });
      const provider = marbleProvider(turn1, cold('-----s-t-e|', events));
      const registry = marbleTools({ approve_me: cold('--(x|)', { x: 'ran' }), other: cold('-----(y|)', { y: 'done' }) });
      const beforeToolCall = (toolCall: ToolCall) => (toolCall.name === 'approve_me' ? approval : undefined);
      const run = runEventedToolLoop({ provider, registry, messages: ask(), beforeToolCall });
      expectLoop(helpers, run).toBe('1s-a-(bβ)-B-h-u-α-(AE2)s-t-e(FL|)', legend);
      expectSubscriptions(approval.subscriptions).toBe('---^------------!');
    });
  });

  it('H2: a decision that takes its time does not count toward the timeout, which starts at tool_start (R16)', () => {
    testScheduler().run((helpers) => {
      const { cold } = helpers;
      const approval = cold<ToolDecision>('----------(r|)', { r: { action: 'run' } });
      const provider = marbleProvider(cold('-s-a---u|', events), cold('-----s-t-e|', events));
      const registry = marbleTools({ approve_me: cold('--(x|)', { x: 'ran' }) });
      const run = runEventedToolLoop({ provider, registry, messages: ask(), beforeToolCall: () => approval, toolTimeoutMs: 3 });
      const timed = loopLegend(events, {
        ...legend,
        E: 'turn_end 1 (toolUse): user, assistant[approve_me], toolResult approve_me',
        F: 'turn_end 2 (stop): user, assistant[approve_me], toolResult approve_me, assistant "ok"',
      });
      expectLoop(helpers, run).toBe('1s-a---u-----α-(AE2)s-t-e(FL|)', timed);
    });
  });

  it('H1: in sequential mode the calls behind a waiting decision wait for its slot, as behind a running tool', () => {
    testScheduler().run((helpers) => {
      const { cold, expectSubscriptions } = helpers;
      const approval = cold<ToolDecision>('------(r|)', { r: { action: 'run' } });
      const other = cold('----(y|)', { y: 'done' });
      const provider = marbleProvider(cold('-s-a---b-------u|', events), cold('----s-t-e|', events));
      const registry = marbleTools({ approve_me: cold('-(x|)', { x: 'ran' }), other });
      const beforeToolCall = (toolCall: ToolCall) => (toolCall.name === 'approve_me' ? approval : undefined);
      const run = runEventedToolLoop({ provider, registry, messages: ask(), beforeToolCall, toolExecution: 'sequential' });
      const sequential = loopLegend(events, {
        ...legend,
        E: 'turn_end 1 (toolUse): user, assistant[approve_me,other], toolResult approve_me, toolResult other',
        F: 'turn_end 2 (stop): user, assistant[approve_me,other], toolResult approve_me, toolResult other, assistant "ok"',
      });
      expectLoop(helpers, run).toBe('1s-a---b-α(Aβ)Bu(E2)s-t-e(FL|)', sequential);
      expectSubscriptions(other.subscriptions).toBe('----------^---!');
    });
  });

  it('H2: runs once per known, valid, non-duplicate call, when it gets its slot, with the turn and the history as of its start', () => {
    const seen: { call: ToolCall; turn: number; messages: readonly AgentMessage[] }[] = [];
    const registry = new ToolRegistry().register(tool('echo', (input) => String(input.text), { text: 'what to say' }));
    const events = runSync({
      turns: [
        toolTurn(call('echo', { text: 'one' }, 'c1'), call('nope', {}, 'c2'), call('echo', {}, 'c3'), call('echo', { text: 'dup' }, 'c1')),
        toolTurn(call('echo', { text: 'two' }, 'c4')),
        answerTurn('done'),
      ],
      registry,
      beforeToolCall: (toolCall, { turn, messages }) => void seen.push({ call: toolCall, turn, messages }),
    });
    expect(seen.map(({ call, turn }) => `${turn}:${call.id}`)).toEqual(['1:c1', '2:c4']);
    expect(seen[0]!.messages).toEqual(ask());
    expect(seen[1]!.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'toolResult', 'toolResult', 'toolResult', 'toolResult']);
    expect(contents(events)).toEqual(['one', 'unknown tool: nope', 'error: missing input: text', 'error: duplicate tool call id: c1', 'two']);
  });

  it('H2: `undefined`, `{ action: "run" }` and `{ action: "run", input: undefined }` run the call as the model asked', () => {
    for (const decision of [undefined, { action: 'run' }, { action: 'run', input: undefined }] as const) {
      const registry = new ToolRegistry().register(tool('echo', (input) => String(input.text), { text: 'what' }));
      const events = runSync({ turns: [toolTurn(call('echo', { text: 'hi' }, 'c1')), answerTurn('done')], registry, beforeToolCall: () => decision });
      expect(contents(events)).toEqual(['hi']);
      expect(only(events, 'tool_start').map((event) => event.call)).toEqual([{ id: 'c1', name: 'echo', input: { text: 'hi' } }]);
    }
  });

  it('H2: a rewritten input is checked again, and is what tool_start and the handler see; the history keeps the model’s own call', () => {
    const handled: ToolCall[] = [];
    const registry = new ToolRegistry().register(
      tool(
        'echo',
        (input, context: ToolContext) => {
          handled.push(context.call);
          return String(input.text);
        },
        { text: 'what' },
      ),
    );
    const rewrites: (Record<string, unknown> | null)[] = [{ text: 'safe' }, null as never, {}, [] as never];
    const events = runSync({
      turns: [toolTurn(...rewrites.map((_, i) => call('echo', { text: `raw ${i}` }, `c${i}`))), answerTurn('done')],
      registry,
      beforeToolCall: (toolCall) => ({ action: 'run', input: rewrites[Number(toolCall.id.slice(1))]! }),
    });
    expect(contents(events)).toEqual([
      'safe',
      'error: invalid input: expected an object, got null',
      'error: missing input: text',
      'error: invalid input: expected an object, got an array',
    ]);
    expect(only(events, 'tool_start').map((event) => event.call)).toEqual([{ id: 'c0', name: 'echo', input: { text: 'safe' } }]);
    expect(handled).toEqual([{ id: 'c0', name: 'echo', input: { text: 'safe' } }]);
    expect(loopEndOf(events).messages[1]).toMatchObject({ toolCalls: rewrites.map((_, i) => ({ id: `c${i}`, input: { text: `raw ${i}` } })) });
  });

  it('H2: a schema tool’s hook sees the input as the model sent it; a rewritten input goes through the validator', () => {
    // a tiny Standard Schema validator: `n` must be a number string, the output is the number
    const schema: StandardSchemaV1<unknown, { n: number }> = {
      '~standard': {
        version: 1,
        vendor: 'spec',
        validate: (value) => {
          const n = Number((value as { n?: unknown } | null)?.n);
          return Number.isFinite(n) ? { value: { n } } : { issues: [{ message: 'not a number', path: ['n'] }] };
        },
      },
    };
    const registry = new ToolRegistry().register(
      defineTool({ name: 'double', description: 'doubles n', inputSchema: { type: 'object' }, schema, handler: ({ n }) => String(n * 2) }),
    );
    const seen: unknown[] = [];
    const events = runSync({
      turns: [toolTurn(call('double', { n: '2' }, 'c1'), call('double', { n: '3' }, 'c2')), answerTurn('done')],
      registry,
      beforeToolCall: (toolCall) => {
        seen.push(toolCall.input);
        return toolCall.id === 'c2' ? { action: 'run', input: { n: 'x' } } : undefined;
      },
    });
    expect(seen).toEqual([{ n: '2' }, { n: '3' }]);
    expect(contents(events)).toEqual(['4', 'error: invalid input: n: not a number']);
  });

  it('H2: deny answers `denied: REASON` (isError) and answer answers without running: no tool_start, the handler never runs', () => {
    const handler = jest.fn(() => 'ran');
    const registry = new ToolRegistry().register(tool('rm', handler)).register(tool('cached', handler));
    const events = runSync({
      turns: [toolTurn(call('rm', {}, 'c1'), call('cached', {}, 'c2'), call('cached', {}, 'c3')), answerTurn('done')],
      registry,
      beforeToolCall: (toolCall): ToolDecision =>
        toolCall.name === 'rm'
          ? { action: 'deny', reason: 'rm is not allowed' }
          : { action: 'answer', output: toolCall.id === 'c2' ? 'from cache' : { content: 'cache miss', isError: true, details: { key: 'k' } } },
    });
    expect(handler).not.toHaveBeenCalled();
    expect(only(events, 'tool_start')).toEqual([]);
    expect(results(events)).toEqual([
      { role: 'toolResult', toolCallId: 'c1', toolName: 'rm', content: 'denied: rm is not allowed', isError: true },
      { role: 'toolResult', toolCallId: 'c2', toolName: 'cached', content: 'from cache', isError: false },
      { role: 'toolResult', toolCallId: 'c3', toolName: 'cached', content: 'cache miss', isError: true, details: { key: 'k' } },
    ]);
  });

  it('H2: an answer that asks to terminate ends the loop like a tool that does (R6)', () => {
    const registry = new ToolRegistry().register(tool('finish', () => 'ran'));
    const events = runSync({
      turns: [toolTurn(call('finish', {}, 'c1')), answerTurn('never')],
      registry,
      beforeToolCall: () => ({ action: 'answer', output: { content: 'done', terminate: true } }),
    });
    expect(loopEndOf(events).reason).toBe('terminated');
  });

  it('H2: resumed calls (R22) are asked in turn 0', () => {
    const turns: number[] = [];
    const saved: AgentMessage[] = [...ask(), { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [{ id: 'c1', name: 'echo', input: {} }] }];
    runSync({
      turns: [answerTurn('done')],
      messages: saved,
      registry: new ToolRegistry().register(tool('echo', () => 'ok')),
      beforeToolCall: (_call, context) => void turns.push(context.turn),
    });
    expect(turns).toEqual([0]);
  });
});

describe('afterToolCall (H3)', () => {
  it('sees every result of a call that reached beforeToolCall — ran, failed, timed out, denied, answered — and not the others', async () => {
    const seen: string[] = [];
    const registry = new ToolRegistry()
      .register(tool('ok', () => 'fine'))
      .register(tool('boom', () => { throw new Error('broken'); }))
      .register(tool('slow', () => NEVER))
      .register(tool('rm', () => 'never'))
      .register(tool('cached', () => 'never'))
      .register(tool('needs', () => 'never', { key: 'required' }));
    const provider = scriptedProvider([
      toolTurn(call('ok', {}, 'c1'), call('boom', {}, 'c2'), call('slow', {}, 'c3'), call('rm', {}, 'c4'), call('cached', {}, 'c5'), call('needs', {}, 'c6'), call('nope', {}, 'c7'), call('ok', {}, 'c1')),
      answerTurn('done'),
    ]);
    const events = await lastValueFrom(
      runEventedToolLoop({
        provider,
        registry,
        messages: ask(),
        toolTimeoutMs: 5,
        beforeToolCall: (toolCall) =>
          toolCall.name === 'rm' ? { action: 'deny', reason: 'no' } : toolCall.name === 'cached' ? { action: 'answer', output: 'hit' } : undefined,
        afterToolCall: (result) => void seen.push(`${result.toolCallId}: ${result.content}`),
      }).pipe(toArray()),
    );
    expect(seen.sort()).toEqual(['c1: fine', 'c2: error: broken', 'c3: error: tool timed out after 5 ms', 'c4: denied: no', 'c5: hit']);
    expect(results(events).map((message) => message.toolCallId)).toContain('c1_dup2');
  });

  it('replaces the result whole: a string is { content } (isError false), a ToolOutput takes its defaults; nothing keeps it', () => {
    const registry = new ToolRegistry()
      .register(tool('fails', () => { throw new Error('bad'); }))
      .register(tool('secret', () => ({ content: 'key=hunter2', details: { raw: true } })))
      .register(tool('plain', () => 'as is'));
    const events = runSync({
      turns: [toolTurn(call('fails', {}, 'c1'), call('secret', {}, 'c2'), call('plain', {}, 'c3')), answerTurn('done')],
      registry,
      afterToolCall: (result) =>
        result.toolName === 'fails' ? 'recovered' : result.toolName === 'secret' ? { content: result.content.replace(/=.*/, '=[redacted]') } : undefined,
    });
    expect(results(events)).toEqual([
      { role: 'toolResult', toolCallId: 'c1', toolName: 'fails', content: 'recovered', isError: false },
      { role: 'toolResult', toolCallId: 'c2', toolName: 'secret', content: 'key=[redacted]', isError: false },
      { role: 'toolResult', toolCallId: 'c3', toolName: 'plain', content: 'as is', isError: false },
    ]);
  });

  it('sees the full content; maxToolOutputChars (R26) cuts what comes out of it', () => {
    const seen: string[] = [];
    const registry = new ToolRegistry().register(tool('long', () => 'abcdefgh'));
    const events = runSync({
      turns: [toolTurn(call('long', {}, 'c1')), answerTurn('done')],
      registry,
      maxToolOutputChars: 3,
      afterToolCall: (result) => {
        seen.push(result.content);
        return `${result.content}!`;
      },
    });
    expect(seen).toEqual(['abcdefgh']);
    expect(contents(events)).toEqual(['abc\n[truncated: 6 more characters]']);
  });

  it('its wait holds the slot and does not count toward the timeout; tool_result comes when it answers', () => {
    testScheduler().run((helpers) => {
      const { cold } = helpers;
      const events = { s: start, a: call('tool'), u: end('toolUse'), t: text('ok'), e: end('stop') };
      const review = cold<string>('------(r|)', { r: 'reviewed' });
      const run = runEventedToolLoop({
        provider: marbleProvider(cold('-s-a---u|', events), cold('-----s-t-e|', events)),
        registry: marbleTools({ tool: cold('--(x|)', { x: 'raw' }) }),
        messages: ask(),
        toolTimeoutMs: 3,
        afterToolCall: () => review,
      });
      const legend = loopLegend(events, {
        1: 'turn_start 1',
        α: 'tool_start tool',
        R: 'tool_result tool: reviewed',
        E: 'turn_end 1 (toolUse): user, assistant[tool], toolResult tool',
        2: 'turn_start 2',
        F: 'turn_end 2 (stop): user, assistant[tool], toolResult tool, assistant "ok"',
        L: 'loop_end stop',
      });
      expectLoop(helpers, run).toBe('1s-(aα)u---(RE2)s-t-e(FL|)', legend);
    });
  });
});

describe('hook failures (H4)', () => {
  const failures: [string, () => unknown, string][] = [
    ['throws', () => { throw new TypeError('nope'); }, 'nope'],
    ['rejects', () => Promise.reject(new Error('later nope')), 'later nope'],
    ['errors', () => throwError(() => new Error('stream nope')), 'stream nope'],
    ['completes without a value', () => EMPTY, 'completed without a value'],
  ];

  it.each(failures)('a beforeToolCall that %s: `error: beforeToolCall failed: MESSAGE`, the cause in details.error, and the loop goes on', async (_how, hook, message) => {
    const handler = jest.fn(() => 'ran');
    const events = await lastValueFrom(
      runEventedToolLoop({
        provider: scriptedProvider([toolTurn(call('t', {}, 'c1')), answerTurn('done')]),
        registry: new ToolRegistry().register(tool('t', handler)),
        messages: ask(),
        beforeToolCall: hook as never,
      }).pipe(toArray()),
    );
    expect(handler).not.toHaveBeenCalled();
    expect(results(events)).toEqual([
      expect.objectContaining({ content: `error: beforeToolCall failed: ${message}`, isError: true, details: { error: expect.objectContaining({ message }) } }),
    ]);
    expect(loopEndOf(events).reason).toBe('stop');
  });

  it.each(failures)('an afterToolCall that %s: `error: afterToolCall failed: MESSAGE`', async (_how, hook, message) => {
    const events = await lastValueFrom(
      runEventedToolLoop({
        provider: scriptedProvider([toolTurn(call('t', {}, 'c1')), answerTurn('done')]),
        registry: new ToolRegistry().register(tool('t', () => 'ran')),
        messages: ask(),
        afterToolCall: hook as never,
      }).pipe(toArray()),
    );
    expect(contents(events)).toEqual([`error: afterToolCall failed: ${message}`]);
  });

  it('an answer that is no decision, or no result, is the hook’s failure and says what was expected', () => {
    const registry = new ToolRegistry().register(tool('t', () => 'ran'));
    const turns = () => [toolTurn(call('t', {}, 'c1')), answerTurn('done')];
    const bad = [true, 'yes', { action: 'allow' }, { action: 'deny' }, { action: 'answer', output: 3 }];
    const before = bad.map((decision) => contents(runSync({ turns: turns(), registry, beforeToolCall: () => decision as never }))[0]);
    expect(before).toEqual([
      "error: beforeToolCall failed: expected { action: 'run' | 'deny' | 'answer' } or nothing, got true, a boolean",
      `error: beforeToolCall failed: expected { action: 'run' | 'deny' | 'answer' } or nothing, got "yes", a string`,
      `error: beforeToolCall failed: expected { action: 'run' | 'deny' | 'answer' } or nothing, got {"action":"allow"}, an object`,
      `error: beforeToolCall failed: expected { action: 'run' | 'deny' | 'answer' } or nothing, got {"action":"deny"}, an object`,
      `error: beforeToolCall failed: expected { action: 'run' | 'deny' | 'answer' } or nothing, got {"action":"answer","output":3}, an object`,
    ]);
    const after = contents(runSync({ turns: turns(), registry, afterToolCall: () => 42 as never }));
    expect(after).toEqual(['error: afterToolCall failed: expected a string, { content: string } or nothing, got 42, a number']);
  });

  it('R20: a hook that is not a function is refused at call time', () => {
    const options = { provider: scriptedProvider([]), registry: new ToolRegistry(), messages: ask() };
    expect(() => runEventedToolLoop({ ...options, beforeToolCall: 'yes' as never })).toThrow(
      new TypeError('runEventedToolLoop: beforeToolCall must be a function (got "yes", a string)'),
    );
    expect(() => runEventedToolLoop({ ...options, afterToolCall: {} as never })).toThrow(TypeError);
    expect(() => runEventedToolLoop({ ...options, prepareTurn: 1 as never })).toThrow(TypeError);
  });
});

describe('cancellation while a hook waits (H5)', () => {
  it('unsubscribing tears the waiting hook down and aborts its signal; a hook that answered is not aborted', () => {
    const signals: Record<string, AbortSignal> = {};
    const registry = new ToolRegistry().register(tool('wait', () => 'ran')).register(tool('quick', () => 'ran'));
    const approvals = new Subject<ToolDecision>();
    const subscription = runEventedToolLoop({
      provider: () => new Observable((subscriber) => {
        subscriber.next(start);
        subscriber.next(call('quick', {}, 'c1'));
        subscriber.next(call('wait', {}, 'c2'));
      }),
      registry,
      messages: ask(),
      beforeToolCall: (toolCall, context: HookContext) => {
        signals[toolCall.id] = context.signal;
        return toolCall.name === 'wait' ? approvals : undefined;
      },
    }).subscribe();
    expect(approvals.observed).toBe(true);
    subscription.unsubscribe();
    expect(approvals.observed).toBe(false);
    expect({ quick: signals.c1!.aborted, wait: signals.c2!.aborted }).toEqual({ quick: false, wait: true });
  });

  it('options.signal while a hook waits: the call gets `error: aborted` and the history stays valid (R11)', () => {
    testScheduler().run((helpers) => {
      const { cold, hot, expectSubscriptions } = helpers;
      const events = { s: start, a: call('wait'), u: end('toolUse') };
      const approval = cold<ToolDecision>('----------(r|)', { r: { action: 'run' } });
      const controller = new AbortController();
      hot('-------x').subscribe(() => controller.abort());
      const run = runEventedToolLoop({
        provider: marbleProvider(cold('-s-a-u|', events)),
        registry: marbleTools({ wait: 'ran' }),
        messages: ask(),
        signal: controller.signal,
        beforeToolCall: () => approval,
      });
      const legend = loopLegend(events, {
        1: 'turn_start 1',
        A: 'tool_result wait: error: aborted (isError)',
        E: 'turn_end 1 (aborted: aborted): user, assistant[wait], toolResult wait',
        L: 'loop_end aborted',
      });
      expectLoop(helpers, run).toBe('1s-a-u-(AEL|)', legend);
      expectSubscriptions(approval.subscriptions).toBe('---^---!');
    });
  });

  it('a Promise hook that answers after the loop was cancelled changes nothing', async () => {
    let approve: (decision: ToolDecision) => void = () => undefined;
    const handler = jest.fn(() => 'ran');
    const controller = new AbortController();
    const run = runEventedToolLoop({
      provider: scriptedProvider([toolTurn(call('t', {}, 'c1')), answerTurn('done')]),
      registry: new ToolRegistry().register(tool('t', handler)),
      messages: ask(),
      signal: controller.signal,
      beforeToolCall: () => new Promise<ToolDecision>((resolve) => (approve = resolve)),
    });
    const events = lastValueFrom(run.pipe(toArray()));
    await Promise.resolve();
    controller.abort();
    approve({ action: 'run' });
    const all = await events;
    expect(handler).not.toHaveBeenCalled();
    expect(contents(all)).toEqual(['error: aborted']);
    expect(loopEndOf(all).reason).toBe('aborted');
  });

  it('a Promise hook answers in real time; its result arrives like a Promise tool’s', async () => {
    const events = await lastValueFrom(
      runEventedToolLoop({
        provider: scriptedProvider([toolTurn(call('t', {}, 'c1')), answerTurn('done')]),
        registry: new ToolRegistry().register(tool('t', () => 'ran')),
        messages: ask(),
        beforeToolCall: () => of<ToolDecision>({ action: 'run' }).pipe(delay(5)),
        afterToolCall: async (result: ToolResultMessage) => `${result.content}, checked`,
      }).pipe(toArray()),
    );
    expect(contents(events)).toEqual(['ran, checked']);
  });
});
