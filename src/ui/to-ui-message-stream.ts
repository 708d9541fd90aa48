import { Observable } from 'rxjs';
import type { OperatorFunction, Subscriber } from 'rxjs';
import type { JSONValue, UIMessageChunk } from 'ai';
import { copyUsage } from '../loop/usage.js';
import { ApprovalPause } from './approval-pause.js';
import { StreamedCalls } from './streamed-calls.js';
import type { ConversationEvent, LoopEndReason, Usage } from '../types.js';
import { HeldSubscriber } from '../util/held-subscriber.js';
import { errorText, isPlainObject, shown } from '../util/values.js';

/** U2: what `toUiMessageStream` puts in a message's metadata: the loop's token counts so far (R27). */
export interface UiMessageMetadata {
  usage: Usage;
}

/** U2: `toUiMessageStream`'s options. */
export interface UiMessageStreamOptions {
  /** The id of each message the stream starts (the `start` chunk's `messageId`); without it, the client picks one. */
  messageId?: () => string;
}

/** P10: where a reasoning part keeps the API's reasoning blocks (its `providerMetadata` key); `fromUiMessages` reads it. */
export const REASONING_KEY = 'rxToolLoop';

/** The AI SDK's finish reason for each way a loop ends (`aborted` is an `abort` chunk, not a finish). */
const FINISH_REASON: Record<Exclude<LoopEndReason, 'aborted'>, 'stop' | 'tool-calls' | 'length' | 'error' | 'other'> = {
  stop: 'stop',
  toolUse: 'tool-calls',
  length: 'length',
  error: 'error',
  maxTurns: 'other',
  terminated: 'other',
  budget: 'other',
};

/**
 * U2: a loop's or a conversation's events as the AI SDK's UI message stream (v1), the chunks `useChat` reads
 * (`ai`'s `UIMessageChunk`; `writeSse` puts them on the wire). One loop is one assistant message: `start` at its
 * first `turn_start`, `start-step` / `finish-step` around each turn (but turn 0, whose results belong to the saved step, R22), one text part and
 * one reasoning part a turn (`text-start` / `-delta` / `-end`, `reasoning-*`, closed at the reply's `message_end`; the
 * API's reasoning blocks, P10, ride on the reasoning part's `providerMetadata.rxToolLoop`),
 * each call as `tool-input-start` / `-delta` (from `tool_call_delta`) and `tool-input-available` (its `tool_call`),
 * its result as `tool-output-available` (the result's text) or `tool-output-error` (an `isError` result: a failure,
 * a denial), and its `tool_update`s — an agent tool's inner events among them, as their one line — as preliminary
 * outputs (`preliminary: true`), so the rebuilt message holds what the history holds and nothing else. The end:
 * `finish` with the loop's finish reason, `abort` for an aborted loop, `error` then `finish` for a provider's
 * error; the loop's usage goes with it as message metadata (`{ usage }`, {@link UiMessageMetadata}). `user_message`
 * and `prompt_dropped` send nothing: the client has its prompt. A conversation's next loop is a message of its own
 * (`start` again, with the next `messageId()`); `useChat` itself makes one request a run.
 *
 * H8, the two-request model of `useChat`: a `tool_approval` is a `tool-approval-request` (its `approvalId` is the
 * call's id). Once a call waits for a person and no tool of the turn runs (the others have their results, or have not
 * started: the next request's turn 0 runs them), the message ends there (`finish`, `tool-calls`) and the stream completes, which unsubscribes the loop: the client's answer comes with its next
 * request, which {@link fromUiMessages} turns into the history and the decisions of the run that resumes the calls.
 * An error of the source is an `error` chunk, and the stream completes.
 *
 * ```text
 * provider: -s----h----a----u|          s message_start, h text_delta "Hi", a tool_call a, u message_end toolUse
 * tool a:              --p------(R|)     p toolProgress "50%", R "sunny"
 * turn 2:                        -s----t----e|   t text_delta "Sunny.", e message_end stop
 * chunks:   (SP)--(Th)-A-p--D---(OFP)-(Ut)-E(Ff|)
 *   S start, P start-step, T text-start, h text-delta "Hi", A tool-input-available a, p tool-output-available "50%"
 *   (preliminary), D text-end, O tool-output-available "sunny", F finish-step, U text-start, t text-delta "Sunny.",
 *   E text-end, f finish stop { usage }
 * ```
 * (spec/ui/to-ui-message-stream.spec.ts)
 *
 * ```ts
 * // node:http: one request, one run, one SSE response that useChat reads
 * const { messages, decisions } = fromUiMessages(body.messages);
 * const events$ = runEventedToolLoop({ provider, registry, messages, approvals: { needsApproval, decisions } });
 * writeSse(response, events$.pipe(toUiMessageStream()), { protocol: 'ui-message-stream' });
 * ```
 */
