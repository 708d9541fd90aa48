/**
 * U2 over generated runs (fast-check; `PROPERTY_RUNS=N` sets the runs, default 60): text, reasoning, streamed and
 * parallel calls, tools that fail, unknown tools, calls a hook denies, agent tools, provider errors, aborts at any event,
 * calls that wait for approval (H8), with the calls behind them in a full set of slots, answered over as many
 * requests as useChat makes. Every chunk passes `ai`'s
 * `uiMessageChunkSchema`; `readUIMessageStream`, continuing the message from request to request as useChat does,
 * rebuilds a message whose steps are the loop's turns: the text, the reasoning, each call with its input and result.
 */
import fc from 'fast-check';
import { EMPTY, lastValueFrom, tap, toArray } from 'rxjs';
import type { UIMessage, UIMessageChunk } from 'ai';
import { agentTool, runEventedToolLoop, scriptedProvider, ToolRegistry } from '../../src/index.js';
import type { AgentMessage, ApprovalAnswer, LoopEvent, Provider, ProviderEvent } from '../../src/index.js';
import { fromUiMessages, toUiMessageStream } from '../../src/ui/index.js';
import { invalidChunks, rebuild, stepsOfHistory, stepsOfMessage } from './support/ui-stream.js';

const RUNS = Number(process.env['PROPERTY_RUNS'] ?? 60);

type Kind = 'ok' | 'fails' | 'unknown' | 'blocked' | 'agent' | 'guarded';
interface CallGen { kind: Kind; city: string; streamed: boolean }
interface TurnGen { reasoning: string; texts: string[]; calls: CallGen[]; error: boolean }
type Answer = true | false | { action: 'deny'; reason: string };
interface RunGen { turns: TurnGen[]; abortAt: number | undefined; answers: Answer[]; maxConcurrency: number | undefined }

const word = fc.stringMatching(/^[a-zé ]{1,8}$/);
const callGen: fc.Arbitrary<CallGen> = fc.record({ kind: fc.constantFrom<Kind>('ok', 'fails', 'unknown', 'blocked', 'agent', 'guarded'), city: word, streamed: fc.boolean() });
const turnGen: fc.Arbitrary<TurnGen> = fc.record({
  reasoning: fc.oneof(fc.constant(''), word),
  texts: fc.array(word, { maxLength: 3 }),
  calls: fc.array(callGen, { maxLength: 3 }),
  error: fc.nat(7).map((n) => n === 0), // about one turn in eight: the API fails
});
const runGen: fc.Arbitrary<RunGen> = fc.record({
  turns: fc.array(turnGen, { minLength: 1, maxLength: 4 }),
  abortAt: fc.option(fc.nat(30), { nil: undefined, freq: 4 }),
  // a call that waits holds its slot: with one or two slots, the calls after it wait to start (H8)
  maxConcurrency: fc.constantFrom(undefined, 1, 2),
  answers: fc.array(fc.oneof(fc.constant<Answer>(true), fc.constant<Answer>(false), word.map((reason): Answer => ({ action: 'deny', reason }))), { minLength: 12, maxLength: 12 }),
});

const NAMES: Record<Kind, string> = { ok: 'weather', fails: 'broken', unknown: 'nowhere', blocked: 'blocked', agent: 'research', guarded: 'guarded' };

/** The model: turn N of the script is its answer to a history with N assistant messages, so that every request goes on where the last stopped. */
function providerOf(run: RunGen): Provider {
  return (input) => {
    const n = input.messages.filter((m) => m.role === 'assistant').length;
    const turn = run.turns[n];
    const events: ProviderEvent[] = [{ type: 'message_start' }];
    if (turn === undefined) return scriptedProvider([[...events, { type: 'text_delta', text: 'done' }, { type: 'message_end', stopReason: 'stop' }]])(input);
    if (turn.reasoning !== '') events.push({ type: 'reasoning_delta', text: turn.reasoning });
    for (const text of turn.texts) events.push({ type: 'text_delta', text });
    const reasoning = turn.reasoning === '' ? {} : { reasoning: [{ type: 'thinking', thinking: turn.reasoning }] };
    if (turn.error) return scriptedProvider([[...events, { type: 'message_end', stopReason: 'error', errorMessage: 'overloaded', ...reasoning }]])(input);
    turn.calls.forEach((call, index) => {
      const id = `c${n}_${index}`;
      const name = NAMES[call.kind];
      if (call.streamed) events.push({ type: 'tool_call_delta', index, id, name, argumentsDelta: '{"city":' }, { type: 'tool_call_delta', index, argumentsDelta: JSON.stringify(call.city) + '}' });
      events.push({ type: 'tool_call', call: { id, name, input: { city: call.city } } });
    });
    events.push({ type: 'message_end', stopReason: turn.calls.length > 0 ? 'toolUse' : 'stop', usage: { inputTokens: 3, outputTokens: 2 }, ...reasoning });
    return scriptedProvider([events])(input);
  };
}

