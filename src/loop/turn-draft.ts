import { ProviderProtocolError } from '../providers/check-provider-events.js';
import { TextBuffer } from './text-buffer.js';
import { type ToolSettled, settled } from '../tools/tool-outcome.js';
import { abortedResult, limitOutput } from '../tools/tool-result.js';
import { errorText } from '../util/values.js';
import type {
  AgentMessage,
  AssistantMessage,
  LoopEvent,
  LoopEventOf,
  ProviderEvent,
  StopReason,
  ToolCall,
  ToolResultMessage,
  Usage,
} from '../types.js';

/** What the loop needs to know about a finished turn to decide whether to go on. */
export interface TurnOutcome {
  turn: number;
  assistant: AssistantMessage;
  toolResults: ToolResultMessage[];
  /** The history after the turn: the loop's own array, which no consumer holds. */
  history: AgentMessage[];
  /** Every result of the turn asked to terminate (and there was at least one). */
  terminated: boolean;
  /** The loop's token counts after this turn (R27). */
  usage: Usage;
}

/** R29: up to this many messages, a tool_result's history is copied at once; past it, when first read. */
const EAGER_UP_TO = 256;

/** No tokens counted yet. */
export const NO_USAGE: Usage = Object.freeze({ inputTokens: 0, outputTokens: 0 });

/**
 * R27: running totals. The cache counts appear once a provider reported one. Anything that is not a
 * finite number counts as nothing: a provider's odd usage never breaks the loop.
 */
export function addUsage(total: Usage, more: Usage | undefined): Usage {
  if (more === undefined || typeof more !== 'object' || more === null) return total;
  const sum: Usage = { inputTokens: total.inputTokens + count(more.inputTokens), outputTokens: total.outputTokens + count(more.outputTokens) };
  const cacheRead = optional(total.cacheReadTokens, more.cacheReadTokens);
  const cacheWrite = optional(total.cacheWriteTokens, more.cacheWriteTokens);
  if (cacheRead !== undefined) sum.cacheReadTokens = cacheRead;
  if (cacheWrite !== undefined) sum.cacheWriteTokens = cacheWrite;
  return sum;
}

