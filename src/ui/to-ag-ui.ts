import { Observable, type OperatorFunction, type Subscriber } from 'rxjs';
import type { Event, EventType, Interrupt, TokenUsage } from '@ag-ui/core';
import type { ConversationEvent, LoopEvent, StopReason, ToolCall, Usage } from '../types.js';
import { HeldSubscriber } from '../util/held-subscriber.js';
import { errorText, shown } from '../util/values.js';
import { AG_UI_METADATA_KEY, agUiContent, resultNotes, type AgUiMessageNotes } from './ag-ui-messages.js';
import { ApprovalPause } from './approval-pause.js';
import { StreamedCalls, type CallStep } from './streamed-calls.js';

/** An AG-UI 1.0 event: the union of `@ag-ui/core`'s event types (a type only: the entry runs without the package). */
export type AgUiEvent = Event;

/** What {@link toAgUi} is told: the thread its runs belong to, and how to name each run (default: a random UUID). */
export interface ToAgUiOptions {
  threadId: string;
  runId?: () => string;
}

/**
 * The JSON Schema of the answer to a call's interrupt (`resume[].payload`): AG-UI's approve-with-edits pattern,
 * plus a `reason` for a denial. `fromAgUiInput` reads it as an H8 decision.
 */
export const APPROVAL_RESPONSE_SCHEMA = {
  type: 'object',
  properties: {
    approved: { type: 'boolean' },
    editedArgs: { type: 'object', description: 'Full replacement of the call input. Not merged.' },
    reason: { type: 'string', description: 'Why the call is denied (the model reads it).' },
  },
  required: ['approved'],
};

// @ag-ui/core's EventType is an enum, a value: the entry takes its types only, so each value is its string
const RUN_STARTED = 'RUN_STARTED' as EventType.RUN_STARTED;
const RUN_FINISHED = 'RUN_FINISHED' as EventType.RUN_FINISHED;
const RUN_ERROR = 'RUN_ERROR' as EventType.RUN_ERROR;
const STEP_STARTED = 'STEP_STARTED' as EventType.STEP_STARTED;
const STEP_FINISHED = 'STEP_FINISHED' as EventType.STEP_FINISHED;
const TEXT_MESSAGE_START = 'TEXT_MESSAGE_START' as EventType.TEXT_MESSAGE_START;
const TEXT_MESSAGE_CONTENT = 'TEXT_MESSAGE_CONTENT' as EventType.TEXT_MESSAGE_CONTENT;
const TEXT_MESSAGE_END = 'TEXT_MESSAGE_END' as EventType.TEXT_MESSAGE_END;
const REASONING_START = 'REASONING_START' as EventType.REASONING_START;
const REASONING_MESSAGE_START = 'REASONING_MESSAGE_START' as EventType.REASONING_MESSAGE_START;
const REASONING_MESSAGE_CONTENT = 'REASONING_MESSAGE_CONTENT' as EventType.REASONING_MESSAGE_CONTENT;
const REASONING_MESSAGE_END = 'REASONING_MESSAGE_END' as EventType.REASONING_MESSAGE_END;
const REASONING_END = 'REASONING_END' as EventType.REASONING_END;
const REASONING_ENCRYPTED_VALUE = 'REASONING_ENCRYPTED_VALUE' as EventType.REASONING_ENCRYPTED_VALUE;
const TOOL_CALL_START = 'TOOL_CALL_START' as EventType.TOOL_CALL_START;
const TOOL_CALL_ARGS = 'TOOL_CALL_ARGS' as EventType.TOOL_CALL_ARGS;
const TOOL_CALL_END = 'TOOL_CALL_END' as EventType.TOOL_CALL_END;
const TOOL_CALL_RESULT = 'TOOL_CALL_RESULT' as EventType.TOOL_CALL_RESULT;
const ACTIVITY_SNAPSHOT = 'ACTIVITY_SNAPSHOT' as EventType.ACTIVITY_SNAPSHOT;
const SUBAGENT_STARTED = 'SUBAGENT_STARTED' as EventType.SUBAGENT_STARTED;
const SUBAGENT_FINISHED = 'SUBAGENT_FINISHED' as EventType.SUBAGENT_FINISHED;
const SUBAGENT_ERROR = 'SUBAGENT_ERROR' as EventType.SUBAGENT_ERROR;

