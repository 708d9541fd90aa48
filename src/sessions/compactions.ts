import type { AgentMessage } from '../types.js';

/**
 * What `compactWhen` and `persist` tell each other, keyed by the loop's own message objects (the same objects
 * are in `prepareTurn`'s input and in `turn_end.messages`): `persist` reads the token count of each model call
 * off its `message_end` (which `compactWhen` never sees), and `compactWhen` leaves each compaction it made for
 * `persist` to append to the tree at that turn's end. Weak maps: nothing outlives its history.
 */

interface Compaction {
  summary: string;
  /** The first message the summary does not cover. */
  firstKept: AgentMessage;
}

/** Keyed by the last message of the history the compaction was made on. */
const compactions = new WeakMap<AgentMessage, Compaction>();
/** The `usage.inputTokens` of the model call that wrote an assistant message. */
const inputTokens = new WeakMap<AgentMessage, number>();

export function leaveCompaction(last: AgentMessage, compaction: Compaction): void {
  compactions.set(last, compaction);
}

/** The compaction made on a history that ended with `last`, once. */
export function takeCompaction(last: AgentMessage | undefined): Compaction | undefined {
  if (last === undefined) return undefined;
  const compaction = compactions.get(last);
  compactions.delete(last);
  return compaction;
}

export function recordInputTokens(assistant: AgentMessage, tokens: number): void {
  inputTokens.set(assistant, tokens);
}

export function inputTokensOf(assistant: AgentMessage): number | undefined {
  return inputTokens.get(assistant);
}
