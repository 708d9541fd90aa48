import type { OperatorFunction } from 'rxjs';
import { settled, type ToolSettled } from '../tools/tool-outcome.js';
import { abortedResult, limitOutput } from '../tools/tool-result.js';
import type { AgentMessage, AssistantMessage, Compaction, LoopEvent, LoopEventOf, ToolCall, ToolResultMessage, Usage } from '../types.js';
import { onAbort } from '../util/abort-signal.js';
import type { LoopSettings } from './loop-options.js';
import { type Reply, assistantMessage } from './reply.js';
import { type BeginPart, type CallPart, type TurnOutcome, type TurnPart, withOutcome } from './turn-parts.js';
import { type PhaseOut, PhaseSubscriber, phaseOperator } from './turn-phase.js';
import { NO_USAGE, addUsage, copyUsage } from './usage.js';

/**
 * The turn's last phase: the loop's events out of the turn's parts — `turn_start`, the provider's events
 * and the tools' progress as they come, each result as `tool_result` with the history to save at that
 * moment (R29), and last `turn_end`, the history after the turn (R4: the assistant message, then one
 * result per call in call order, whatever order the tools finished in), which carries the turn's outcome
 * (R30). The loop's `signal` ends the turn (R11): it unsubscribes the phases before it — the provider call
 * and every tool stop — and the calls without a result get `error: aborted`.
 *
 * ```text
 * parts:     b-s-C-(Sr)-e|        b = begin, C = call, S = tool_start, r = settled, e = message_end
 * draftTurn: T-s-c-(SR)-e(E|)     T = turn_start, c = tool_call, R = tool_result, E = turn_end
 * parts:     b-s-C-S--            the signal aborts at frame 6
 * draftTurn: T-s-c-S-(RE|)        R = tool_result 'error: aborted'
 * ```
 * (spec/loop/draft-turn.spec.ts)
 */
export function draftTurn(loop: LoopSettings): OperatorFunction<TurnPart, LoopEvent> {
  return phaseOperator((into: PhaseOut<LoopEvent>, fused: boolean) => new Drafting(into, fused, loop));
}

/**
 * The subscriber draftTurn puts on its parts: the turn's draft, and when the turn ends (a class rather
 * than a closure: an object a turn instead of a dozen functions, bench W1). Joins `out` (or, fused, is held
 * by it), so that unsubscribing downstream closes the phases before it at once, also during their
 * synchronous start (C3).
 */
class Drafting extends PhaseSubscriber<TurnPart, LoopEvent> {
  private draft: TurnDraft | undefined;
  private ended = false;
  private stopListening: (() => void) | undefined;
  // A consumer may abort while an event is being delivered to it (in a `tap`, say). The turn then
  // ends once that delivery is over, so that its last events do not overtake the one in flight.
  private delivering = 0;
  private endWanted = false;

  constructor(
    out: PhaseOut<LoopEvent>,
    fused: boolean,
    private readonly loop: LoopSettings,
  ) {
    super(out, fused);
  }

  override next(part: TurnPart): void {
    if (this.isStopped) return;
    const { draft } = this;
    // the most frequent part first: a reply is mostly text
    if (part.type === 'text_delta') {
      draft!.changed();
      return this.emit(part);
    }
    switch (part.type) {
      case 'begin':
        return this.begin(part);
      case 'call':
        // the call takes its slot before anyone hears of it: an abort during its delivery still answers it
        draft!.addCall(part);
        if (part.event !== undefined) this.emit(part.event);
        return;
      case 'settled':
        draft!.settle(part.index, part);
        this.emit(draft!.resultEvent(part.message)); // R29: it carries the history to save at this result
        return;
      case 'waiting':
        draft!.unasked = true; // H6: prepareTurn has not answered yet
        return;
      case 'asked':
        draft!.unasked = false;
        draft!.compaction = part.compaction;
        return;
      case 'failed':
        draft!.unasked = false;
        draft!.changed();
        return;
      case 'tool_start':
      case 'tool_update':
        return this.emit(part);
      case 'approval':
        return this.emit(draft!.approvalEvent(part.call)); // H8: the history to save while it waits, as R29's
      default:
        draft!.changed();
        this.emit(part);
    }
  }