/**
 * One loop as AG-UI events: the run itself (no `subagentRunId`), or an agent tool's inner loop (A1), whose events
 * carry its `subagentRunId`. It keeps what is open (a step, a text or reasoning message, calls, inner loops) so
 * that everything opened is closed before the run or the subagent ends, as `verifyEvents` demands.
 */
class Lane {
  private step: string | undefined;
  private turn = 0;
  private assistantId: string | undefined;
  private textOpen = false;
  /** What the turn's assistant message was told at its end (its message_end, or the turn's); undefined before. */
  private sent: AgUiMessageNotes | undefined;
  private reasoningId: string | undefined;
  /** P9: the reply's streamed calls, what of each to start and send. */
  private readonly calls = new StreamedCalls();
  /** The order the calls started in (the client's order) and the order they came whole (the history's, R4). */
  private startOrder: string[] = [];
  private callOrder: string[] = [];
  private readonly inner = new Map<string, Lane>();
  /** A call's progress, one activity message per call (each update replaces it). */
  private readonly activities = new Map<string, string>();

  constructor(
    private readonly out: (event: AgUiEvent) => void,
    private readonly newId: () => string,
    readonly subagentRunId?: string,
  ) {}

  private emit(event: AgUiEvent): void {
    if (this.subagentRunId !== undefined) (event as { subagentRunId?: string }).subagentRunId = this.subagentRunId;
    this.out(event);
  }

  /** Maps one loop event. */
  next(event: LoopEvent): void {
    switch (event.type) {
      case 'turn_start':
        this.closeTurn();
        this.step = event.answer ? `turn ${event.turn} (answer)` : `turn ${event.turn}`;
        this.turn = event.turn;
        this.emit({ type: STEP_STARTED, stepName: this.step });
        this.assistantId = undefined;
        this.sent = undefined;
        return;
      case 'message_start':
        this.assistantId = this.newId();
        this.sent = undefined;
        this.startOrder = [];
        this.callOrder = [];
        return;
      case 'text_delta':
        this.closeReasoning();
        if (!this.textOpen) this.openText();
        this.emit({ type: TEXT_MESSAGE_CONTENT, messageId: this.assistant(), delta: event.text });
        return;
      case 'reasoning_delta':
        if (this.reasoningId === undefined) {
          this.reasoningId = this.newId();
          this.emit({ type: REASONING_START, messageId: this.reasoningId });
          this.emit({ type: REASONING_MESSAGE_START, messageId: this.reasoningId, role: 'reasoning' });
        }
        this.emit({ type: REASONING_MESSAGE_CONTENT, messageId: this.reasoningId, delta: event.text });
        return;
      case 'tool_call_delta': {
        this.closeReasoning();
        const step = this.calls.delta(event.index, event.id, event.name, event.argumentsDelta);
        if (step !== undefined) this.sendCall(step);
        return;
      }
      case 'tool_call':
        this.closeReasoning();
        this.endCall(event.call);
        return;
      case 'message_end':
        this.closeReasoning();
        this.closeCalls();
        this.finish(event);
        return;
      case 'tool_update':
        if (event.event !== undefined) this.innerEvent(event.toolCallId, event.toolName, event.event);
        else this.progress(event.toolCallId, event.toolName, event.content);
        return;
      case 'tool_result': {
        const message = event.message;
        this.closeInner(message.toolCallId, message.isError ? message.content : undefined);
        this.emit({
          type: TOOL_CALL_RESULT,
          messageId: this.newId(),
          toolCallId: this.callId(message.toolCallId),
          role: 'tool',
          content: agUiContent(message.content, message.attachments),
          metadata: { [AG_UI_METADATA_KEY]: resultNotes(message) },
        });
        return;
      }
      case 'turn_end':
      case 'loop_end':
        // the turn's assistant message as the history holds it (turn 0 has none): a reply cut before its end gets it
        // now, and one the loop judged otherwise than its message_end (an abort at that moment) is told again
        if (this.step !== undefined && this.turn !== 0) {
          if (this.sent === undefined) this.finish(event.assistant);
          else if (this.sent.stopReason !== event.assistant.stopReason || this.sent.errorMessage !== event.assistant.errorMessage) {
            this.openText();
            this.finish({ stopReason: event.assistant.stopReason, errorMessage: event.assistant.errorMessage });
          }
        }
        this.closeTurn();
        return;
      default:
        return;
    }
  }

