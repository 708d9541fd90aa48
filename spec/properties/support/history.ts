/**
 * The oracle's own check of a history, written from the rules (R4, R21, R22, R29) and not from the code it
 * checks: the properties never call the library's `checkMessages` or `assertValidHistory`, so a mistake in
 * those cannot hide the same mistake in the loop.
 */
import type { AgentMessage } from '../../../src/index.js';

/** What a history handed out may be beyond R4's strict shape. */
export interface HistoryRules {
  /**
   * R22, R29: the last assistant message may still wait for some of its results (a `tool_result`'s history, a
   * run saved while its tools ran): the results after it are some of its calls', in call order.
   */
  waiting?: boolean;
  /**
   * R21: the fields the loop takes back are what the APIs take: string ids and contents, boolean `isError`,
   * names the APIs accept, JSON-object inputs, no id twice in one message.
   */
  fields?: boolean;
}

/** Tool names every model API accepts (R21). */
const API_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * `undefined` for a history a provider takes (R4): each assistant's calls answered by exactly one result each,
 * right after it, in call order, before any other message and before the history ends; no result that answers
 * no call. Else what is wrong, naming the first broken message.
 */
export function historyProblem(messages: readonly AgentMessage[], rules: HistoryRules = {}): string | undefined {
  if (!Array.isArray(messages)) return `the history is not an array`;
  // the assistant whose results come now: its call ids, the next one to answer, and whether one was passed over
  let open: { at: number; ids: string[]; index: Map<string, number>; next: number; skipped: boolean } | undefined;
  const unanswered = () => open !== undefined && (open.skipped || open.next < open.ids.length);
  const missing = () => (open!.skipped ? 'a call' : `call ${open!.ids[open!.next]}`);
  for (let i = 0; i < messages.length; i++) {
    const message: unknown = messages[i];
    const at = `messages[${i}]`;
    if (!isRecord(message)) return `${at} is not an object`;
    if (rules.fields && typeof message['content'] !== 'string') return `${at}.content is not a string`;
    const role = message['role'];
    if (role === 'toolResult') {
      const id = message['toolCallId'];
      if (typeof id !== 'string') return `${at}.toolCallId is not a string`;
      if (rules.fields && typeof message['isError'] !== 'boolean') return `${at}.isError is not a boolean`;
      if (rules.fields && !API_NAME.test(String(message['toolName']))) return `${at}.toolName ${JSON.stringify(message['toolName'])} is not a name the APIs take`;
      if (open === undefined) return `${at} answers ${id}, but no assistant message with calls comes right before it (R4)`;
      const k = open.index.get(id) ?? -1;
      if (k < open.next) {
        return `${at} answers ${id}, ${k >= 0 ? 'a call answered before it or after it in call order' : `no call of messages[${open.at}]`} (R4)`;
      }
      if (k > open.next) {
        if (!rules.waiting) return `${at} answers ${id}, but call ${open.ids[open.next]} of messages[${open.at}] comes first (R4: in call order)`;
        open.skipped = true;
      }
      open.next = k + 1;
      continue;
    }
    if (role !== 'system' && role !== 'user' && role !== 'assistant') return `${at}.role is ${JSON.stringify(role)}`;
    if (unanswered()) return `${at} (${role}) comes before the result of ${missing()} of messages[${open!.at}] (R4)`;
    open = undefined;
    if (role !== 'assistant' || message['toolCalls'] === undefined) continue;
    const calls = message['toolCalls'];
    if (!Array.isArray(calls)) return `${at}.toolCalls is not an array`;
    const ids: string[] = [];
    const index = new Map<string, number>();
    for (let j = 0; j < calls.length; j++) {
      const call: unknown = calls[j];
      const where = `${at}.toolCalls[${j}]`;
      if (!isRecord(call) || typeof call['id'] !== 'string') return `${where} has no string id`;
      if (index.has(call['id'])) return `${where}.id ${call['id']} is an earlier call's of the same message`;
      if (rules.fields && !API_NAME.test(String(call['name']))) return `${where}.name ${JSON.stringify(call['name'])} is not a name the APIs take`;
      if (rules.fields && !isRecord(call['input'])) return `${where}.input is not a JSON object`;
      index.set(call['id'], ids.push(call['id']) - 1);
    }
    if (ids.length > 0) open = { at: i, ids, index, next: 0, skipped: false };
  }
  if (unanswered() && !rules.waiting) return `the history ends before the result of ${missing()} of messages[${open!.at}] (R4)`;
  return undefined;
}

/**
 * `undefined` when `JSON.parse(JSON.stringify(value))` gives the value back (a field set to `undefined` is as
 * good as none); else the path of the first part JSON would change or drop: a function, a symbol, a BigInt, a
 * number that is not finite, an object that is not plain (a Date, a Map), an `undefined` in an array.
 */
export function jsonProblem(value: unknown, path = 'messages'): string | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined;
    case 'number':
      return Number.isFinite(value) ? undefined : `${path} is ${value}`;
    case 'object': {
      if (value === null) return undefined;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          const problem = value[i] === undefined ? `${path}[${i}] is undefined` : jsonProblem(value[i], `${path}[${i}]`);
          if (problem !== undefined) return problem;
        }
        return undefined;
      }
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return `${path} is not a plain object`;
      for (const [key, field] of Object.entries(value)) {
        if (field === undefined) continue;
        const problem = jsonProblem(field, `${path}.${key}`);
        if (problem !== undefined) return problem;
      }
      return undefined;
    }
    default:
      return `${path} is ${typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`}`;
  }
}