  protected override _complete(): void {
    this.end();
  }

  override unsubscribe(): void {
    this.unlisten();
    super.unsubscribe();
  }

  private begin({ request, reply, resume }: BeginPart): void {
    const draft = (this.draft = new TurnDraft(request.turn, request.history, reply, request.usage, this.loop.maxToolOutputChars));
    this.emit(request.output === undefined ? { type: 'turn_start', turn: request.turn } : { type: 'turn_start', turn: request.turn, answer: true });
    if (this.out.closed) return; // the consumer left at turn_start
    if (resume !== undefined) draft.resume(resume.assistant, resume.calls); // R22: turn 0 finishes the saved message
    const { signal } = this.loop;
    if (signal !== undefined) this.stopListening = onAbort(signal, () => this.abort());
  }

  private emit(event: LoopEvent): void {
    this.delivering++;
    try {
      this.out.next(event);
    } finally {
      // also when the delivery threw (a provider event's getter read downstream, R20): the turn can still end
      this.delivering--;
    }
    if (this.delivering === 0 && this.endWanted) this.end();
  }

  /** R11: cancelling is unsubscribing: the provider call and every tool stop at once, and the turn ends. */
  private abort(): void {
    if (this.ended) return;
    // the phases before this one: this subscriber's own subscriptions (not `out`, which stays open for the end)
    this.unsubscribe();
    this.draft!.abort();
    this.end();
  }

  private end(): void {
    const { out } = this;
    if (this.ended || out.closed) return;
    if (this.delivering > 0) {
      this.endWanted = true;
      return;
    }
    this.ended = true; // an abort while turn_end is being delivered belongs to the loop, not to this turn
    this.unsubscribe();
    this.draft?.finish((event) => out.next(event));
    out.complete();
  }

  private unlisten(): void {
    this.stopListening?.();
    this.stopListening = undefined;
  }
}

/** R29: up to this many messages, a tool_result's history is copied at once; past it, when first read. */
const EAGER_UP_TO = 256;

/**
 * What one turn has gathered so far — text, calls, results, how the message ended — and the
 * messages it makes at the end (R4): the history, then the assistant message, then one result per
 * call in call order, whatever order the tools finished in.
 */
class TurnDraft {
  private readonly calls: ToolCall[] = [];
  private readonly results: (ToolSettled | undefined)[] = [];
  /** The indices of the results, in the order they came (R29: what was settled at each moment). */
  private readonly order: number[] = [];
  private aborted = false;
  /** H6: prepareTurn has not answered: aborted now, the empty answer stands in, outside the history. */
  unasked = false;
  /** S5, R34: what prepareTurn summarised; on the turn_end whatever follows (once it answered, the turn's history is kept). */
  compaction: Compaction | undefined;
  /** R29: the assistant message as last handed out, until the draft changes. */
  private known: AssistantMessage | undefined;
  private lastCalls: ToolCall[] | undefined;
  /** R22: the saved assistant message that turn 0 finishes, and the slots whose results it had already. */
  private saved: AssistantMessage | undefined;
  private earlier: ReadonlySet<number> | undefined; // turn 0 only

  /**
   * `history` is the loop's own array, never handed out (consumers and providers get copies), so
   * appending to it in place is safe and keeps each turn's cost independent of the history's length.
   * `usageBefore` is the loop's token count before this turn (R27).
   */
  constructor(
    readonly turn: number,
    private readonly history: AgentMessage[],
    private readonly reply: Reply,
    private readonly usageBefore: Usage = NO_USAGE,
    private readonly maxOutputChars = Infinity,
  ) {}

  /** The reply is over (its message_end, a failure or an abort): the assistant message is the final one. */
  private get final(): boolean {
    return this.aborted || this.reply.ended;
  }

