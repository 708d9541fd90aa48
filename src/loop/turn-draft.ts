import { ProviderProtocolError } from '../providers/check-provider-events.js';
import { TextBuffer } from './text-buffer.js';
import type { ToolSettled } from '../tools/execute-tool.js';
import { abortedResult } from '../tools/tool-result.js';
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
}

/** The last event of every turn. */
export type TurnEnd = LoopEventOf<'turn_end'>;

/**
 * The outcome rides on its `turn_end` under a key that no consumer sees: not enumerable, so
 * `toEqual`, spreading, `structuredClone` and JSON all see the public event only.
 */
const OUTCOME = Symbol('rx-tool-loop turn outcome');

/** What the turn that ended with `turnEnd` came to (the loop's projection reads it to decide). */
export function outcomeOf(turnEnd: TurnEnd): TurnOutcome {
  const outcome = (turnEnd as TurnEnd & { [OUTCOME]?: TurnOutcome })[OUTCOME];
  if (outcome === undefined) throw new Error('rx-tool-loop: a turn_end that no turn of this loop made');
  return outcome;
}

/**
 * What one turn has gathered so far — text, calls, results, how the message ended — and the
 * messages it makes at the end (R4): the history, then the assistant message, then one result per
 * call in call order, whatever order the tools finished in.
 */
export class TurnDraft {
  private readonly text = new TextBuffer();
  private readonly calls: ToolCall[] = [];
  private readonly results: (ToolSettled | undefined)[] = [];
  private stopReason: StopReason = 'error';
  private errorMessage: string | undefined;
  private aborted = false;

  /**
   * `history` is the loop's own array, never handed out (consumers and providers get copies), so
   * appending to it in place is safe and keeps each turn's cost independent of the history's length.
   */
  constructor(
    readonly turn: number,
    private readonly history: AgentMessage[],
  ) {}

  /** Takes one event that `checkProviderEvents` let through. */
  record(event: ProviderEvent): void {
    switch (event.type) {
      case 'text_delta':
        this.text.append(event.text);
        break;
      case 'tool_call':
        this.calls.push(event.call);
        break;
      case 'message_end':
        this.stopReason = event.stopReason;
        this.errorMessage = event.errorMessage;
        break;
    }
  }

  /** R10: the provider failed; what arrived before stays. */
  fail(error: unknown): void {
    this.stopReason = 'error';
    this.errorMessage = error instanceof ProviderProtocolError ? error.message : `provider error: ${errorText(error)}`;
  }

  /** The result of the `index`-th call of this turn. */
  settle(index: number, settled: ToolSettled): void {
    this.results[index] = settled;
  }

  /** R11: cancelled from outside; calls without a result get `error: aborted`. */
  abort(): void {
    this.aborted = true;
  }

  /**
   * The `tool_result` events of the calls the abort left without one, then `turn_end` (the history
   * after the turn, R4), which carries the turn's outcome for the loop (see {@link outcomeOf}).
   */
  finish(): LoopEvent[] {
    const events: LoopEvent[] = [];
    const toolResults = this.calls.map((call, index) => {
      const settled = this.results[index];
      if (settled !== undefined) return settled.message;
      const message = abortedResult(call);
      events.push({ type: 'tool_result', message });
      return message;
    });
    const assistant = this.assistant();
    const history = this.history;
    history.push(assistant, ...toolResults);
    const outcome: TurnOutcome = {
      turn: this.turn,
      assistant,
      toolResults,
      history,
      terminated: this.calls.length > 0 && this.calls.every((_, index) => this.results[index]?.terminate === true),
    };
    const turnEnd: TurnEnd = {
      type: 'turn_end',
      turn: this.turn,
      assistant,
      toolResults: toolResults.slice(),
      messages: history.slice(),
    };
    Object.defineProperty(turnEnd, OUTCOME, { value: outcome });
    events.push(turnEnd);
    return events;
  }

  private assistant(): AssistantMessage {
    const stopReason = this.aborted ? 'aborted' : this.stopReason;
    const errorMessage = this.aborted ? 'aborted' : this.errorMessage;
    const message: AssistantMessage = { role: 'assistant', content: this.text.toString(), stopReason };
    if (this.calls.length > 0) message.toolCalls = this.calls.slice();
    if (errorMessage !== undefined) message.errorMessage = errorMessage;
    return message;
  }
}
