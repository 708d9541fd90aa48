import { concat, lastValueFrom, map, NEVER, of, Subject, toArray, type Observable } from 'rxjs';
import {
  agentTool,
  conversation,
  runEventedToolLoop,
  scriptedProvider,
  toolProgress,
  ToolRegistry,
  type AgentMessage,
  type ConversationEvent,
  type LoopEvent,
  type ProviderEvent,
} from '../../src/index.js';
import { toAgUi, type AgUiEvent } from '../../src/ui/index.js';
import { fromAgUiMessages } from '../../src/ui/index.js';
import { clientMessages, types, verified } from './ag-ui-check.js';

const user: AgentMessage = { role: 'user', content: 'go' };
const ids = () => {
  let n = 0;
  return () => `run${++n}`;
};

function registry(): ToolRegistry {
  return new ToolRegistry()
    .register({ name: 'echo', description: 'echoes', input: { text: 'what' }, handler: (input) => String(input.text) })
    .register({ name: 'fails', description: 'throws', input: {}, handler: () => Promise.reject(new Error('disk full')) })
    .register({ name: 'hangs', description: 'never answers', input: {}, handler: () => NEVER });
}

async function all<T>(events$: Observable<T>): Promise<T[]> {
  return lastValueFrom(events$.pipe(toArray()));
}

/** The loop's events and toAgUi's, from one run (the loop's recorded on its way in). */
async function both(events$: Observable<ConversationEvent>): Promise<{ loop: ConversationEvent[]; agUi: AgUiEvent[] }> {
  const loop: ConversationEvent[] = [];
  const agUi = await all(events$.pipe(map((event) => (loop.push(event), event)), toAgUi({ threadId: 'th', runId: ids() })));
  return { loop, agUi };
}

const calls: ProviderEvent[] = [
  { type: 'message_start' },
  { type: 'reasoning_delta', text: 'Two lookups. ' },
  { type: 'reasoning_delta', text: 'In parallel.' },
  { type: 'text_delta', text: 'Looking' },
  { type: 'text_delta', text: ' up.' },
  { type: 'tool_call_delta', index: 0, id: 'a', name: 'echo', argumentsDelta: '{"te' },
  { type: 'tool_call_delta', index: 1, id: 'b', name: 'fails', argumentsDelta: '' },
  { type: 'tool_call_delta', index: 0, argumentsDelta: 'xt":"one"}' },
  { type: 'tool_call', call: { id: 'a', name: 'echo', input: { text: 'one' } } },
  { type: 'tool_call', call: { id: 'b', name: 'fails', input: {} } },
  { type: 'tool_call', call: { id: 'c', name: 'nope', input: { q: 1 } } },
  { type: 'message_end', stopReason: 'toolUse', reasoning: [{ type: 'thinking', signature: 'sig' }], usage: { inputTokens: 20, outputTokens: 5, cacheReadTokens: 12 } },
];
const answer: ProviderEvent[] = [
  { type: 'message_start' },
  { type: 'text_delta', text: 'Done.' },
  { type: 'message_end', stopReason: 'stop', usage: { inputTokens: 30, outputTokens: 2, cacheWriteTokens: 4 } },
];