/** A copy for a consumer (who may change it) — field by field, which is cheaper than a spread on every turn. */
export function copyUsage({ inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens }: Usage): Usage {
  const copy: Usage = { inputTokens, outputTokens };
  if (cacheReadTokens !== undefined) copy.cacheReadTokens = cacheReadTokens;
  if (cacheWriteTokens !== undefined) copy.cacheWriteTokens = cacheWriteTokens;
  return copy;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

function optional(total: number | undefined, more: unknown): number | undefined {
  const reported = typeof more === 'number' && Number.isFinite(more);
  if (total === undefined && !reported) return undefined;
  return (total ?? 0) + (reported ? more : 0);
}

/** A call's place in its turn: `index` among the turn's calls, the call as the history keeps it, and (R28) the id it repeats. */
export interface CallSlot {
  index: number;
  call: ToolCall;
  duplicateOf?: string;
}

/** The last event of every turn. */
export type TurnEnd = LoopEventOf<'turn_end'>;

/**
 * What one turn has gathered so far — text, calls, results, how the message ended — and the
 * messages it makes at the end (R4): the history, then the assistant message, then one result per
 * call in call order, whatever order the tools finished in.
 */
export class TurnDraft {
  private readonly text = new TextBuffer();
  private readonly calls: ToolCall[] = [];
  private readonly results: (ToolSettled | undefined)[] = [];
  /** The indices of the results, in the order they came (R29: what was settled at each moment). */
  private readonly order: number[] = [];
  private stopReason: StopReason = 'error';
  private errorMessage: string | undefined;
  private usage: Usage | undefined;
  private reasoning: unknown[] | undefined;
  private aborted = false;
  private unasked = false;
  /** The reply is over (its message_end, a failure or an abort): the assistant message is the final one. */
  private final = false;
  /** R29: the assistant message as last handed out, until the draft changes. */
  private known: AssistantMessage | undefined;
  private lastCalls: ToolCall[] | undefined;
  /** R22: the saved assistant message that turn 0 finishes, and the slots whose results it had already. */
  private saved: AssistantMessage | undefined;
  private earlier: ReadonlySet<number> | undefined; // turn 0 only
  /** The call ids of this turn (R28), and how often each came once it came twice. */
  private readonly ids = new Set<string>();
  private repeats: Map<string, number> | undefined;

  /**
   * `history` is the loop's own array, never handed out (consumers and providers get copies), so
   * appending to it in place is safe and keeps each turn's cost independent of the history's length.
   * `usageBefore` is the loop's token count before this turn (R27).
   */
  constructor(
    readonly turn: number,
    private readonly history: AgentMessage[],
    private readonly usageBefore: Usage = NO_USAGE,
    private readonly maxOutputChars = Infinity,
  ) {}

  /**
   * Takes the model's call and gives its slot: `index` in the turn's calls, and the call as the history
   * keeps it. R28: a second call with an id already used in this turn is kept as `ID_dup2` (`ID_dup3`, …)
   * and `duplicateOf` names the id, so that every id in the history stays unique.
   */
  addCall(given: ToolCall): CallSlot {
    // read here, so that a call whose fields throw when read (getters) ends the turn in the caller (R20);
    // the history keeps a plain call as the provider sent it (R23), and a copy of one with getters, which
    // nothing reads again
    const { id, name, input } = given;
    const index = this.calls.length;
    if (!this.ids.has(id)) {
      this.ids.add(id);
      this.known = undefined;
      const call = hasOwnData(given) ? given : { ...given, id, name, input }; // extra fields kept, as sent
      this.calls.push(call);
      return { index, call };
    }
    this.repeats ??= new Map();
    const n = (this.repeats.get(id) ?? 1) + 1;
    this.repeats.set(id, n);
    const kept = { ...given, id: `${id}_dup${n}`, name, input };
    this.known = undefined;
    this.calls.push(kept);
    return { index, call: kept, duplicateOf: id };
  }

  /** Takes one event that `checkProviderEvents` let through. */
  record(event: ProviderEvent): void {
    switch (event.type) {
      case 'text_delta':
        this.text.append(event.text);
        this.known = undefined;
        break;
      case 'message_end':
        this.final = true;
        this.known = undefined;
        this.stopReason = event.stopReason;
        this.errorMessage = event.errorMessage;
        this.usage = event.usage;
        this.reasoning = event.reasoning;
        break;
    }
  }

  /** R10: the provider failed (or, H6, `prepareTurn` did: `what` says so); what arrived before stays. */
  fail(error: unknown, what = 'provider error: '): void {
    this.final = true;
    this.known = undefined;
    this.stopReason = 'error';
    this.errorMessage = error instanceof ProviderProtocolError ? error.message : `${what}${errorText(error)}`;
  }

  /** H6: aborted while `prepareTurn` waited, before any model call: the empty answer stands in, outside the history. */
  abortUnasked(): void {
    this.final = true;
    this.aborted = true;
    this.unasked = true;
  }

  /**
   * R22, turn 0: this turn is the saved `assistant` message, whose calls with a result in `answered` are
   * done already. Returns the slots of the calls still to run.
   */
  resume(assistant: AssistantMessage, answered: ReadonlyMap<string, ToolResultMessage>): CallSlot[] {
    this.saved = assistant;
    const pending: CallSlot[] = [];
    for (const call of assistant.toolCalls ?? []) {
      const slot = this.addCall(call);
      const done = answered.get(call.id);
      if (done === undefined) pending.push(slot);
      else {
        this.results[slot.index] = settled(done);
        this.order.push(slot.index);
      }
    }
    this.earlier = new Set(this.calls.map((_, index) => index).filter((index) => this.results[index] !== undefined));
    return pending;
  }

  /** The result of the `index`-th call of this turn. */
  settle(index: number, result: ToolSettled): void {
    this.results[index] = result;
    this.order.push(index);
  }

  /** R11: cancelled from outside; calls without a result get `error: aborted`. */
  abort(): void {
    this.final = true;
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
    const { history, results, order, calls, text } = this;
    if (history.length + order.length <= EAGER_UP_TO) return { type: 'tool_result', message, messages: this.messagesNow() };
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
    return {
      type: 'tool_result',
      message,
      get messages(): readonly AgentMessage[] {
        return (messages ??= make());
      },
      set messages(value: readonly AgentMessage[]) {
        messages = value; // a consumer may still replace it, as on any plain event
      },
    };
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
   * after the turn, R4); the turn's outcome for the loop goes to `report` first.
   */
  finish(report?: (outcome: TurnOutcome) => void): LoopEvent[] {
    const events: LoopEvent[] = [];
    const { calls, results } = this;
    for (let index = 0; index < calls.length; index++) {
      if (results[index] !== undefined) continue;
      const message = limitOutput(abortedResult(calls[index]!), this.maxOutputChars);
      this.settle(index, settled(message));
      events.push(this.resultEvent(message));
    }
    const toolResults = calls.map((_, index) => results[index]!.message);
    const assistant = this.current();
    const history = this.history;
    if (!this.unasked) history.push(assistant, ...toolResults);
    const usage = addUsage(this.usageBefore, this.usage);
    // turn 0 (R22) reports and decides on the results it made, not on those the saved history had
    const earlier = this.earlier;
    const fresh = earlier === undefined ? undefined : this.calls.map((_, index) => index).filter((index) => !earlier.has(index));
    const outcome: TurnOutcome = {
      turn: this.turn,
      assistant,
      toolResults,
      history,
      terminated: fresh === undefined ? this.allTerminate() : fresh.length > 0 && fresh.every((index) => this.results[index]?.terminate === true),
      usage,
    };
    const turnEnd: TurnEnd = {
      type: 'turn_end',
      turn: this.turn,
      assistant,
      toolResults: fresh === undefined ? toolResults.slice() : fresh.map((index) => toolResults[index]!),
      messages: history.slice(),
      usage: copyUsage(usage),
    };
    report?.(outcome);
    events.push(turnEnd);
    return events;
  }

  /** Every call of the turn asked to terminate, and there was at least one (R6). */
  private allTerminate(): boolean {
    const { results, calls } = this;
    if (calls.length === 0) return false;
    for (let index = 0; index < calls.length; index++) if (results[index]?.terminate !== true) return false;
    return true;
  }

  /** The assistant message as known now (R29), the same object until the draft changes. */
  private current(): AssistantMessage {
    if (this.saved !== undefined) return this.saved;
    if (this.known !== undefined) return this.known;
    if (this.final) return (this.known = this.assistant());
    return (this.known = streamed(this.text.toString(), this.callsSoFar()));
  }

  /** The calls so far, as a new array — the same one until another call comes: it is handed out, never changed. */
  private callsSoFar(): ToolCall[] {
    const last = this.lastCalls;
    if (last !== undefined && last.length === this.calls.length) return last;
    return (this.lastCalls = this.calls.slice());
  }

  private assistant(): AssistantMessage {
    const stopReason = this.aborted ? 'aborted' : this.stopReason;
    const errorMessage = this.aborted ? 'aborted' : this.errorMessage;
    const message: AssistantMessage = { role: 'assistant', content: this.text.toString(), stopReason };
    if (this.calls.length > 0) message.toolCalls = this.callsSoFar();
    if (errorMessage !== undefined) message.errorMessage = errorMessage;
    if (this.reasoning !== undefined && this.reasoning.length > 0) message.reasoning = this.reasoning;
    return message;
  }
}

/** Whether a call's fields are its own plain values (no getter could answer differently on the next read). */
function hasOwnData(call: ToolCall): boolean {
  for (const key of CALL_FIELDS) {
    const field = Object.getOwnPropertyDescriptor(call, key);
    if (field === undefined || field.get !== undefined) return false;
  }
  return true;
}

const CALL_FIELDS = ['id', 'name', 'input'] as const;

/** R29: a reply still streaming, as a message: what came so far, asking for tools (a result is why it is wanted). */
function streamed(content: string, calls: ToolCall[]): AssistantMessage {
  const message: AssistantMessage = { role: 'assistant', content, stopReason: 'toolUse' };
  if (calls.length > 0) message.toolCalls = calls;
  return message;
}
