import { TOOL_NAME, isToolName } from '../tools/tool-name.js';
import { attachmentsProblem } from '../util/attachments.js';
import { errorText, shown } from '../util/values.js';

/** A message before its shape is known: what the check reads of it. */
interface Unchecked {
  role?: unknown;
  content?: unknown;
  toolCalls?: unknown;
  toolCallId?: unknown;
  toolName?: unknown;
  isError?: unknown;
  attachments?: unknown;
}

/** A call of an assistant message that the check has passed. */
interface CheckedCall {
  id: string;
  name: string;
}

const NAME_RULE = `is a tool name that the APIs reject: it must match ${TOOL_NAME.source}`;

/**
 * R21: throws a `TypeError` naming `messages[N]` unless the history is one a model API accepts — or
 * one that only waits for the results of its last assistant message's calls (a saved run, to resume). Each
 * message is an object with a known role (`system`, `user`, `assistant`, `toolResult`) and a string
 * `content`; a user message's or a result's `attachments` (F1), when present, are valid: each with a known `type`,
 * a string `mimeType` and exactly one of `data` (base64) and `url` (`http(s):`, `data:`); calls and results have string ids and names the APIs accept, and a call's input is an object
 * that `JSON.stringify` can write (no cycle, no BigInt); each result answers an
 * unanswered call of the assistant message it follows, with only other results between them; and
 * every call has its result before the next non-result message. An empty history is fine.
 *
 * One pass, one `Set` (the open calls of the current assistant message): it runs on every
 * `runEventedToolLoop` call, over histories that grow with each turn.
 *
 * `who` names the caller in each message (`''`: none, for a hook's answer that the loop words itself).
 * `own`: messages of the loop's own history (H6: what `prepareTurn` gives back of them), checked for their place
 * only — they hold the model's calls as it sent them, names and inputs included, which the loop answered (R17).
 *
 * ```ts
 * checkMessages([{ role: 'user', content: 'hi' }, { role: 'toolResult', toolCallId: 'c9', toolName: 'f', content: 'x', isError: false }]);
 * // TypeError: runEventedToolLoop: messages[1] is a tool result whose toolCallId answers no earlier call (got "c9", a string)
 * ```
 */
