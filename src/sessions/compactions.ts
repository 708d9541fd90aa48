import type { AgentMessage } from '../types.js';

/**
 * What `compactWhen` tells `persist`: the package's one side channel left. DESIGN's signatures give the two
 * nothing in common — `compactWhen(options)` is a `PrepareTurn`, `persist(tree, store)` an operator on the
 * events — but the loop's own message objects (the same objects are in `prepareTurn`'s input and in
 * `turn_end.messages`), and no event carries the input a `prepareTurn` made (the compaction `persist` must append
 * to the tree). So `compactWhen` leaves a note on the history's last message: a weak map, keyed by the loop's
 * messages, so nothing outlives its history and no message object is changed. (The last usage, which `persist`
 * once read off `message_end` for it, now reaches `compactWhen` in `prepareTurn`'s context, R34.)
 */

interface Compaction {
  summary: string;
  /** The first message the summary does not cover. */
  firstKept: AgentMessage;
}

/** On the last message of a history that `compactWhen` compacted: the compaction, for `persist` to append. */
const notes = new WeakMap<AgentMessage, Compaction>();

export function leaveCompaction(last: AgentMessage, compaction: Compaction): void {
  notes.set(last, compaction);
}

/** The compaction made on a history that ended with `last`, once. */
export function takeCompaction(last: AgentMessage | undefined): Compaction | undefined {
  const compaction = last === undefined ? undefined : notes.get(last);
  if (compaction !== undefined) notes.delete(last!);
  return compaction;
}