describe('toAgUi on real loops (U1): every stream passes verifyEvents and the event schemas', () => {
  it('U1: text, reasoning, calls in parallel (streamed, failing, unknown): a valid run whose events rebuild, in the client, the loop history', async () => {
    const { loop, agUi } = await both(runEventedToolLoop({ provider: scriptedProvider([calls, answer]), registry: registry(), messages: [user] }));
    await verified(agUi);
    expect(types(agUi)).toEqual([
      'RUN_STARTED',
      'STEP_STARTED',
      'REASONING_START',
      'REASONING_MESSAGE_START',
      'REASONING_MESSAGE_CONTENT',
      'REASONING_MESSAGE_CONTENT',
      'REASONING_MESSAGE_END',
      'REASONING_END',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_CONTENT',
      'TOOL_CALL_START',
      'TOOL_CALL_ARGS',
      'TOOL_CALL_START',
      'TOOL_CALL_ARGS',
      'TOOL_CALL_END',
      'TOOL_CALL_RESULT',
      'TOOL_CALL_END',
      'TOOL_CALL_START',
      'TOOL_CALL_ARGS',
      'TOOL_CALL_END',
      'TOOL_CALL_RESULT',
      'REASONING_ENCRYPTED_VALUE',
      'TEXT_MESSAGE_END',
      'TOOL_CALL_RESULT',
      'STEP_FINISHED',
      'STEP_STARTED',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_END',
      'STEP_FINISHED',
      'RUN_FINISHED',
    ]);
    const end = loop.at(-1) as Extract<LoopEvent, { type: 'loop_end' }>;
    expect(agUi.at(-1)).toEqual({
      type: 'RUN_FINISHED',
      threadId: 'th',
      runId: 'run1',
      outcome: { type: 'success' },
      usage: [{ inputTokens: 50, outputTokens: 7, totalTokens: 57, cachedInputTokens: 12, cacheWriteInputTokens: 4 }],
    });
    const client = await clientMessages(agUi, [{ id: 'u1', role: 'user', content: 'go' }]);
    expect(fromAgUiMessages(client)).toEqual(end.messages);
    expect(end.messages[1]).toMatchObject({ reasoning: [{ type: 'thinking', signature: 'sig' }] });
  });

  it('U1: a call hook denies, a provider error ends the run as RUN_ERROR with its message', async () => {
    const failing: ProviderEvent[] = [{ type: 'message_start' }, { type: 'text_delta', text: 'Hm' }, { type: 'message_end', stopReason: 'error', errorMessage: 'HTTP 529 overloaded' }];
    const denied = await both(
      runEventedToolLoop({
        provider: scriptedProvider([[{ type: 'message_start' }, { type: 'tool_call', call: { id: 'a', name: 'echo', input: { text: 'x' } } }, { type: 'message_end', stopReason: 'toolUse' }], failing]),
        registry: registry(),
        messages: [user],
        beforeToolCall: () => ({ action: 'deny', reason: 'not today' }),
      }),
    );
    await verified(denied.agUi);
    expect(denied.agUi.find((e) => e.type === 'TOOL_CALL_RESULT')).toMatchObject({ content: 'denied: not today', metadata: { 'rx-tool-loop': { isError: true, toolName: 'echo' } } });
    expect(denied.agUi.at(-1)).toMatchObject({ type: 'RUN_ERROR', message: 'HTTP 529 overloaded' });
    const end = denied.loop.at(-1) as Extract<LoopEvent, { type: 'loop_end' }>;
    expect(fromAgUiMessages(await clientMessages(denied.agUi, [{ id: 'u1', role: 'user', content: 'go' }]))).toEqual(end.messages);
  });

  it('U1: an abort while a tool runs ends the run cancelled, with everything opened closed', async () => {
    const controller = new AbortController();
    const provider = scriptedProvider([
      [{ type: 'message_start' }, { type: 'text_delta', text: 'Wait' }, { type: 'tool_call', call: { id: 'h', name: 'hangs', input: {} } }, { type: 'message_end', stopReason: 'toolUse' }],
    ]);
    const events$ = runEventedToolLoop({ provider, registry: registry(), messages: [user], signal: controller.signal }).pipe(
      map((event) => {
        if (event.type === 'tool_start') queueMicrotask(() => controller.abort());
        return event;
      }),
    );
    const { agUi } = await both(events$);
    await verified(agUi);
    expect(agUi.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } });
  });

  it('U1: an agent tool is a subagent: SUBAGENT_STARTED under its call, its inner events carry its subagentRunId, SUBAGENT_FINISHED before the call result', async () => {
    const inner = scriptedProvider([
      [{ type: 'message_start' }, { type: 'tool_call', call: { id: 'i1', name: 'echo', input: { text: 'deep' } } }, { type: 'message_end', stopReason: 'toolUse' }],
      [{ type: 'message_start' }, { type: 'text_delta', text: 'found deep' }, { type: 'message_end', stopReason: 'stop' }],
    ]);
    const researcher = agentTool({
      name: 'researcher',
      description: 'researches',
      input: { question: 'what' },
      agent: (input, context) => runEventedToolLoop({ provider: inner, registry: registry(), messages: [{ role: 'user', content: String(input.question) }], signal: context.signal }),
    });
    const outer = scriptedProvider([
      [{ type: 'message_start' }, { type: 'tool_call', call: { id: 'r', name: 'researcher', input: { question: 'q' } } }, { type: 'message_end', stopReason: 'toolUse' }],
      answer,
    ]);
    const { loop, agUi } = await both(runEventedToolLoop({ provider: outer, registry: registry().register(researcher), messages: [user] }));
    await verified(agUi);
    const started = agUi.find((e) => e.type === 'SUBAGENT_STARTED');
    expect(started).toMatchObject({ name: 'researcher', parentToolCallId: 'r' });
    const sub = (started as { subagentRunId: string }).subagentRunId;
    const inside = agUi.filter((e) => (e as { subagentRunId?: string }).subagentRunId === sub).map((e) => e.type);
    expect(inside).toEqual(expect.arrayContaining(['STEP_STARTED', 'TOOL_CALL_START', 'TOOL_CALL_RESULT', 'TEXT_MESSAGE_CONTENT', 'SUBAGENT_FINISHED']));
    const finished = agUi.findIndex((e) => e.type === 'SUBAGENT_FINISHED');
    expect(finished).toBeLessThan(agUi.findIndex((e) => e.type === 'TOOL_CALL_RESULT' && e.toolCallId === 'r'));
    // the inner messages are the subagent's; the parent's history is the loop's
    const client = await clientMessages(agUi, [{ id: 'u1', role: 'user', content: 'go' }]);
    const parents = client.filter((m) => (m as { subagentRunId?: string }).subagentRunId === undefined);
    expect(fromAgUiMessages(parents)).toEqual((loop.at(-1) as Extract<LoopEvent, { type: 'loop_end' }>).messages);
  });

  it('U1: an inner loop that ends with an error, or is cut (its call aborted), is SUBAGENT_ERROR with why', async () => {
    /** The AG-UI events of an outer loop that calls `researcher` once, whose inner loop asks `inner`; aborted at `abortAt`'s event. */
    const subagent = async (inner: ProviderEvent[][], abortAt: (event: ConversationEvent) => boolean = () => false): Promise<AgUiEvent[]> => {
      const controller = new AbortController();
      const researcher = agentTool({
        name: 'researcher',
        description: 'researches',
        input: { question: 'what' },
        agent: (input, context) => runEventedToolLoop({ provider: scriptedProvider(inner), registry: registry(), messages: [{ role: 'user', content: String(input.question) }], signal: context.signal }),
      });
      const outer = scriptedProvider([
        [{ type: 'message_start' }, { type: 'tool_call', call: { id: 'r', name: 'researcher', input: { question: 'q' } } }, { type: 'message_end', stopReason: 'toolUse' }],
        answer,
      ]);
      const events$ = runEventedToolLoop({ provider: outer, registry: registry().register(researcher), messages: [user], signal: controller.signal }).pipe(
        map((event) => {
          if (abortAt(event)) queueMicrotask(() => controller.abort());
          return event;
        }),
      );
      const { agUi } = await both(events$);
      await verified(agUi);
      return agUi;
    };
    const failed = await subagent([[{ type: 'message_start' }, { type: 'text_delta', text: 'Hm' }, { type: 'message_end', stopReason: 'error', errorMessage: 'HTTP 500 inner' }]]);
    const failedRun = (failed.find((e) => e.type === 'SUBAGENT_STARTED') as { subagentRunId: string }).subagentRunId;
    expect(failed.filter((e) => e.type === 'SUBAGENT_FINISHED' || e.type === 'SUBAGENT_ERROR')).toEqual([{ type: 'SUBAGENT_ERROR', subagentRunId: failedRun, message: 'HTTP 500 inner' }]);
    // the inner loop waits on a tool that never answers, and the outer loop is aborted then: the inner loop is cut
    const hanging: ProviderEvent[][] = [[{ type: 'message_start' }, { type: 'tool_call', call: { id: 'h', name: 'hangs', input: {} } }, { type: 'message_end', stopReason: 'toolUse' }]];
    const cut = await subagent(hanging, (event) => event.type === 'tool_update' && event.event?.type === 'tool_start');
    const cutRun = (cut.find((e) => e.type === 'SUBAGENT_STARTED') as { subagentRunId: string }).subagentRunId;
    expect(cut.filter((e) => e.type === 'SUBAGENT_FINISHED' || e.type === 'SUBAGENT_ERROR')).toEqual([{ type: 'SUBAGENT_ERROR', subagentRunId: cutRun, message: 'error: aborted' }]);
    expect(cut.findIndex((e) => e.type === 'SUBAGENT_ERROR')).toBeLessThan(cut.findIndex((e) => e.type === 'TOOL_CALL_RESULT' && e.toolCallId === 'r'));
    expect(cut.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } });
  });

  it('U1: prompt_dropped has no AG-UI event (nothing opens a run for it)', async () => {
    const dropped: ConversationEvent = { type: 'prompt_dropped', message: { role: 'user', content: 'later' } };
    expect(await all(of(dropped).pipe(toAgUi({ threadId: 'th', runId: ids() })))).toEqual([]);
    const loop = () => runEventedToolLoop({ provider: scriptedProvider([answer]), registry: registry(), messages: [user] });
    const alone = await both(loop());
    const withDropped = await both(concat(of(dropped), loop(), of(dropped)));
    expect(withDropped.agUi).toEqual(alone.agUi);
  });

  it('U1: a tool’s progress is an activity message of type tool_progress, one per call, replaced at each update', async () => {
    const tools = registry().register({ name: 'ticks', description: 'counts', input: {}, handler: () => of(toolProgress('1/2'), toolProgress('2/2'), 'done') });
    const provider = scriptedProvider([[{ type: 'message_start' }, { type: 'tool_call', call: { id: 't', name: 'ticks', input: {} } }, { type: 'message_end', stopReason: 'toolUse' }], answer]);
    const { loop, agUi } = await both(runEventedToolLoop({ provider, registry: tools, messages: [user] }));
    await verified(agUi);
    const activities = agUi.filter((e) => e.type === 'ACTIVITY_SNAPSHOT');
    expect(activities.map((e) => (e as { content: unknown }).content)).toEqual([
      { toolCallId: 't', toolName: 'ticks', content: '1/2' },
      { toolCallId: 't', toolName: 'ticks', content: '2/2' },
    ]);
    expect(new Set(activities.map((e) => (e as { messageId: string }).messageId)).size).toBe(1);
    const client = await clientMessages(agUi, [{ id: 'u1', role: 'user', content: 'go' }]);
    expect(client.filter((m) => m.role === 'activity')).toHaveLength(1);
    expect(fromAgUiMessages(client)).toEqual((loop.at(-1) as Extract<LoopEvent, { type: 'loop_end' }>).messages);
  });

  it('U1: a conversation is a run per loop; each prompt opens the next run as a user text message', async () => {
    const prompts = new Subject<string>();
    const provider = scriptedProvider([answer, answer]);
    const done = both(prompts.pipe(conversation({ provider, registry: registry() })));
    prompts.next('first');
    prompts.next('second');
    prompts.complete();
    const { agUi } = await done;
    await verified(agUi);
    const runs = agUi.filter((e) => e.type === 'RUN_STARTED').map((e) => (e as { runId: string }).runId);
    expect(runs).toEqual(['run1', 'run2']);
    expect(agUi.filter((e) => e.type === 'TEXT_MESSAGE_START' && e.role === 'user')).toHaveLength(2);
    expect(agUi.filter((e) => e.type === 'RUN_FINISHED')).toHaveLength(2);
  });

  it("U1, H8: an interrupt's RUN_FINISHED carries the loop's usage so far — a conversation's second loop counts its own turns only", async () => {
    const first: AgentMessage[] = [user];
    const second: AgentMessage[] = [user, { role: 'assistant', content: 'Done.', stopReason: 'stop' }, { role: 'user', content: 'again' }];
    const echoes: ProviderEvent[] = [
      { type: 'message_start' },
      { type: 'tool_call', call: { id: 'e1', name: 'echo', input: { text: 'x' } } },
      { type: 'message_end', stopReason: 'toolUse', usage: { inputTokens: 3, outputTokens: 1 } },
    ];
    const waits: ProviderEvent[] = [
      { type: 'message_start' },
      { type: 'tool_call', call: { id: 'h1', name: 'hangs', input: {} } },
      { type: 'message_end', stopReason: 'toolUse', usage: { inputTokens: 5, outputTokens: 2, cacheReadTokens: 4 } },
    ];
    const approvals = { needsApproval: (c: { name: string }) => c.name === 'hangs', decisions: NEVER };
    const { agUi } = await both(
      concat(
        runEventedToolLoop({ provider: scriptedProvider([answer]), registry: registry(), messages: first }),
        of<ConversationEvent>({ type: 'user_message', message: { role: 'user', content: 'again' }, messages: second }),
        runEventedToolLoop({ provider: scriptedProvider([echoes, waits]), registry: registry(), messages: second, approvals }),
      ),
    );
    await verified(agUi);
    const finished = agUi.filter((e) => e.type === 'RUN_FINISHED');
    expect(finished.map((e) => [e.outcome?.type, e.usage])).toEqual([
      ['success', [{ inputTokens: 30, outputTokens: 2, totalTokens: 32, cacheWriteInputTokens: 4 }]],
      // the second loop's turn 1 (its turn_end) and turn 2's reply, which the interrupt ends after
      ['interrupt', [{ inputTokens: 8, outputTokens: 3, totalTokens: 11, cachedInputTokens: 4 }]],
    ]);
  });

  it('U1: bad options are refused at call time, naming the option', () => {
    expect(() => toAgUi({ threadId: '' })).toThrow('toAgUi: threadId must be a non-empty string');
    expect(() => toAgUi({ threadId: 't', runId: 'r' as never })).toThrow('toAgUi: runId must be a function');
    expect(() => toAgUi(undefined as never)).toThrow('toAgUi: options must be an object');
  });
});