  /** Closes all that is open: inner loops, the message and its calls, the step. */
  closeTurn(): void {
    for (const id of [...this.inner.keys()]) this.closeInner(id, 'aborted');
    this.closeReasoning();
    this.closeCalls();
    if (this.textOpen) {
      this.textOpen = false;
      this.emit({ type: TEXT_MESSAGE_END, messageId: this.assistant() });
    }
    if (this.step !== undefined) {
      this.emit({ type: STEP_FINISHED, stepName: this.step });
      this.step = undefined;
    }
  }

  // an inner loop's call ids are its own: two inner loops (or an inner and the outer one) may use the same, and the
  // protocol's are one space per run, so a subagent's carry its subagentRunId
  private callId(id: string): string {
    return this.subagentRunId === undefined ? id : `${this.subagentRunId}/${id}`;
  }

  private assistant(): string {
    return (this.assistantId ??= this.newId());
  }

  private openText(): void {
    this.textOpen = true;
    this.emit({ type: TEXT_MESSAGE_START, messageId: this.assistant(), role: 'assistant' });
  }

  /** A call's start, under the turn's assistant message, and its argument text. */
  private sendCall(step: CallStep): void {
    const toolCallId = this.callId(step.id);
    if (step.start !== undefined) {
      this.startOrder.push(step.id);
      this.emit({ type: TOOL_CALL_START, toolCallId, toolCallName: step.start.name, parentMessageId: this.assistant() });
    }
    if (step.text !== '') this.emit({ type: TOOL_CALL_ARGS, toolCallId, delta: step.text });
  }

  private endCall(done: ToolCall): void {
    const { step, args } = this.calls.whole(done);
    this.sendCall(step);
    this.callOrder.push(done.id);
    const notes = argumentsSay(args, done.input) ? undefined : { [AG_UI_METADATA_KEY]: { input: done.input } satisfies AgUiMessageNotes };
    const toolCallId = this.callId(done.id);
    this.emit(notes === undefined ? { type: TOOL_CALL_END, toolCallId } : { type: TOOL_CALL_END, toolCallId, metadata: notes });
  }

  // a call cut before its tool_call is closed as the protocol needs, and marked: it is not in the history
  private closeCalls(): void {
    for (const id of this.calls.clear()) {
      this.emit({ type: TOOL_CALL_END, toolCallId: this.callId(id), metadata: { [AG_UI_METADATA_KEY]: { incomplete: true } } });
    }
  }

  private closeReasoning(): void {
    if (this.reasoningId === undefined) return;
    this.emit({ type: REASONING_MESSAGE_END, messageId: this.reasoningId });
    this.emit({ type: REASONING_END, messageId: this.reasoningId });
    this.reasoningId = undefined;
  }

  /** The reply's end: its assistant message gets its stop reason (and P10's reasoning blocks), opened if it had no text. */
  private finish(assistant: { stopReason: StopReason; errorMessage?: string; reasoning?: unknown[] }): void {
    if (!this.textOpen) this.openText();
    const id = this.assistant();
    if (assistant.reasoning !== undefined) {
      this.emit({ type: REASONING_ENCRYPTED_VALUE, subtype: 'message', entityId: id, encryptedValue: JSON.stringify(assistant.reasoning) });
    }
    const notes: AgUiMessageNotes = { stopReason: assistant.stopReason };
    if (assistant.errorMessage !== undefined) notes.errorMessage = assistant.errorMessage;
    // a call that streamed before an earlier one came whole: the client holds them as they started
    const started = this.startOrder.filter((id) => this.callOrder.includes(id));
    if (started.some((id, i) => id !== this.callOrder[i])) notes.callOrder = this.callOrder;
    this.sent = notes;
    this.textOpen = false;
    this.emit({ type: TEXT_MESSAGE_END, messageId: id, metadata: { [AG_UI_METADATA_KEY]: notes } });
  }

  // R14: a tool's progress is an activity message of type `tool_progress`, its content replaced at each update
  private progress(toolCallId: string, toolName: string, content: string): void {
    let messageId = this.activities.get(toolCallId);
    if (messageId === undefined) this.activities.set(toolCallId, (messageId = this.newId()));
    this.emit({ type: ACTIVITY_SNAPSHOT, messageId, activityType: 'tool_progress', content: { toolCallId: this.callId(toolCallId), toolName, content } });
  }