  /** Takes a call's slot (streamReply gave it: R28); turn 0's were all taken at its start (R22). */
  addCall({ call, index }: CallPart): void {
    this.known = undefined;
    // a push, not `calls[index] =`: W1 ran 1.06× v3 (paired) with this and CallSlots' first id, 1.10× without
    if (index === this.calls.length) this.calls.push(call);
  }

  /** The reply changed (an event of the provider, or its failure): the assistant message as known is no longer it. */
  changed(): void {
    this.known = undefined;
  }

  /** R22, turn 0: this turn is the saved `assistant` message, whose calls with a saved result are done already. */
  resume(assistant: AssistantMessage, slots: readonly CallPart[]): void {
    this.saved = assistant;
    const earlier = new Set<number>();
    for (const slot of slots) {
      this.calls.push(slot.call);
      if (slot.answered === undefined) continue;
      this.results[slot.index] = settled(slot.answered);
      this.order.push(slot.index);
      earlier.add(slot.index);
    }
    this.earlier = earlier;
  }

  /** The result of the `index`-th call of this turn. */
  settle(index: number, result: ToolSettled): void {
    this.results[index] = result;
    this.order.push(index);
  }

  /** R11: cancelled from outside; calls without a result get `error: aborted`. */
  abort(): void {
    this.known = undefined;
    this.aborted = true;
  }

  /**
   * R29: the `tool_result` event of the result just settled, whose `messages` is the history as it stands now —
   * the history before the turn, the assistant message as known at this moment, then the results so far, in
   * call order. While the model still streams, the message is its text and calls so far with stop reason
   * `toolUse` (its end, usage and reasoning are not known yet); from its `message_end` (or a failure, an
   * abort) on, the final one. A short history is copied at once (W1: cheaper than anything lazy); past
   * {@link EAGER_UP_TO} messages the array is made when first read (then kept), from a few counts taken now —
   * the draft only ever appends — so that a turn of many calls stays linear (D4).
   */
  resultEvent(message: ToolResultMessage): LoopEventOf<'tool_result'> {
    if (this.history.length + this.order.length <= EAGER_UP_TO) return { type: 'tool_result', message, messages: this.messagesNow() };
    return this.later({ type: 'tool_result', message });
  }

  /** H8: `tool_approval` for a call that waits for a person, its `messages` the history to save now, as R29's. */
  approvalEvent(call: ToolCall): LoopEventOf<'tool_approval'> {
    if (this.history.length + this.order.length <= EAGER_UP_TO) return { type: 'tool_approval', call, messages: this.messagesNow() };
    return this.later({ type: 'tool_approval', call });
  }

  /** R29, past {@link EAGER_UP_TO}: `event` with a `messages` made when first read, from the counts of this moment. */
  private later<E extends object>(event: E): E & { messages: readonly AgentMessage[] } {
    const { history, results, order, calls } = this;
    const { text } = this.reply;
    const before = history.length;
    const settledSoFar = order.length;
    const known = this.final || this.saved !== undefined ? this.current() : undefined;
    const textSoFar = text.length;
    const callsSoFar = calls.length;
    let messages: readonly AgentMessage[] | undefined;
    const make = (): AgentMessage[] => {
      const made = history.slice(0, before);
      made.push(known ?? streamed(text.toString().slice(0, textSoFar), calls.slice(0, callsSoFar)));
      const inCallOrder = order.slice(0, settledSoFar).sort((a, b) => a - b);
      for (const index of inCallOrder) made.push(results[index]!.message);
      return made;
    };
    // enumerable and configurable, as an object literal's getter: a plain event to every copy
    return Object.defineProperty(event, 'messages', {
      enumerable: true,
      configurable: true,
      get: (): readonly AgentMessage[] => (messages ??= make()),
      set: (value: readonly AgentMessage[]) => {
        messages = value; // a consumer may still replace it, as on any plain event
      },
    }) as E & { messages: readonly AgentMessage[] };
  }