export function toUiMessageStream(options?: UiMessageStreamOptions): OperatorFunction<ConversationEvent, UIMessageChunk> {
  const given: unknown = options;
  if (given !== undefined && !isPlainObject(given)) throw new TypeError(`toUiMessageStream: options must be an object (got ${shown(given)})`);
  const messageId = options?.messageId;
  if (messageId !== undefined && typeof messageId !== 'function') {
    throw new TypeError(`toUiMessageStream: options.messageId must be a function that returns an id (got ${shown(messageId)})`);
  }
  return (source) =>
    new Observable<UIMessageChunk>((subscriber) => {
      const chunks = new UiChunks(subscriber, messageId);
      // held before it subscribes: a message that ends at an approval closes a synchronous loop at once (C3)
      const events = new HeldSubscriber<ConversationEvent>({
        next(event) {
          // an error of our own (a messageId() that throws) is the consumer's to hear, not the source's
          try {
            chunks.next(event);
          } catch (error) {
            events.unsubscribe();
            subscriber.error(error);
          }
        },
        error: (error: unknown) => chunks.fail(error),
        complete: () => subscriber.complete(),
      });
      subscriber.add(events);
      source.subscribe(events);
    });
}

/** One stream's state: where the message and the turn are, and which calls are open. */
class UiChunks {
  private started = false;
  private parts = 0; // numbers the text and reasoning parts of the stream
  private text: string | undefined; // the open text part's id
  private reasoning: string | undefined;
  /** P9: the turn's streamed calls, what of each to start and send. */
  private readonly streamed = new StreamedCalls();
  /** H8: whether the message ends at a call that waits for a person (the next request goes on), and the loop's usage then. */
  private readonly pause = new ApprovalPause();
  private turn = -1;

  constructor(
    private readonly out: Subscriber<UIMessageChunk>,
    private readonly messageId: (() => string) | undefined,
  ) {}

  next(event: ConversationEvent): void {
    this.map(event);
    if (this.pause.see(event)) this.endAtApproval();
  }