  // A1: an agent tool's inner loop is a subagent of this lane, started at its first event
  private innerEvent(toolCallId: string, toolName: string, event: LoopEvent): void {
    let lane = this.inner.get(toolCallId);
    if (lane === undefined) {
      if (event.type === 'loop_end') return;
      lane = new Lane(this.out, this.newId, this.newId());
      this.inner.set(toolCallId, lane);
      const started: AgUiEvent = { type: SUBAGENT_STARTED, subagentRunId: lane.subagentRunId as string, name: toolName, parentToolCallId: this.callId(toolCallId) };
      if (this.subagentRunId !== undefined) started.parentSubagentRunId = this.subagentRunId;
      this.out(started);
    }
    lane.next(event);
    if (event.type === 'loop_end') {
      this.inner.delete(toolCallId);
      this.endInner(lane, event.reason === 'error' || event.reason === 'aborted' ? (event.assistant.errorMessage ?? event.reason) : undefined);
    }
  }

  private closeInner(toolCallId: string, error: string | undefined): void {
    const lane = this.inner.get(toolCallId);
    if (lane === undefined) return;
    this.inner.delete(toolCallId);
    lane.closeTurn();
    this.endInner(lane, error ?? 'aborted');
  }

  private endInner(lane: Lane, error: string | undefined): void {
    const subagentRunId = lane.subagentRunId as string;
    this.out(
      error === undefined
        ? { type: SUBAGENT_FINISHED, subagentRunId, outcome: { type: 'success' } }
        : { type: SUBAGENT_ERROR, subagentRunId, message: error },
    );
  }
}

// the streamed arguments say the input unless they parse to something else (a provider's repair, P9's empty arguments)
function argumentsSay(args: string, input: Record<string, unknown>): boolean {
  const expected = JSON.stringify(input);
  if (args === expected) return true;
  try {
    return JSON.stringify(JSON.parse(args)) === expected;
  } catch {
    return false;
  }
}

function tokenUsage(usage: Usage): TokenUsage[] {
  const counts: TokenUsage = {
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    totalTokens: usage.inputTokens + usage.outputTokens,
  };
  if (usage.cacheReadTokens !== undefined) counts.cachedInputTokens = usage.cacheReadTokens;
  if (usage.cacheWriteTokens !== undefined) counts.cacheWriteInputTokens = usage.cacheWriteTokens;
  return [counts];
}

/** The interrupt of a call that waits for a person (H8): AG-UI's `tool_call` reason, its id the call's. */
function interruptOf(call: ToolCall): Interrupt {
  return {
    id: call.id,
    reason: 'tool_call',
    toolCallId: call.id,
    message: `${call.name} ${JSON.stringify(call.input)}`,
    responseSchema: APPROVAL_RESPONSE_SCHEMA,
  };
}

function randomRunId(): string {
  return globalThis.crypto.randomUUID();
}

/**
 * A loop's or a conversation's events as AG-UI 1.0 events (U1): each loop one run, `RUN_STARTED` … `RUN_FINISHED`
 * (`outcome` `success`, `cancelled` for an aborted loop, `interrupt` for calls that wait for a person) or
 * `RUN_ERROR` (reason `error`, or the source's error); a turn a step (`turn N`); the reply's text a text message and
 * its reasoning a reasoning message (start, content, end); calls as `TOOL_CALL_START` / `TOOL_CALL_ARGS` (from
 * `tool_call_delta`, or the whole input at `tool_call`) / `TOOL_CALL_END` / `TOOL_CALL_RESULT`; the loop's usage,
 * cache counts included, on the run's last event; an agent tool's inner loop as a subagent (`SUBAGENT_STARTED`, its
 * events with its `subagentRunId`, `SUBAGENT_FINISHED` or `SUBAGENT_ERROR`). A `user_message` opens the next run
 * (it is that run's prompt) as a user text message; a tool's progress (R14) is an activity message of type
 * `tool_progress` (`{ toolCallId, toolName, content }`, replaced at each update); `prompt_dropped` has no AG-UI event.
 * What AG-UI has no field for rides `metadata['rx-tool-loop']`, so that a client's messages, read by
 * `fromAgUiMessages`, are the loop's history.
 *
 * H8 in two requests: once a call waits for a person (`tool_approval`), the reply is over and no call runs, the run
 * ends with an `interrupt` per waiting call (id: the call's id, reason `tool_call`) and the output completes, which
 * unsubscribes the loop at once; `fromAgUiInput` turns the next request's `resume` into the loop's `decisions`.
 *
 * ```text
 * loop:    1---s---t---e---E---L|      turn_start 1, message_start, text_delta, message_end, turn_end, loop_end
 * toAgUi:  (RS)----(TC)D---F---Z|      RUN_STARTED, STEP_STARTED; TEXT_MESSAGE_START, _CONTENT; _END; STEP_FINISHED; RUN_FINISHED
 *
 * loop:    1---s---c-------u---W---    ... a call (c), message_end toolUse (u), the call waits (W)
 * toAgUi:  (RS)----(OPN)---(TU)(FI|)   TOOL_CALL_START, _ARGS, _END; the message ends; STEP_FINISHED, RUN_FINISHED interrupt
 * loop:    ^-------------------!       unsubscribed at the interrupt
 * ```
 *
 * ```ts
 * const run = fromAgUiInput(input); // the request's RunAgentInput
 * const events$ = runEventedToolLoop({ provider, registry, messages: run.messages });
 * writeSse(response, events$.pipe(toAgUi({ threadId: run.threadId, runId: () => run.runId })));
 * ```
 */