const inner = () => scriptedProvider([[{ type: 'message_start' }, { type: 'text_delta', text: 'inner answer' }, { type: 'message_end', stopReason: 'stop' }]]);
const registry = new ToolRegistry()
  .register({ name: 'weather', description: 'w', input: { city: 'c' }, handler: ({ city }) => `sunny in ${city}` })
  .register({ name: 'guarded', description: 'g', input: { city: 'c' }, handler: ({ city }) => `opened ${city}` })
  .register({ name: 'blocked', description: 'b', input: { city: 'c' }, handler: () => 'never' })
  .register({ name: 'broken', description: 'x', input: { city: 'c' }, handler: () => Promise.reject(new Error('kaput')) })
  .register(agentTool({ name: 'research', description: 'r', input: { city: 'c' }, agent: ({ city }) => runEventedToolLoop({ provider: inner(), registry: new ToolRegistry(), messages: [{ role: 'user', content: String(city) }] }) }));

/** What useChat's addToolApprovalResponse does to each part that waits: the person's answer, on the part. */
function answered(message: UIMessage, answers: Answer[]): UIMessage {
  const parts = message.parts.map((part) => {
    const p = part as Record<string, unknown>;
    if (p['state'] !== 'approval-requested') return part;
    const answer = answers.shift() ?? true;
    const approval = { id: (p['approval'] as { id: string }).id, approved: answer === true, ...(typeof answer === 'object' ? { reason: answer.reason } : {}) };
    return { ...p, state: 'approval-responded', approval } as unknown as UIMessage['parts'][number];
  });
  return { ...message, parts };
}

describe('toUiMessageStream over generated runs (U2)', () => {
  /** What the runs covered: a property that never resumed an approval would prove little. */
  const covered = { resumed: 0, aborted: 0, failed: 0 };

  afterAll(() => {
    if (RUNS >= 30) expect(Math.min(covered.resumed, covered.aborted, covered.failed)).toBeGreaterThan(0);
  });

  it('U2: every chunk passes uiMessageChunkSchema and readUIMessageStream rebuilds the loop\'s history, request after request (H8)', async () => {
    await fc.assert(
      fc.asyncProperty(runGen, async (run) => {
        const user: UIMessage = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'go' }] };
        const answers = [...run.answers];
        let message: UIMessage | undefined;
        let ended: (LoopEvent & { type: 'loop_end' }) | undefined;
        for (let request = 0; request < 8 && ended === undefined; request++) {
          const { messages, decisions } = fromUiMessages(message === undefined ? [user] : [user, message]);
          const controller = new AbortController();
          let seen = 0;
          const events: LoopEvent[] = [];
          const chunks: UIMessageChunk[] = await lastValueFrom(
            runEventedToolLoop({
              provider: providerOf(run),
              registry,
              messages,
              signal: controller.signal,
              ...(run.maxConcurrency === undefined ? {} : { maxConcurrency: run.maxConcurrency }),
              beforeToolCall: (call) => (call.name === 'blocked' ? { action: 'deny', reason: 'not allowed' } : undefined),
              approvals: { needsApproval: (call) => call.name === 'guarded', decisions: request === 0 ? EMPTY : decisions },
            }).pipe(
              tap((event) => {
                events.push(event);
                if (request === 0 && ++seen === run.abortAt) controller.abort();
              }),
              toUiMessageStream(),
              toArray(),
            ),
          );
          expect(await invalidChunks(chunks)).toEqual([]);
          message = await rebuild(chunks, message);
          const last = events[events.length - 1];
          if (last?.type === 'loop_end') ended = last;
          else {
            // stopped at approvals: every call of the message is settled or waits; the answers go in the next request
            expect(chunks[chunks.length - 1]).toMatchObject({ type: 'finish', finishReason: 'tool-calls' });
            expect(message.parts.some((p) => (p as { state?: string }).state === 'approval-requested')).toBe(true);
            message = answered(message, answers);
            covered.resumed++;
          }
        }
        expect(ended).toBeDefined();
        if (ended!.reason === 'aborted') covered.aborted++;
        if (ended!.reason === 'error') covered.failed++;
        const shown = stepsOfMessage(message!);
        // an aborted reply's reasoning streamed to the page, but the history keeps the API's blocks, which come at its end (P10)
        const held = stepsOfHistory(ended!.messages, 1);
        if (ended!.reason === 'aborted' && shown.length > 0 && held.length > 0) shown[shown.length - 1]!.reasoning = held[held.length - 1]!.reasoning = '';
        expect(shown).toEqual(held);
        // and useChat's next request carries that history back (a result's details stay on the server)
        const carried = ended!.messages.map((m): AgentMessage => {
          if (m.role === 'toolResult') {
            const { details: _details, ...rest } = m;
            return rest;
          }
          if (m.role === 'assistant') {
            const { content, toolCalls, reasoning } = m;
            return { role: 'assistant', content, stopReason: toolCalls === undefined ? 'stop' : 'toolUse', ...(toolCalls === undefined ? {} : { toolCalls }), ...(reasoning === undefined ? {} : { reasoning }) };
          }
          return m;
        });
        const back = fromUiMessages([user, message!]);
        expect(back.messages).toEqual(carried);
        const none: ApprovalAnswer[] = await lastValueFrom(back.decisions.pipe(toArray()));
        expect(none).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  }, 120_000);
});