  private map(event: ConversationEvent): void {
    const out = this.out;
    switch (event.type) {
      case 'turn_start':
        this.start();
        this.streamed.clear();
        this.turn = event.turn;
        // turn 0 brings the results of the saved turn's calls: they belong to the step that asked for them
        if (event.turn !== 0) out.next({ type: 'start-step' });
        return;
      case 'text_delta': {
        if (event.text === '') return;
        let id = this.text;
        if (id === undefined) {
          id = this.text = `text-${++this.parts}`;
          out.next({ type: 'text-start', id });
        }
        out.next({ type: 'text-delta', id, delta: event.text });
        return;
      }
      case 'reasoning_delta': {
        if (event.text === '') return;
        let id = this.reasoning;
        if (id === undefined) {
          id = this.reasoning = `reasoning-${++this.parts}`;
          out.next({ type: 'reasoning-start', id });
        }
        out.next({ type: 'reasoning-delta', id, delta: event.text });
        return;
      }
      case 'tool_call_delta': {
        // a call's part starts once its id and name are known, with the arguments that came before
        const step = this.streamed.delta(event.index, event.id, event.name, event.argumentsDelta);
        if (step?.start !== undefined) out.next({ type: 'tool-input-start', toolCallId: step.id, toolName: step.start.name });
        if (step !== undefined && step.text !== '') out.next({ type: 'tool-input-delta', toolCallId: step.id, inputTextDelta: step.text });
        return;
      }
      case 'tool_call':
        out.next({ type: 'tool-input-available', toolCallId: event.call.id, toolName: event.call.name, input: event.call.input });
        return;
      case 'message_end':
        this.closeParts(event.reasoning);
        return;
      case 'tool_approval':
        out.next({ type: 'tool-approval-request', approvalId: event.call.id, toolCallId: event.call.id });
        return;
      case 'tool_start':
        return;
      case 'tool_update':
        out.next({ type: 'tool-output-available', toolCallId: event.toolCallId, output: event.content, preliminary: true });
        return;
      case 'tool_result': {
        const { toolCallId, content, isError } = event.message;
        out.next(isError ? { type: 'tool-output-error', toolCallId, errorText: content } : { type: 'tool-output-available', toolCallId, output: content });
        return;
      }
      case 'turn_end':
        this.closeParts();
        if (event.turn !== 0) out.next({ type: 'finish-step' });
        return;
      case 'loop_end':
        this.start();
        this.closeParts();
        this.finish(event.reason, event.assistant.errorMessage, event.usage);
        return;
      default:
        return; // message_start, user_message, prompt_dropped: nothing the client needs
    }
  }

  /** The source failed: the client is told, and the stream ends. */
  fail(error: unknown): void {
    this.out.next({ type: 'error', errorText: errorText(error) });
    this.out.complete();
  }

  private start(): void {
    if (this.started) return;
    this.started = true;
    const id = this.messageId?.();
    this.out.next(id === undefined ? { type: 'start' } : { type: 'start', messageId: id });
  }

  /**
   * Ends the turn's open parts. P10: the API's reasoning blocks (opaque, sent back as they came) ride on the reasoning
   * part's `providerMetadata`, so that `fromUiMessages` gives them back to the next request's history.
   */
  private closeParts(blocks?: unknown[]): void {
    if (this.text !== undefined) this.out.next({ type: 'text-end', id: this.text });
    if (blocks !== undefined && blocks.length > 0) {
      if (this.reasoning === undefined) this.out.next({ type: 'reasoning-start', id: (this.reasoning = `reasoning-${++this.parts}`) });
      this.out.next({ type: 'reasoning-end', id: this.reasoning, providerMetadata: { [REASONING_KEY]: { reasoning: blocks as JSONValue[] } } });
    } else if (this.reasoning !== undefined) this.out.next({ type: 'reasoning-end', id: this.reasoning });
    this.text = this.reasoning = undefined;
  }

  /** H8, two requests: a call waits for a person and nothing of the turn runs (ApprovalPause): the message ends here. */
  private endAtApproval(): void {
    this.closeParts();
    if (this.turn !== 0) this.out.next({ type: 'finish-step' });
    this.finish('toolUse', undefined, this.pause.usage);
    this.out.complete();
  }

  private finish(reason: LoopEndReason, error: string | undefined, usage: Usage): void {
    const messageMetadata: UiMessageMetadata = { usage: copyUsage(usage) };
    this.started = false; // a conversation's next loop is a message of its own
    if (reason === 'aborted') {
      this.out.next({ type: 'message-metadata', messageMetadata });
      this.out.next(error === undefined ? { type: 'abort' } : { type: 'abort', reason: error });
      return;
    }
    if (reason === 'error') this.out.next({ type: 'error', errorText: error ?? 'error' });
    this.out.next({ type: 'finish', finishReason: FINISH_REASON[reason], messageMetadata });
  }
}
