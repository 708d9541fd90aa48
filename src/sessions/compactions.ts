import type { AgentMessage } from '../types.js';

/**
 * What `compactWhen` and `persist` tell each other: the package's one side channel, and why it must be one.
 * DESIGN's signatures give the two nothing in common — `compactWhen(options)` is a `PrepareTurn`, `persist(tree,
 * store)` an operator on the events — but the loop's own message objects (the same objects are in
 * `prepareTurn`'s input and in `turn_end.messages`), and neither sees what the other needs: `compactWhen` never
 * sees `message_end` (its `usage.inputTokens`, which `persist` reads off it), and no event carries the input a
 * `prepareTurn` made (the compaction `persist` must append to the tree). So each leaves a note on a message: one
 * weak map, keyed by the loop's messages, so nothing outlives its history and no message object is changed.
 */

interface Compaction {
  summary: string;
  /** The first message the summary does not cover. */
  firstKept: AgentMessage;
}

interface Note {
  /** On an assistant message: the `usage.inputTokens` of the model call that wrote it. */
  inputTokens?: number;
  /** On the last message of a history that `compactWhen` compacted: the compaction, for `persist` to append. */
  compaction?: Compaction;
}

const notes = new WeakMap<AgentMessage, Note>();

function noteOn(message: AgentMessage): Note {
  let note = notes.get(message);
  if (note === undefined) notes.set(message, (note = {}));
  return note;
}

export function leaveCompaction(last: AgentMessage, compaction: Compaction): void {
  noteOn(last).compaction = compaction;
}

/** The compaction made on a history that ended with `last`, once. */
export function takeCompaction(last: AgentMessage | undefined): Compaction | undefined {
  const note = last === undefined ? undefined : notes.get(last);
  const compaction = note?.compaction;
  if (compaction !== undefined) note!.compaction = undefined;
  return compaction;
}

export function recordInputTokens(assistant: AgentMessage, tokens: number): void {
  noteOn(assistant).inputTokens = tokens;
}

export function inputTokensOf(assistant: AgentMessage): number | undefined {
  return notes.get(assistant)?.inputTokens;
}
