import type { AgentMessage, ToolResultMessage } from '../types.js';

/**
 * R4: a copy of a checked history (R21) with each assistant message's results in the order of its calls.
 * A saved history may hold them in another order (a run saved as its tools finished, a hand-edited file):
 * it is accepted, and the loop hands it out in call order, as every history it makes. One pass; a turn's
 * results are sorted only when they are out of order.
 *
 * ```ts
 * inCallOrder([user, { ...assistant, toolCalls: [a, b] }, resultOf(b), resultOf(a)]);
 * // [user, { ...assistant, toolCalls: [a, b] }, resultOf(a), resultOf(b)]
 * ```
 */
export function inCallOrder(messages: readonly AgentMessage[]): AgentMessage[] {
  const ordered = messages.slice();
  for (let index = 0; index < ordered.length; index++) {
    const message = ordered[index]!;
    if (message.role !== 'assistant' || message.toolCalls === undefined || message.toolCalls.length < 2) continue;
    let end = index + 1;
    while (end < ordered.length && ordered[end]!.role === 'toolResult') end++;
    if (end - index > 2) sortRun(ordered, index + 1, end, message.toolCalls);
    index = end - 1;
  }
  return ordered;
}

/** Sorts `messages[from..to)`, results of `calls` (R21 has checked that they are), by call position, in place. */
function sortRun(messages: AgentMessage[], from: number, to: number, calls: readonly { id: string }[]): void {
  const position = new Map(calls.map((call, at) => [call.id, at]));
  const at = (message: AgentMessage) => position.get((message as ToolResultMessage).toolCallId)!;
  let sorted = true;
  for (let index = from + 1; index < to && sorted; index++) sorted = at(messages[index - 1]!) < at(messages[index]!);
  if (sorted) return;
  const run = messages.slice(from, to).sort((a, b) => at(a) - at(b));
  messages.splice(from, to - from, ...run);
}