export function toAgUi(options: ToAgUiOptions): OperatorFunction<ConversationEvent, AgUiEvent> {
  if (options === null || typeof options !== 'object') throw new TypeError(`toAgUi: options must be an object, got ${shown(options)}`);
  const { threadId, runId = randomRunId } = options;
  if (typeof threadId !== 'string' || threadId === '') throw new TypeError(`toAgUi: threadId must be a non-empty string, got ${shown(threadId)}`);
  if (typeof runId !== 'function') throw new TypeError(`toAgUi: runId must be a function that returns a string, got ${shown(runId)}`);

  return (source) =>
    new Observable<AgUiEvent>((subscriber: Subscriber<AgUiEvent>) => {
      const out = (event: AgUiEvent) => subscriber.next(event);
      let run: string | undefined;
      let count = 0;
      let lane: Lane | undefined;
      const pause = new ApprovalPause(); // H8's two requests: where a run ends in an interrupt, with the loop's usage then
      const newId = () => `${run}-${++count}`;
      const start = (): Lane => {
        if (lane !== undefined) return lane;
        run = runId();
        if (typeof run !== 'string' || run === '') throw new TypeError(`toAgUi: runId() must return a non-empty string, got ${shown(run)}`);
        count = 0;
        out({ type: RUN_STARTED, threadId, runId: run });
        return (lane = new Lane(out, newId));
      };
      const end = (last: AgUiEvent) => {
        lane?.closeTurn();
        lane = undefined;
        out(last);
      };
      // held before it subscribes: an interrupt closes the loop at once, also within its synchronous start (C3)
      const upstream = new HeldSubscriber<ConversationEvent>({
        next(event) {
          try {
            if (event.type === 'prompt_dropped') return;
            const current = start();
            if (event.type === 'user_message') {
              const messageId = newId();
              out({ type: TEXT_MESSAGE_START, messageId, role: 'user' });
              if (event.message.content !== '') out({ type: TEXT_MESSAGE_CONTENT, messageId, delta: event.message.content });
              out({ type: TEXT_MESSAGE_END, messageId });
              return;
            }
            current.next(event);
            const paused = pause.see(event);
            if (event.type === 'loop_end') {
              const usage = tokenUsage(event.usage);
              if (event.reason === 'error') {
                end({ type: RUN_ERROR, message: event.assistant.errorMessage ?? 'error', usage });
              } else {
                const finished: AgUiEvent = { type: RUN_FINISHED, threadId, runId: run as string, usage };
                finished.outcome = event.reason === 'aborted' ? { type: 'cancelled' } : { type: 'success' };
                if (event.output !== undefined && event.reason !== 'aborted') finished.result = event.output;
                end(finished);
              }
            } else if (paused) {
              const interrupts = [...pause.waiting.values()].map(interruptOf);
              upstream.unsubscribe();
              end({ type: RUN_FINISHED, threadId, runId: run as string, usage: tokenUsage(pause.usage), outcome: { type: 'interrupt', interrupts } });
              subscriber.complete();
            }
          } catch (error) {
            upstream.unsubscribe();
            subscriber.error(error);
          }
        },
        error(error: unknown) {
          if (lane === undefined) start();
          end({ type: RUN_ERROR, message: errorText(error) });
          subscriber.complete();
        },
        complete() {
          // the source ended without a loop_end (taken until something): whoever ran it stopped it
          if (lane !== undefined) end({ type: RUN_FINISHED, threadId, runId: run as string, outcome: { type: 'cancelled' } });
          subscriber.complete();
        },
      });
      subscriber.add(upstream);
      source.subscribe(upstream);
    });
}
