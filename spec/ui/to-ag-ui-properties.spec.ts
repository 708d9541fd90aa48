import fc from 'fast-check';
import { lastValueFrom, NEVER, of, tap, toArray, type Observable } from 'rxjs';
import {
  agentTool,
  initialViewModel,
  reduceViewModel,
  runEventedToolLoop,
  scriptedProvider,
  toolProgress,
  ToolRegistry,
  type AgentMessage,
  type ApprovalAnswer,
  type LoopEvent,
  type ProviderEvent,
} from '../../src/index.js';
import { fromAgUiMessages, toAgUi, type AgUiEvent } from '../../src/ui/index.js';
import { clientMessages, verified } from './ag-ui-check.js';

/**
 * U1 over generated runs: scripted replies (reasoning, text, calls streamed or whole, in parallel), tools that
 * answer, fail, hang, report progress or are agents, a hook that denies, calls that wait for a person (answered at once, or not:
 * the run ends in an interrupt), provider errors, aborts at any event. Every stream toAgUi emits passes
 * verifyEvents and @ag-ui/core's schemas, and the client's messages give the loop's history back.
 * `PROPERTY_RUNS=N` sets the runs (default 150; 1,000 pass).
 */
const RUNS = Number(process.env.PROPERTY_RUNS ?? 150);

const NAMES = ['echo', 'fails', 'hangs', 'agent', 'send', 'ticks', 'missing'] as const;
interface Call {
  name: (typeof NAMES)[number];
  streamed: boolean;
  text: string;
}
interface Turn {
  reasoning: string[];
  text: string[];
  calls: Call[];
  error: boolean;
  reasoningBlocks: boolean;
}
interface Scenario {
  turns: Turn[];
  deny: boolean;
  approve: 'none' | 'at once' | 'never';
  abortAt: number | undefined;
}

const chunk = fc.string({ maxLength: 6 });
const call = fc.record({ name: fc.constantFrom(...NAMES), streamed: fc.boolean(), text: fc.string({ maxLength: 5 }) });
const turn = fc.record({
  reasoning: fc.array(chunk, { maxLength: 2 }),
  text: fc.array(chunk, { maxLength: 3 }),
  calls: fc.array(call, { maxLength: 3 }),
  error: fc.nat({ max: 9 }).map((n) => n < 2),
  reasoningBlocks: fc.boolean(),
});
const scenario: fc.Arbitrary<Scenario> = fc.record({
  turns: fc.array(turn, { minLength: 1, maxLength: 3 }),
  deny: fc.boolean(),
  approve: fc.constantFrom('none' as const, 'at once' as const, 'never' as const),
  abortAt: fc.option(fc.nat({ max: 40 }), { nil: undefined }),
});

function reply(t: Turn, n: number): ProviderEvent[] {
  const events: ProviderEvent[] = [{ type: 'message_start' }];
  for (const text of t.reasoning) events.push({ type: 'reasoning_delta', text });
  for (const text of t.text) events.push({ type: 'text_delta', text });
  if (t.error) return [...events, { type: 'message_end', stopReason: 'error', errorMessage: `HTTP 500 on turn ${n}` }];
  const calls = t.calls.map((c, i) => ({ id: `t${n}c${i}`, name: c.name, input: { text: c.text } }));
  // the streamed calls interleave their pieces: ids and names on the first, the arguments split in two
  const streamed = calls.filter((_, i) => t.calls[i].streamed);
  streamed.forEach((c) => {
    const index = calls.indexOf(c);
    events.push({ type: 'tool_call_delta', index, id: c.id, name: c.name, argumentsDelta: '{"text":' });
  });
  streamed.forEach((c) => events.push({ type: 'tool_call_delta', index: calls.indexOf(c), argumentsDelta: `${JSON.stringify(c.input.text)}}` }));
  for (const c of calls) events.push({ type: 'tool_call', call: c });
  const end: ProviderEvent = { type: 'message_end', stopReason: calls.length > 0 ? 'toolUse' : 'stop', usage: { inputTokens: 5, outputTokens: 2, cacheReadTokens: 1 } };
  if (t.reasoningBlocks) end.reasoning = [{ type: 'thinking', signature: `s${n}` }];
  return [...events, end];
}