export function checkMessages(messages: readonly unknown[], who = 'runEventedToolLoop', own?: ReadonlySet<unknown>): void {
  // typed where it is declared, so that TypeScript narrows after each `fail(…)`
  const fail: (what: string, ...value: [unknown?]) => never = (what, ...value) => {
    throw new TypeError(`${who === '' ? '' : `${who}: `}${what}${value.length === 0 ? '' : ` (got ${shown(value[0])})`}`);
  };
  const open = new Set<string>(); // the calls of messages[owner] that have no result yet
  let owner = -1; // the assistant message that results may answer: the last one, if only results came after it
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index] as Unchecked | null | undefined;
    if (typeof message !== 'object' || message === null) fail(`messages[${index}] must be an object`, message);
    const { role, content } = message;
    if (role !== 'user' && role !== 'assistant' && role !== 'toolResult' && role !== 'system') {
      fail(`messages[${index}] has an unknown role, not 'system', 'user', 'assistant' or 'toolResult'`, role);
    }
    if (typeof content !== 'string') fail(`messages[${index}].content must be a string`, content);
    const asSent = own?.has(message) === true; // the model's names and inputs, as the loop kept them
    // F1: one property read on a message without attachments; the loop's own results were checked when their tools returned
    if (message.attachments !== undefined && !asSent && (role === 'user' || role === 'toolResult')) {
      const problem = attachmentsProblem(message.attachments);
      if (problem !== undefined) fail(`messages[${index}].${problem}`);
    }

    if (role === 'toolResult') {
      const { toolCallId, toolName, isError } = message;
      if (typeof toolCallId !== 'string') fail(`messages[${index}].toolCallId must be a string`, toolCallId);
      if (!asSent && !isToolName(toolName)) fail(`messages[${index}].toolName ${NAME_RULE}`, toolName);
      if (typeof isError !== 'boolean') fail(`messages[${index}].isError must be a boolean`, isError);
      if (!open.delete(toolCallId)) fail(strayResult(messages, index, owner, toolCallId), toolCallId);
      continue;
    }
    // a user or system message, or the next assistant message: the calls before it must all be answered
    if (open.size > 0) fail(unanswered(messages, index, owner, open, role));
    owner = role === 'assistant' ? index : -1;
    if (role !== 'assistant') continue;
    const { reasoning } = message as { reasoning?: unknown };
    if (reasoning !== undefined && !Array.isArray(reasoning)) fail(`messages[${index}].reasoning must be an array`, reasoning);
    const calls = message.toolCalls;
    if (calls === undefined) continue;
    if (!Array.isArray(calls)) fail(`messages[${index}].toolCalls must be an array`, calls);
    for (let position = 0; position < calls.length; position++) {
      const call = calls[position] as { id?: unknown; name?: unknown; input?: unknown } | null;
      if (typeof call !== 'object' || call === null) fail(`messages[${index}].toolCalls[${position}] must be an object`, call);
      const { id, name, input } = call;
      if (typeof id !== 'string') fail(`messages[${index}].toolCalls[${position}].id must be a string`, id);
      if (!asSent && !isToolName(name)) fail(`messages[${index}].toolCalls[${position}].name ${NAME_RULE}`, name);
      // a JSON object: what both APIs take as a call's arguments
      if (!asSent && (typeof input !== 'object' || input === null || Array.isArray(input))) {
        fail(`messages[${index}].toolCalls[${position}].input must be an object`, input);
      }
      // every request writes it as JSON: a cycle or a BigInt would fail each of them, so refuse it now
      if (!asSent) {
        try {
          JSON.stringify(input);
        } catch (error) {
          fail(`messages[${index}].toolCalls[${position}].input does not survive JSON.stringify: ${errorText(error)}`);
        }
      }
      // two calls with one id: no result could say which one it answers
      if (open.has(id)) fail(`messages[${index}].toolCalls[${position}].id repeats the id of an earlier call of the same message`, id);
      open.add(id);
    }
  }
  // calls still open here belong to the last assistant message: a saved run to resume, not a broken history
}

/** Why `messages[index]`, a result for `id`, answers no open call. Only on failure: scans back. */
function strayResult(messages: readonly unknown[], index: number, owner: number, id: string): string {
  if (owner >= 0 && callsOf(messages[owner]).some((call) => call.id === id)) {
    return `messages[${index}] is a second result for a call of messages[${owner}]`;
  }
  for (let earlier = index - 1; earlier >= 0; earlier--) {
    if (callsOf(messages[earlier]).some((call) => call.id === id)) {
      return (
        `messages[${index}] is a tool result for a call of messages[${earlier}] that does not follow it: ` +
        'a result must come after the assistant message whose call it answers, with only other results between them'
      );
    }
  }
  return `messages[${index}] is a tool result whose toolCallId answers no earlier call`;
}

/** The error for a call of `messages[owner]` still open when `messages[index]` (not a result) comes. */
function unanswered(messages: readonly unknown[], index: number, owner: number, open: Set<string>, role: string): string {
  const call = callsOf(messages[owner]).find((c) => open.has(c.id))!;
  return (
    `messages[${owner}] has a tool call left without a result: ${JSON.stringify(call.id)} (${call.name}) ` +
    `gets none before messages[${index}], ${role === 'assistant' ? 'an' : 'a'} ${role} message; only the last assistant message may still wait for results`
  );
}

/** The calls of a message the check has already passed. */
function callsOf(message: unknown): readonly CheckedCall[] {
  const { role, toolCalls } = message as { role: string; toolCalls?: CheckedCall[] };
  return role === 'assistant' ? (toolCalls ?? []) : [];
}
