import type { AssistantMessage, LoopEventOf, ToolCall, ToolResultMessage } from '../types.js';
import type { CallPart } from './turn-parts.js';

/**
 * The calls of one turn, each given its slot as it comes: its index among the turn's calls and the call
 * as the history keeps it. R28: a second call with an id already used in this turn is kept as `ID_dup2`
 * (`ID_dup3`, …) and `duplicateOf` names the id, so that every id in the history stays unique.
 */
export class CallSlots {
  private count = 0;
  /** The first call's id, and the others' once there are more (most turns have one call: no Set for it; with
   *  draftTurn's push, W1 ran 1.06× v3 paired against 1.10× without them, bench/findings.md R33). */
  private first: string | undefined;
  private ids: Set<string> | undefined;
  private repeats: Map<string, number> | undefined;

  /** The slot of a provider's `tool_call`; reads the call's fields here, so that a getter that throws fails its reader (R20). */
  add(event: LoopEventOf<'tool_call'>): CallPart {
    const part = this.slot(event.call);
    part.event = event;
    return part;
  }

  /** R22, turn 0: the slots of a saved assistant message's calls, each with its saved result if it has one. */
  resume(assistant: AssistantMessage, answered: ReadonlyMap<string, ToolResultMessage>): CallPart[] {
    return (assistant.toolCalls ?? []).map((call) => {
      const part = this.slot(call);
      const done = answered.get(call.id);
      if (done !== undefined) part.answered = done;
      return part;
    });
  }

  private slot(given: ToolCall): CallPart {
    // the history keeps a plain call as the provider sent it (R23), and a copy of one with getters, which
    // nothing reads again
    const { id, name, input } = given;
    const index = this.count++;
    if (!this.seen(id)) return { type: 'call', index, call: hasOwnData(given) ? given : { ...given, id, name, input } };
    this.repeats ??= new Map();
    const n = (this.repeats.get(id) ?? 1) + 1;
    this.repeats.set(id, n);
    return { type: 'call', index, call: { ...given, id: `${id}_dup${n}`, name, input }, duplicateOf: id };
  }

  /** Whether `id` came before in this turn; remembers it. */
  private seen(id: string): boolean {
    if (this.count === 1) {
      this.first = id;
      return false;
    }
    if (this.ids === undefined) {
      if (id === this.first) return true;
      this.ids = new Set([this.first!, id]);
      return false;
    }
    if (this.ids.has(id)) return true;
    this.ids.add(id);
    return false;
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