function registry(): ToolRegistry {
  const inner = () =>
    scriptedProvider([
      [{ type: 'message_start' }, { type: 'tool_call', call: { id: 'in1', name: 'echo', input: { text: 'deep' } } }, { type: 'message_end', stopReason: 'toolUse' }],
      [{ type: 'message_start' }, { type: 'reasoning_delta', text: 'hm' }, { type: 'text_delta', text: 'inner answer' }, { type: 'message_end', stopReason: 'stop' }],
    ]);
  const tools = new ToolRegistry()
    .register({ name: 'echo', description: 'echoes', input: { text: 'what' }, handler: (input) => String(input.text) })
    .register({ name: 'send', description: 'sends', input: { text: 'what' }, handler: (input) => `sent ${String(input.text)}` })
    .register({ name: 'fails', description: 'fails', input: { text: 'what' }, handler: () => Promise.reject(new Error('disk full')) })
    .register({ name: 'hangs', description: 'hangs', input: { text: 'what' }, handler: () => NEVER })
    .register({ name: 'ticks', description: 'reports progress', input: { text: 'what' }, handler: () => of(toolProgress('1/2'), toolProgress('2/2'), 'ticked') });
  return tools.register(
    agentTool({
      name: 'agent',
      description: 'an inner loop',
      input: { text: 'what' },
      agent: (_input, context) => runEventedToolLoop({ provider: inner(), registry: tools, messages: [{ role: 'user', content: 'dig' }], signal: context.signal }),
    }),
  );
}

async function play(s: Scenario): Promise<{ loop: LoopEvent[]; agUi: AgUiEvent[] }> {
  const turns = s.turns.map(reply);
  // the script ends with a plain answer, so that a run of tools comes to an end
  turns.push([{ type: 'message_start' }, { type: 'text_delta', text: 'end' }, { type: 'message_end', stopReason: 'stop' }]);
  const controller = new AbortController();
  const loop: LoopEvent[] = [];
  let seen = 0;
  const decisions: Observable<ApprovalAnswer> =
    s.approve === 'at once'
      ? of(...s.turns.flatMap((t, n) => t.calls.map((_, i) => ({ toolCallId: `t${n}c${i}`, decision: true }))))
      : NEVER;
  const events$ = runEventedToolLoop({
    provider: scriptedProvider(turns),
    registry: registry(),
    messages: [{ role: 'user', content: 'go' }],
    signal: controller.signal,
    toolTimeoutMs: 30,
    ...(s.deny ? { beforeToolCall: (c) => (c.name === 'echo' ? { action: 'deny' as const, reason: 'no echo' } : undefined) } : {}),
    ...(s.approve !== 'none' ? { approvals: { needsApproval: (c) => c.name === 'send', decisions } } : {}),
  }).pipe(
    // an abort at the n-th event, in its emission (R11); what toAgUi was given is recorded right before it
    tap(() => {
      if (++seen === s.abortAt) controller.abort();
    }),
    tap((event) => loop.push(event)),
  );
  const agUi = await lastValueFrom(events$.pipe(toAgUi({ threadId: 'th', runId: () => 'run' }), toArray()));
  return { loop, agUi };
}

/**
 * The history the client should hold: the last one the loop handed out, as the view model keeps it (C4, R29
 * widened: at a turn's message_end it holds the whole assistant message, which an interrupt's run ends after).
 */
function lastHistory(loop: readonly LoopEvent[]): readonly AgentMessage[] {
  return loop.reduce(reduceViewModel, { ...initialViewModel, messages: [{ role: 'user', content: 'go' }] }).messages;
}

describe('toAgUi over generated runs (U1)', () => {
  it('U1: every generated stream passes verifyEvents and the event schemas, and its messages in the client are the loop’s history', async () => {
    const outcomes = new Set<string>();
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const { loop, agUi } = await play(s);
        await verified(agUi);
        const last = agUi.at(-1) as AgUiEvent;
        outcomes.add(last.type === 'RUN_FINISHED' ? (last.outcome?.type ?? 'none') : last.type);
        const history = lastHistory(loop);
        const client = await clientMessages(agUi, [{ id: 'u', role: 'user', content: 'go' }]);
        const parents = client.filter((m) => (m as { subagentRunId?: string }).subagentRunId === undefined);
        expect(fromAgUiMessages(parents)).toEqual(history);
      }),
      { numRuns: RUNS },
    );
    // the generator reaches every ending
    if (RUNS >= 100) expect([...outcomes].sort()).toEqual(['RUN_ERROR', 'cancelled', 'interrupt', 'success']);
  }, 120_000);
});
