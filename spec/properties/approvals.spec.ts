/**
 * H8 on generated runs: calls that need approval or not, decisions known before the run or answered later (true,
 * false, a deny, an answer, a rewritten input, no decision, an error, none at all), calls spread over the model's
 * stream, concurrency caps, a resumed turn 0, and a cancellation (unsubscribe or `signal`) at any frame. The
 * checks are written from the rule, not from the code: each `tool_approval` comes once, after its call is known
 * and before its `tool_start` and `tool_result`, only for a call that needs approval and had no decision at once;
 * every outcome is the one its decision makes (or `error: aborted` once the signal aborted); every history a
 * `tool_approval` hands out is one a provider takes once its waiting calls are answered (R29's shape); and no
 * subscription to `decisions` outlives the run. `PROPERTY_RUNS` sets the runs (default 300).
 */
import fc from 'fast-check';
import { NEVER, Observable, defer, finalize, map, merge, mergeMap, of, throwError, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { type AgentMessage, type ApprovalAnswer, type LoopEvent, type ToolCall, ToolRegistry, runEventedToolLoop } from '../../src/index.js';
import { historyProblem } from './support/history.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 300);

type Kind = 'true' | 'false' | 'deny' | 'answer' | 'rewrite' | 'garbage' | 'error' | 'none';
interface CallPlan {
  /** Frames after the previous event of the reply. */
  gap: number;
  tool: 'fast' | 'slow';
  needs: boolean;
  kind: Kind;
  /** -1: known before the run (answered at once); else frames after the call asked. */
  delay: number;
}
interface Plan {
  resumed: boolean;
  calls: CallPlan[];
  concurrency: number;
  cancel: { kind: 'none' } | { kind: 'unsubscribe' | 'signal'; at: number };
}

const callArb: fc.Arbitrary<CallPlan> = fc.record({
  gap: fc.integer({ min: 0, max: 3 }),
  tool: fc.constantFrom('fast' as const, 'slow' as const),
  needs: fc.boolean(),
  kind: fc.constantFrom<Kind>('true', 'false', 'deny', 'answer', 'rewrite', 'garbage', 'error', 'none'),
  delay: fc.integer({ min: -1, max: 8 }),
});
const planArb: fc.Arbitrary<Plan> = fc
  .record({
    resumed: fc.boolean(),
    calls: fc.array(callArb, { minLength: 1, maxLength: 4 }),
    concurrency: fc.constantFrom(1, 2, Infinity),
    cancel: fc.oneof(
      fc.constant({ kind: 'none' as const }),
      fc.record({ kind: fc.constantFrom('unsubscribe' as const, 'signal' as const), at: fc.integer({ min: 0, max: 30 }) }),
    ),
  })
  // a call that never gets a decision waits for good: such a run is ended by a cancellation
  .map((plan) => (plan.cancel.kind === 'none' && plan.calls.some((c) => c.needs && c.kind === 'none') ? { ...plan, cancel: { kind: 'signal' as const, at: 40 } } : plan));

const idOf = (index: number) => `c${index}`;

/** What the decision of `kind` makes of a call of `tool` (H2, H4, H8). */
function outcome(kind: Kind, tool: string): string | undefined {
  switch (kind) {
    case 'true':
      return `${tool} {"v":"1"}`;
    case 'rewrite':
      return `${tool} {"v":"2"}`;
    case 'false':
      return 'denied: not approved';
    case 'deny':
      return 'denied: no';
    case 'answer':
      return 'canned';
    case 'garbage':
      return 'error: approval failed: approval decision must be true, false or a ToolDecision (got "yes", a string)';
    case 'error':
      return 'error: approval failed: queue down';
    case 'none':
      return undefined; // it waits until the run is cancelled
  }
}

function answerOf(kind: Exclude<Kind, 'error' | 'none'>): ApprovalAnswer['decision'] {
  switch (kind) {
    case 'true':
      return true;
    case 'false':
      return false;
    case 'deny':
      return { action: 'deny', reason: 'no' };
    case 'answer':
      return { action: 'answer', output: 'canned' };
    case 'rewrite':
      return { action: 'run', input: { v: '2' } };
    case 'garbage':
      return 'yes' as never;
  }
}

interface Played {
  events: { frame: number; event: LoopEvent }[];
  ran: string[];
  /** Subscriptions to `decisions` still open once the run is over. */
  open: number;
}

function play(plan: Plan): Played {
  const events: Played['events'] = [];
  const ran: string[] = [];
  let open = 0;
  const scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
  scheduler.run(({ flush }) => {
    const echo = (name: string, after: number) => ({
      name,
      description: `the ${name} tool`,
      input: { v: 'a value' },
      handler: (input: Record<string, string>, context: { call: ToolCall }) => {
        ran.push(context.call.id);
        const text = `${name} ${JSON.stringify(input)}`;
        return after === 0 ? text : timer(after).pipe(map(() => text));
      },
    });
    const registry = new ToolRegistry().register(echo('fast', 0)).register(echo('slow', 3));
    const calls: ToolCall[] = plan.calls.map((c, i) => ({ id: idOf(i), name: c.tool, input: { v: '1' } }));
    // whose decisions a subscription is: needsApproval is asked right before the call subscribes them (H8)
    let asking = -1;
    const decisions = defer(() => {
      const index = asking;
      const c = plan.calls[index]!;
      const mine = (kind: Kind): Observable<ApprovalAnswer> =>
        kind === 'error' ? throwError(() => new Error('queue down')) : kind === 'none' ? NEVER : of({ toolCallId: idOf(index), decision: answerOf(kind) });
      // another call's answer comes first: only the first answer for the call's own id counts
      const other = of({ toolCallId: 'someone-else', decision: false });
      open++;
      return merge(other, c.delay < 0 ? mine(c.kind) : timer(c.delay + 1).pipe(mergeMap(() => mine(c.kind)))).pipe(finalize(() => open--));
    });
    const approvals = {
      needsApproval: (call: ToolCall) => {
        asking = Number(call.id.slice(1));
        return plan.calls[asking]!.needs;
      },
      decisions,
    };
    const ask: AgentMessage = { role: 'user', content: 'go' };
    // the reply: message_start at frame 1, each call `gap` frames after the event before it, then message_end
    const reply = (): Observable<never> =>
      new Observable<never>((subscriber) => {
        const sends: unknown[] = [{ type: 'message_start' }, ...calls.map((call) => ({ type: 'tool_call', call })), { type: 'message_end', stopReason: 'toolUse' }];
        let frame = 0;
        const timers = sends.map((event, i) => {
          frame += i === 0 || i === sends.length - 1 ? 1 : plan.calls[i - 1]!.gap;
          return timer(frame).subscribe(() => subscriber.next(event as never));
        });
        timers.push(timer(frame + 1).subscribe(() => subscriber.complete()));
        return () => timers.forEach((t) => t.unsubscribe());
      });
    let turns = 0;
    const provider = () => (turns++ === 0 && !plan.resumed ? reply() : of({ type: 'message_start' } as const, { type: 'message_end', stopReason: 'stop' } as const));
    const messages: AgentMessage[] = plan.resumed ? [ask, { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: calls }] : [ask];
    const controller = new AbortController();
    const subscription = runEventedToolLoop({
      provider,
      registry,
      messages,
      maxConcurrency: plan.concurrency,
      approvals,
      ...(plan.cancel.kind === 'signal' ? { signal: controller.signal } : {}),
    }).subscribe((event) => events.push({ frame: scheduler.now(), event }));
    const { cancel } = plan;
    if (cancel.kind === 'signal') timer(cancel.at).subscribe(() => controller.abort());
    if (cancel.kind === 'unsubscribe') timer(cancel.at).subscribe(() => subscription.unsubscribe());
    flush();
    subscription.unsubscribe();
  });
  return { events, ran, open };
}

/** What is wrong with a played run, by the rule (an empty list when nothing is). */
function problems(plan: Plan, { events, ran, open }: Played): string[] {
  const found: string[] = [];
  const aborted = events.find(({ event }) => event.type === 'loop_end' && event.reason === 'aborted')?.frame;
  const indexOf = (type: LoopEvent['type'], id: string) =>
    events.findIndex(({ event }) => event.type === type && (event.type === 'tool_result' ? event.message.toolCallId === id : 'call' in event && event.call.id === id));
  plan.calls.forEach((c, i) => {
    const id = idOf(i);
    const approvals = events.filter(({ event }) => event.type === 'tool_approval' && event.call.id === id);
    const known = plan.resumed ? events.findIndex(({ event }) => event.type === 'turn_start') : indexOf('tool_call', id);
    const start = indexOf('tool_start', id);
    const result = events.find(({ event }) => event.type === 'tool_result' && event.message.toolCallId === id);
    const resultAt = indexOf('tool_result', id);
    const asked = known >= 0 && (approvals.length > 0 || start >= 0 || (result !== undefined && result.event.type === 'tool_result' && result.event.message.content !== 'error: aborted'));
    // H8: the event, once, only for a call that needs approval and had no decision at once
    const waits = c.needs && (c.delay >= 0 || c.kind === 'none');
    if (approvals.length > 1) found.push(`${id}: ${approvals.length} tool_approval events`);
    if (approvals.length > 0 && !waits) found.push(`${id}: a tool_approval, but it ${c.needs ? 'had its decision at once' : 'needs no approval'}`);
    if (approvals.length === 0 && waits && asked) found.push(`${id}: waited for a decision without a tool_approval`);
    const at = events.indexOf(approvals[0]!);
    if (approvals.length > 0 && !(known < at && (start < 0 || at < start) && (resultAt < 0 || at < resultAt))) {
      found.push(`${id}: tool_approval (#${at}) not after its call is known (#${known}) and before its tool_start (#${start}) and tool_result (#${resultAt})`);
    }
    // the outcome its decision makes, or error: aborted once the signal aborted
    if (result?.event.type === 'tool_result') {
      const { content } = result.event.message;
      const wanted = c.needs ? outcome(c.kind, c.tool) : outcome('true', c.tool);
      if (content !== wanted && !(content === 'error: aborted' && aborted !== undefined && result.frame === aborted)) found.push(`${id}: result ${JSON.stringify(content)}, expected ${JSON.stringify(wanted)}`);
    } else if (plan.cancel.kind === 'none') found.push(`${id}: no tool_result in a run nobody cancelled`);
    // a handler runs only when the call was let run
    const runs = ran.filter((r) => r === id).length;
    const letRun = !c.needs || c.kind === 'true' || c.kind === 'rewrite';
    if (runs > 1 || (runs === 1 && !letRun)) found.push(`${id}: its handler ran ${runs} times`);
  });
  // R29's history at the moment: a provider takes it once the waiting calls are answered
  for (const { event } of events) {
    if (event.type !== 'tool_approval') continue;
    const problem = historyProblem(event.messages, { waiting: true, fields: true });
    if (problem !== undefined) found.push(`tool_approval ${event.call.id}: its messages are no history to save: ${problem}`);
  }
  if (open !== 0) found.push(`${open} subscriptions to decisions left open`);
  return found;
}

describe('approvals on generated runs (H8)', () => {
  it('H8, H1, R11, R29: tool_approval comes once, after the call is known and before it starts, for a call that waits; outcomes as decided; no decisions left subscribed', () => {
    fc.assert(
      fc.property(planArb, (plan) => {
        const played = play(plan);
        const found = problems(plan, played);
        if (found.length > 0) {
          throw new Error(`${found.join('\n')}\nevents:\n${played.events.map(({ frame, event }) => `  ${frame}: ${event.type}${'call' in event ? ` ${event.call.id}` : event.type === 'tool_result' ? ` ${event.message.toolCallId}: ${event.message.content}` : ''}`).join('\n')}`);
        }
      }),
      { numRuns: RUNS },
    );
  });
});
