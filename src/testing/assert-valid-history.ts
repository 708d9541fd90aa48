import type { AgentMessage } from '../types.js';
import { argumentError } from './arguments.js';

/**
 * Throws an `Error` naming the index of the first broken message, unless every assistant message's
 * calls are followed, right after it, by exactly one result each, in call order — what every model API
 * requires of a history (R4). Broken: a call without its result (also at the end of the history), a
 * result that answers no call, a duplicate result, results out of call order, a result whose `toolName`
 * is not its call's.
 *
 * ```ts
 * assertValidHistory(loopEnd.messages);
 * // Error: assertValidHistory: messages[1]: the call c2 (search) has no result right after its assistant message
 * ```
 */
export function assertValidHistory(messages: readonly AgentMessage[]): void {
  const fail = (index: number, problem: string): never => {
    throw new Error(`assertValidHistory: messages[${index}]: ${problem}`);
  };
  checkShape(messages);
  let index = 0;
  while (index < messages.length) {
    const message = messages[index]!;
    if (message.role === 'toolResult') {
      fail(index, `the result for ${message.toolCallId} (${message.toolName}) answers no call of the assistant message before it`);
    }
    index++;
    if (message.role !== 'assistant' || message.toolCalls === undefined) continue;
    const owner = index - 1;
    const calls = message.toolCalls;
    const answered = new Set<string>();
    for (const call of calls) {
      const next = messages[index];
      if (next?.role !== 'toolResult') fail(owner, `the call ${call.id} (${call.name}) has no result right after its assistant message`);
      const result = next as Extract<AgentMessage, { role: 'toolResult' }>;
      if (result.toolCallId !== call.id) {
        const problem = answered.has(result.toolCallId)
          ? `a second result for ${result.toolCallId}`
          : calls.some((c) => c.id === result.toolCallId)
            ? `the result for ${result.toolCallId} comes before the one for ${call.id}: results must be in call order`
            : `the result for ${result.toolCallId} (${result.toolName}) answers no call of the assistant message before it`;
        fail(index, problem);
      }
      if (result.toolName !== call.name) fail(index, `the result for ${call.id} names the tool ${result.toolName}, its call ${call.name}`);
      answered.add(call.id);
      index++;
    }
    const extra = messages[index];
    if (extra?.role === 'toolResult') {
      fail(index, answered.has(extra.toolCallId) ? `a second result for ${extra.toolCallId}` : `the result for ${extra.toolCallId} (${extra.toolName}) answers no call of the assistant message before it`);
    }
  }
}

const ROLES = ['system', 'user', 'assistant', 'toolResult'];

/** (h) Not a history at all: a `TypeError` that says so, before any R4 check. */
function checkShape(messages: unknown): asserts messages is readonly AgentMessage[] {
  if (!Array.isArray(messages)) throw argumentError('assertValidHistory', 'messages must be an array of messages', messages);
  messages.forEach((message: unknown, i) => {
    const role = (message as { role?: unknown } | null)?.role;
    if (typeof message !== 'object' || message === null || typeof role !== 'string' || !ROLES.includes(role)) {
      throw argumentError('assertValidHistory', `messages[${i}] must be a message with a role of ${ROLES.join(', ')}`, message);
    }
    const calls = (message as { toolCalls?: unknown }).toolCalls;
    if (role === 'assistant' && calls !== undefined && !(Array.isArray(calls) && calls.every((c) => typeof c?.id === 'string' && typeof c?.name === 'string'))) {
      throw argumentError('assertValidHistory', `messages[${i}].toolCalls must be an array of calls with an id and a name`, calls);
    }
    if (role === 'toolResult' && typeof (message as { toolCallId?: unknown }).toolCallId !== 'string') {
      throw argumentError('assertValidHistory', `messages[${i}].toolCallId must be a string`, (message as { toolCallId?: unknown }).toolCallId);
    }
  });
}