  /** R29, at once: the history before the turn, the assistant message as known, the results so far in call order. */
  private messagesNow(): AgentMessage[] {
    const messages = this.history.slice();
    messages.push(this.current());
    const { results, calls } = this;
    for (let index = 0; index < calls.length; index++) {
      const result = results[index];
      if (result !== undefined) messages.push(result.message);
    }
    return messages;
  }

  /**
   * The `tool_result` events of the calls the abort left without one, then `turn_end` (the history
   * after the turn, R4), which carries the turn's outcome for the loop (R30), each to `emit`.
   */
  finish(emit: (event: LoopEvent) => void): void {
    const { calls, results } = this;
    for (let index = 0; index < calls.length; index++) {
      if (results[index] !== undefined) continue;
      const message = limitOutput(abortedResult(calls[index]!), this.maxOutputChars);
      this.settle(index, settled(message));
      emit(this.resultEvent(message));
    }
    const assistant = this.current();
    const { history, earlier } = this;
    if (!this.unasked) history.push(assistant);
    // turn 0 (R22) reports and decides on the results it made, not on those the saved history had
    const toolResults: ToolResultMessage[] = [];
    let terminated = calls.length > 0;
    for (let index = 0; index < calls.length; index++) {
      const result = results[index]!;
      if (!this.unasked) history.push(result.message);
      if (earlier?.has(index) === true) continue;
      toolResults.push(result.message);
      terminated &&= result.terminate;
    }
    const usage = addUsage(this.usageBefore, this.reply.usage);
    const outcome: TurnOutcome = {
      turn: this.turn,
      history,
      stopReason: assistant.stopReason,
      assistant,
      results: calls.length,
      terminated: terminated && toolResults.length > 0, // R6: every result of the turn, and there was one
      usage,
      // a copy, counted as the totals are (R27); none when the call reported nothing usable
      lastUsage: typeof this.reply.usage === 'object' && this.reply.usage !== null ? addUsage(NO_USAGE, this.reply.usage) : undefined,
    };
    const turnEnd: LoopEventOf<'turn_end'> = {
      type: 'turn_end',
      turn: this.turn,
      assistant,
      toolResults,
      messages: history.slice(),
      usage: copyUsage(usage),
    };
    if (this.compaction !== undefined) turnEnd.compaction = this.compaction;
    emit(withOutcome(turnEnd, outcome));
  }

  /** The assistant message as known now (R29), the same object until the draft changes. */
  private current(): AssistantMessage {
    if (this.saved !== undefined) return this.saved;
    if (this.known !== undefined) return this.known;
    if (this.final) return (this.known = this.assistant());
    return (this.known = streamed(this.reply.text.toString(), this.callsSoFar()));
  }

  /** The calls so far, as a new array — the same one until another call comes: it is handed out, never changed. */
  private callsSoFar(): ToolCall[] {
    const last = this.lastCalls;
    if (last !== undefined && last.length === this.calls.length) return last;
    return (this.lastCalls = this.calls.slice());
  }

  private assistant(): AssistantMessage {
    const { reply } = this;
    const stopReason = this.aborted ? 'aborted' : reply.stopReason;
    const errorMessage = this.aborted ? 'aborted' : reply.errorMessage;
    return assistantMessage(reply.text.toString(), stopReason, this.calls.length > 0 ? this.callsSoFar() : NO_CALLS, errorMessage, reply.reasoning);
  }
}

/** A turn without calls: `assistantMessage` keeps no empty list (never written to). */
const NO_CALLS: ToolCall[] = [];

/** R29: a reply still streaming, as a message: what came so far, asking for tools (a result is why it is wanted). */
function streamed(content: string, calls: ToolCall[]): AssistantMessage {
  const message: AssistantMessage = { role: 'assistant', content, stopReason: 'toolUse' };
  if (calls.length > 0) message.toolCalls = calls;
  return message;
}
