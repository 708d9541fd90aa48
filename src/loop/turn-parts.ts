import type { AgentMessage, AssistantMessage, Compaction, LoopEvent, LoopEventOf, ProviderEvent, ProviderInput, ToolCall, ToolResultMessage, Usage } from '../types.js';
import type { ToolAwaiting, ToolSettled } from '../tools/tool-outcome.js';
import type { Reply } from './reply.js';

/**
 * What a turn is asked to do: its number, the loop's own history so far (the turn appends to it, no
 * consumer holds it) and the loop's token counts before it.
 */
export interface TurnRequest {
  turn: number;
  history: AgentMessage[];
  usage: Usage;
  /** R34: what the previous provider call reported, for prepareTurn. */
  lastUsage?: Usage | undefined;
  /** J2: an answer turn asks the model for this answer, with no tools (`turn_start.answer`). */
  output?: ProviderInput['output'] | undefined;
}

/** R22: what turn 0 resumes — the saved assistant message, and the slots of its calls (with the saved results they have). */
export interface Resume {
  assistant: AssistantMessage;
  calls: CallPart[];
}

/**
 * A call's place in its turn: `index` among the turn's calls, the call as the history keeps it, (R28) the
 * id it repeats, the provider's `tool_call` event that brought it (none for a call turn 0 resumes) and,
 * for a resumed call that has one, its saved result.
 */
export interface CallPart {
  type: 'call';
  index: number;
  call: ToolCall;
  duplicateOf?: string;
  event?: LoopEventOf<'tool_call'>;
  answered?: ToolResultMessage;
}

/**
 * What flows between the turn's phases (`streamReply → runTools → draftTurn`). The loop's events pass
 * as they are; these few say what the events alone do not:
 * - `begin`: the turn starts (draftTurn announces it as `turn_start`), and the reply that streamReply writes;
 *   for turn 0 (R22, `resumeTurn`), the saved message and calls the turn finishes;
 * - `call`: a call and its slot (above);
 * - `waiting` / `asked`: prepareTurn is running / has answered, and the model is asked (H6); `asked` carries
 *   what prepareTurn summarised, for the turn's `turn_end` (S5, R34);
 * - `failed`: the provider (or prepareTurn, or the registry) failed; the reply says how (R10, R20);
 * - `approval`: a call waits for a person (H8; draftTurn announces it as `tool_approval`, with the history to save);
 * - `settled`: the call at `index` has its result (runTools → draftTurn, which announces it as `tool_result`).
 */
export type TurnPart =
  | BeginPart
  | Exclude<ProviderEvent, LoopEventOf<'tool_call'>>
  | CallPart
  | { type: 'waiting' }
  | { type: 'asked'; compaction: Compaction | undefined }
  | { type: 'failed' }
  | ToolAwaiting
  | LoopEventOf<'tool_start'>
  | LoopEventOf<'tool_update'>
  | SettledPart;

/** The turn starts: what it was asked, the reply streamReply writes and, for turn 0 (R22), what it resumes. */
export interface BeginPart {
  type: 'begin';
  request: TurnRequest;
  reply: Reply;
  resume?: Resume;
}

/** The call at `index` has its result (runTools → draftTurn): how it ended, as any call's outcome is told. */
export interface SettledPart extends ToolSettled {
  index: number;
}

/** The turn's outcome, carried by its `turn_end` (R30): what the loop decides on, out of any consumer's reach. */
export interface TurnOutcome {
  turn: number;
  /** The loop's own history after the turn. */
  history: AgentMessage[];
  /** The reply's stop reason as the turn ended. */
  stopReason: AssistantMessage['stopReason'];
  assistant: AssistantMessage;
  /** How many results the turn made. */
  results: number;
  /** Every result of the turn asked to terminate (and there was at least one). */
  terminated: boolean;
  /** The loop's token counts after this turn (R27). */
  usage: Usage;
  /** R34: this turn's provider call's own usage, if it reported one. */
  lastUsage: Usage | undefined;
}

/** Hands back the object it is given, so that a subclass's private field can be put on any object. */
class Carrier {
  constructor(value: object) {
    return value;
  }
}

/**
 * Where a `turn_end` keeps its outcome (R30: out of any consumer's reach): a private field put on the plain event
 * object (the constructor hands back the event, not an object of its own), so no key, copy, JSON, equality or
 * reflection ever sees it, and the event stays a plain object — which neither a symbol key nor a module's map
 * keyed by the event would give.
 */
class OutcomeOf extends Carrier {
  readonly #outcome: TurnOutcome;

  private constructor(event: LoopEventOf<'turn_end'>, outcome: TurnOutcome) {
    super(event);
    this.#outcome = outcome;
  }

  static put(event: LoopEventOf<'turn_end'>, outcome: TurnOutcome): void {
    new OutcomeOf(event, outcome);
  }

  static of(event: object): TurnOutcome | undefined {
    return #outcome in event ? (event as OutcomeOf).#outcome : undefined;
  }
}

/** `event`, the last of its turn, carrying the turn's outcome (R30). */
export function withOutcome(event: LoopEventOf<'turn_end'>, outcome: TurnOutcome): LoopEventOf<'turn_end'> {
  OutcomeOf.put(event, outcome);
  return event;
}

/** The turn's outcome, from its `turn_end`. */
export function outcomeOf(event: LoopEvent): TurnOutcome | undefined {
  return event.type === 'turn_end' ? OutcomeOf.of(event) : undefined;
}
