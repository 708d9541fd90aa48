/**
 * The invariants of CONTRACT.md as checks on a {@link RunRecord}. Each throws an Error that says what
 * broke; the properties in `spec/properties/*.spec.ts` call them on generated scenarios.
 */
import type { AgentMessage, LoopEvent, LoopEventOf, ProviderInput, ToolCall, ToolResultMessage } from '../../../src/index.js';
import { HookRun, RunRecord, callsById } from './harness.js';
import { KNOWN_DEFECTS } from './known-defects.js';
import { historyProblem } from './history.js';
import { afterResult, beforeOutcome, prepareFailure } from './model.js';
import { DEFAULT_MAX_TURNS, KEEP_AFTER, inputProblem, isRegistered } from './scenario.js';

export class Violation extends Error {
  override name = 'Violation';
}

function fail(message: string): never {
  throw new Violation(message);
}

const brief = (event: LoopEvent): string => {
  switch (event.type) {
    case 'turn_start':
    case 'turn_end':
      return `${event.type} ${event.turn}`;
    case 'tool_call':
      return `tool_call ${event.call?.id}`;
    case 'tool_start':
      return `tool_start ${event.call.id}`;
    case 'tool_result':
      return `tool_result ${event.message.toolCallId}: ${JSON.stringify(event.message.content).slice(0, 60)}`;
    case 'tool_update':
      return `tool_update ${event.toolCallId}`;
    case 'loop_end':
      return `loop_end ${event.reason}`;
    case 'message_end':
      return `message_end ${event.stopReason}`;
    default:
      return event.type;
  }
};

/** The loop's events, short, for failure messages. */
export function trace(record: RunRecord): string {
  return record.events.map((e, i) => `#${i} t=${Math.round(e.at)} ${brief(e.event)}`).join('\n');
}

function eventsOf<T extends LoopEvent['type']>(record: RunRecord, type: T): LoopEventOf<T>[] {
  return record.events.map((e) => e.event).filter((e): e is LoopEventOf<T> => e.type === type);
}

// ---------------------------------------------------------------------------------------------
// never errors; exactly one loop_end, last (R7, R9, R10)

export function checkEnds(record: RunRecord): void {
  if (record.error !== undefined) fail(`the loop errored: ${String(record.error)}\n${trace(record)}`);
  if (record.hung) fail(`the loop never ended (no completion, no unsubscribe)\n${trace(record)}`);
  if (record.rxjsNotes.length > 0) fail(`rxjs reported: ${record.rxjsNotes.join('; ')}`);
  const events = record.events.map((e) => e.event);
  const ends = events.filter((e) => e.type === 'loop_end');
  const unsubscribed = record.unsubscribedAfter !== undefined;
  if (!unsubscribed) {
    if (!record.completed) fail(`the loop did not complete\n${trace(record)}`);
    if (ends.length !== 1) fail(`${ends.length} loop_end events, expected exactly one\n${trace(record)}`);
  } else if (ends.length > 1) {
    fail(`${ends.length} loop_end events\n${trace(record)}`);
  }
  if (ends.length === 1 && events[events.length - 1]!.type !== 'loop_end') fail(`loop_end is not the last event\n${trace(record)}`);
  if (record.afterLoopEnd.length > 0) {
    const end = ends[0] as LoopEventOf<'loop_end'> | undefined;
    const aborted = new Set(end?.messages.flatMap((m) => (m.role === 'toolResult' && m.content === 'error: aborted' ? [m.toolCallId] : [])));
    const d5 =
      KNOWN_DEFECTS.resultAfterLoopEnd &&
      record.afterLoopEnd.every((e) => (e.type === 'tool_result' && aborted.has(e.message.toolCallId)) || (e.type === 'tool_update' && aborted.has(e.toolCallId)));
    if (!d5) fail(`${record.afterLoopEnd.length} event(s) after loop_end: ${record.afterLoopEnd.map(brief).join(', ')}\n${trace(record)}`);
  }

  // turns: turn_start n … turn_end n, numbered from 1, never interleaved
  let open: number | undefined;
  let last = 0;
  for (const event of events) {
    if (event.type === 'turn_start') {
      if (open !== undefined) fail(`turn_start ${event.turn} while turn ${open} is still open\n${trace(record)}`);
      if (event.turn !== last + 1) fail(`turn_start ${event.turn} after turn ${last}\n${trace(record)}`);
      open = event.turn;
    } else if (event.type === 'turn_end') {
      if (open !== event.turn) fail(`turn_end ${event.turn} without its turn_start\n${trace(record)}`);
      last = event.turn;
      open = undefined;
    } else if (event.type === 'loop_end') {
      if (open !== undefined) fail(`loop_end while turn ${open} is open\n${trace(record)}`);
    } else if (open === undefined) {
      fail(`${brief(event)} outside a turn\n${trace(record)}`);
    }
  }
  if (ends.length === 1) {
    const end = ends[0] as LoopEventOf<'loop_end'>;
    const turnEnds = eventsOf(record, 'turn_end');
    const lastTurn = turnEnds[turnEnds.length - 1];
    const expectedMessages = lastTurn ? lastTurn.messages : record.callerSnapshot;
    expect(end.messages).toEqual(expectedMessages);
  }
}

// ---------------------------------------------------------------------------------------------
// every messages handed out is provider-valid (R4, R11)

/** Each assistant's calls are followed, directly, by exactly one result each, in call order; no result without its call (R4). */
export function providerValidity(messages: readonly AgentMessage[]): string | undefined {
  return historyProblem(messages);
}

/** H6: the provider calls whose input prepareTurn compacted: they need not start with the caller's messages. */
function compactedInputs(record: RunRecord): Set<unknown> {
  return new Set(
    record.hooks.filter((h) => h.hook === 'prepareTurn' && h.spec.answer.kind === 'value' && (h.spec.answer.value as { kind: string }).kind === 'compact').map((h) => h.value),
  );
}

/** The empty answer that stands in when a turn was aborted before any model call (R7, H6). */
const STAND_IN = { role: 'assistant', content: '', stopReason: 'aborted', errorMessage: 'aborted' };

export function checkValidHistories(record: RunRecord): void {
  const compacted = compactedInputs(record);
  const handedOut: { what: string; messages: readonly AgentMessage[]; prefix: boolean }[] = [
    ...record.providerCalls.map((c) => ({ what: `the provider input of turn ${c.turn}`, messages: c.input.messages, prefix: !compacted.has(c.input) })),
    ...eventsOf(record, 'turn_end').map((e) => ({ what: `turn_end ${e.turn}`, messages: e.messages, prefix: true })),
    ...eventsOf(record, 'loop_end').map((e) => ({ what: 'loop_end', messages: e.messages, prefix: true })),
  ];
  const seen = new Set<unknown>([record.callerMessages]);
  for (const { what, messages, prefix } of handedOut) {
    const problem = providerValidity(messages);
    if (problem) fail(`${what}: ${problem}\n${JSON.stringify(messages, null, 1)}`);
    if (seen.has(messages)) fail(`${what} is an array handed out before (or the caller's own)`);
    seen.add(messages);
    if (!prefix) continue;
    record.callerElements.forEach((m, i) => {
      if (messages[i] !== m) fail(`${what} does not start with the caller's messages (#${i} differs)`);
    });
  }
  // a history saved as JSON and read back is still one a provider takes (R4), and, when the provider's calls
  // had object inputs, one the loop takes back (R21); the last one handed out (each earlier one is a prefix of it)
  for (const { what, messages } of handedOut.slice(-1).filter((h) => h.prefix)) {
    const copy = JSON.parse(JSON.stringify(messages)) as AgentMessage[];
    const problem = providerValidity(copy);
    if (problem) fail(`${what}, after a JSON round trip: ${problem}`);
    const objectInputs = copy.every((m) => m.role !== 'assistant' || (m.toolCalls ?? []).every((c) => typeof c.input === 'object' && c.input !== null && !Array.isArray(c.input)));
    if (objectInputs) {
      const refused = historyProblem(copy, { fields: true });
      if (refused) fail(`${what}, after a JSON round trip, is not one the loop takes back (R21): ${refused}`);
    }
  }

  // per finished turn: one tool_result event per call, and turn_end agrees with the events
  let turnEvents: LoopEvent[] = [];
  let before: readonly AgentMessage[] = record.callerSnapshot;
  for (const { event } of record.events) {
    if (event.type === 'turn_start') turnEvents = [];
    turnEvents.push(event);
    if (event.type !== 'turn_end') continue;
    const callEvents = turnEvents.filter((e): e is LoopEventOf<'tool_call'> => e.type === 'tool_call').map((e) => e.call);
    const calls = event.assistant.toolCalls ?? [];
    // the calls the loop accepted are the tool_call events it re-emitted before the provider broke the protocol
    if (calls.length > callEvents.length) fail(`turn ${event.turn}: assistant has ${calls.length} calls, only ${callEvents.length} tool_call events`);
    calls.forEach((call, i) => {
      if (call === callEvents[i]) return;
      // R28: a repeated id is kept under an id of its own, the call otherwise as the provider sent it
      const sent = callEvents[i]!;
      if (!/^\d+$/.test(call.id.slice(`${sent.id}_dup`.length)) || !call.id.startsWith(`${sent.id}_dup`) || !callEvents.slice(0, i).some((c) => c.id === sent.id)) {
        fail(`turn ${event.turn}: assistant.toolCalls[${i}] is not the ${i}-th tool_call event`);
      }
      expect(call).toEqual({ ...sent, id: call.id });
    });
    const resultEvents = turnEvents.filter((e): e is LoopEventOf<'tool_result'> => e.type === 'tool_result').map((e) => e.message);
    const ids = resultEvents.map((m) => m.toolCallId).sort();
    const callIds = calls.map((c) => c.id).sort();
    if (JSON.stringify(ids) !== JSON.stringify(callIds)) {
      fail(`turn ${event.turn}: tool_result events for [${ids}], calls [${callIds}]\n${trace(record)}`);
    }
    if (new Set(callIds).size !== callIds.length) fail(`turn ${event.turn}: two calls share an id in the history: [${callIds}] (R28)`);
    if (event.toolResults.length !== calls.length) fail(`turn ${event.turn}: ${event.toolResults.length} toolResults for ${calls.length} calls`);
    event.toolResults.forEach((result, i) => {
      if (result.toolCallId !== calls[i]!.id) fail(`turn ${event.turn}: toolResults[${i}] is for ${result.toolCallId}, call #${i} is ${calls[i]!.id}`);
      const fromEvent = resultEvents.find((m) => m.toolCallId === result.toolCallId);
      expect(result).toEqual(fromEvent);
    });
    const tail = event.messages.slice(event.messages.length - 1 - calls.length);
    if (event.messages[event.messages.length - 1 - calls.length] !== event.assistant && record.scenario.hooks?.prepare) {
      // H6: aborted while prepareTurn waited: the empty answer stands in, outside the history
      expect(event.assistant).toEqual(STAND_IN);
      expect({ turn: event.turn, messages: event.messages }).toEqual({ turn: event.turn, messages: before });
    } else {
      expect(tail).toEqual([event.assistant, ...event.toolResults]);
    }
    before = event.messages;
  }
}

// ---------------------------------------------------------------------------------------------
// tool_start (R23)

/**
 * R23: `tool_start` says that a call's handler really starts. Within a turn, for each call id:
 * - at most one `tool_start`, and the handler is called right after it (the last event the consumer had
 *   received is that `tool_start`), unless the consumer cancelled while it was being delivered;
 * - every handler run (before the loop ended) came right after its call's `tool_start`;
 * - after a `tool_start`, nothing of that call but `tool_update`s until its one `tool_result`; a turn that
 *   ended has that `tool_result`; no `tool_update` before the `tool_start` or after the result;
 * - a `tool_result` without a `tool_start` is a call whose handler never ran (an unknown tool, a refused
 *   input, a repeated id, an abort before its slot came).
 */
export function checkToolStarts(record: RunRecord): void {
  const events = record.events.map((e) => e.event);
  let calls = new Map<string, 'started' | 'done'>();
  events.forEach((event, i) => {
    switch (event.type) {
      case 'turn_start':
        calls = new Map();
        return;
      case 'tool_start': {
        const id = event.call.id;
        if (calls.has(id)) fail(`R23: tool_start ${id} (#${i}) ${calls.get(id) === 'done' ? 'after its tool_result' : 'a second time'}\n${trace(record)}`);
        calls.set(id, 'started');
        const cancelledHere = record.unsubscribedAfter === i + 1 || record.abortedAfter === i + 1;
        const ran = record.tools.some((run) => run.call.id === id && run.calledAfterEvents === i + 1);
        if (!ran && !cancelledHere) fail(`R23: tool_start ${id} (#${i}), but its handler was not called right after it\n${trace(record)}`);
        return;
      }
      case 'tool_update': {
        const state = calls.get(event.toolCallId);
        if (state !== 'started') fail(`R23: tool_update ${event.toolCallId} (#${i}) ${state === 'done' ? 'after its tool_result' : 'before its tool_start'}\n${trace(record)}`);
        return;
      }
      case 'tool_result': {
        const id = event.message.toolCallId;
        const state = calls.get(id);
        if (state === 'done') fail(`R23: a second tool_result for ${id} (#${i})\n${trace(record)}`);
        calls.set(id, 'done');
        if (state === undefined && record.tools.some((run) => run.call.id === id && !run.afterEnd)) {
          fail(`R23: tool_result ${id} (#${i}) without a tool_start, but its handler ran\n${trace(record)}`);
        }
        return;
      }
      case 'turn_end':
        for (const [id, state] of calls) if (state === 'started') fail(`R23: turn_end ${event.turn}, but tool_start ${id} has no tool_result\n${trace(record)}`);
        return;
      default:
        return;
    }
  });
  for (const run of record.tools) {
    if (run.afterEnd) continue; // a handler run after the end is checkNoLeaks' and checkAbort's to report
    const before = events[run.calledAfterEvents - 1];
    if (before?.type !== 'tool_start' || before.call.id !== run.call.id) {
      fail(`R23: the handler of ${run.call.id} was called after event #${run.calledAfterEvents - 1} (${before === undefined ? 'none' : brief(before)}), not right after its tool_start\n${trace(record)}`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// the cap (R8)

export function checkCap(record: RunRecord): void {
  const maxTurns = record.scenario.maxTurns ?? DEFAULT_MAX_TURNS;
  const subscriptions = record.providerCalls.reduce((n, c) => n + c.subscriptions, 0);
  if (record.providerCalls.length > maxTurns) fail(`the provider was called ${record.providerCalls.length} times, maxTurns ${maxTurns}`);
  if (subscriptions > maxTurns) fail(`the provider was subscribed ${subscriptions} times, maxTurns ${maxTurns}`);
  const twice = record.providerCalls.find((c) => c.subscriptions > 1);
  if (twice) fail(`the provider Observable of turn ${twice.turn} was subscribed ${twice.subscriptions} times`);
  const turns = eventsOf(record, 'turn_start').length;
  if (turns > maxTurns) fail(`${turns} turns, maxTurns ${maxTurns}`);
  const end = eventsOf(record, 'loop_end')[0];
  if (end?.reason === 'maxTurns' && eventsOf(record, 'turn_end').length !== maxTurns) {
    fail(`loop_end maxTurns after ${eventsOf(record, 'turn_end').length} turns, maxTurns ${maxTurns}`);
  }
  // the loop never stops silently at the cap: a last turn that asked to go on ends with maxTurns
  const turnEnds = eventsOf(record, 'turn_end');
  const last = turnEnds[turnEnds.length - 1];
  if (end && last && last.turn === maxTurns && last.assistant.stopReason === 'toolUse' && last.toolResults.length > 0) {
    const terminated = end.reason === 'terminated';
    if (!terminated && end.reason !== 'maxTurns' && end.reason !== 'aborted') fail(`the cap was reached, but loop_end says ${end.reason}`);
  }
}

// ---------------------------------------------------------------------------------------------
// nothing left running (R11, R16)

export function checkNoLeaks(record: RunRecord): void {
  if (record.hung) fail(`the loop never ended\n${trace(record)}`);
  if (record.leaks.length > 0) fail(`left running after the loop ended:\n- ${record.leaks.join('\n- ')}\n${trace(record)}`);
  // D2: an unsubscribe while turn_start is delivered, or during the loop's synchronous start, is not honoured at once
  const lastEvent = record.events[record.events.length - 1]?.event;
  const d2 =
    KNOWN_DEFECTS.unsubscribeNotHonouredAtOnce &&
    record.unsubscribedAfter !== undefined &&
    ((lastEvent?.type === 'turn_start' && record.unsubscribedAfter === record.events.length) || record.unsubscribedDuringSubscribe === true);
  const lateProvider = record.providerCalls.find((c) => c.afterEnd);
  if (lateProvider && !d2) fail(`the provider was called for turn ${lateProvider.turn} after the loop had ended`);
  const lateSubscription = record.providerCalls.find((c) => c.subscribedAfterEnd);
  if (lateSubscription && !d2) fail(`the provider Observable of turn ${lateSubscription.turn} was subscribed after the loop had ended`);
  const lateTool = record.tools.find((t) => t.afterEnd);
  if (lateTool && !d2) fail(`tool call ${lateTool.call.id} started after the loop had ended`);
}

// ---------------------------------------------------------------------------------------------
// the caller's messages (R1)

export function checkCallerUntouched(record: RunRecord): void {
  if (record.callerMessages.length !== record.callerElements.length) fail(`the caller's messages array changed length`);
  record.callerElements.forEach((m, i) => {
    if (record.callerMessages[i] !== m) fail(`the caller's messages[${i}] was replaced`);
  });
  expect(record.callerMessages).toEqual(record.callerSnapshot);
}

/** What two runs of the same scenario must agree on. Virtual time: everything, with times. */
export function comparable(record: RunRecord, withTimes: boolean): unknown {
  const events = record.events.map(({ at, event }) => (withTimes ? { at, event } : event));
  // a failure's stack (R25) names the code path that ran, which is not part of the run's outcome
  return withoutStacks({
    events: withTimes ? events : undefined,
    end: eventsOf(record, 'loop_end')[0],
    providerInputs: record.providerCalls.map((c) => c.input.messages),
  });
}

function withoutStacks(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value ?? null, (key, v: unknown) => (key === 'stack' ? undefined : v)));
}

// ---------------------------------------------------------------------------------------------
// the text (R2, R4, R10)

const PROVIDER_TYPES = new Set(['message_start', 'text_delta', 'tool_call', 'message_end']);

/**
 * R2 and R4: each turn re-emits the provider's own events, as sent, up to the first protocol fault (all of
 * them, unless the turn was cut short by an abort or an unsubscribe: then the ones before that); the
 * assistant's text is the joined text of the `text_delta`s among them.
 */
export function checkText(record: RunRecord): void {
  let turn = 0;
  let startIndex = 0;
  let reemitted: LoopEvent[] = [];
  const cutShort = (from: number, to: number) =>
    (record.abortedAfter !== undefined && record.abortedAfter > from && record.abortedAfter <= to) ||
    (record.unsubscribedAfter !== undefined && record.unsubscribedAfter <= to);
  const compare = (endIndex: number) => {
    const call = record.providerCalls.find((c) => c.turn === turn);
    const accepted = call ? call.sent.slice(0, call.faultAt ?? call.sent.length) : [];
    const prefix = reemitted.length <= accepted.length && reemitted.every((e, i) => e === accepted[i]);
    if (!prefix || (!cutShort(startIndex, endIndex) && reemitted.length !== accepted.length)) {
      fail(`turn ${turn}: the loop re-emitted ${reemitted.length} provider events, the provider sent ${accepted.length} before any fault\n${trace(record)}`);
    }
  };
  record.events.forEach(({ event }, index) => {
    if (event.type === 'turn_start') {
      turn = event.turn;
      startIndex = index;
      reemitted = [];
    } else if (PROVIDER_TYPES.has(event.type)) {
      reemitted.push(event);
    } else if (event.type === 'turn_end') {
      compare(index);
      const text = reemitted.map((e) => (e.type === 'text_delta' ? e.text : '')).join('');
      if (event.assistant.content !== text) {
        fail(`turn ${turn}: assistant content ${JSON.stringify(event.assistant.content)}, the provider's accepted text_deltas say ${JSON.stringify(text)}`);
      }
      turn = 0;
    }
  });
  if (turn !== 0) compare(record.events.length);

  const end = eventsOf(record, 'loop_end')[0];
  const turnEnds = eventsOf(record, 'turn_end');
  const last = turnEnds[turnEnds.length - 1];
  if (end && last && end.assistant !== last.assistant) {
    // only an abort between turns puts an assistant in loop_end that no turn produced (R7, R11)
    if (!(end.reason === 'aborted' && end.assistant.content === '' && end.assistant.stopReason === 'aborted')) {
      fail(`loop_end.assistant is not the last turn's assistant`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// the caller's signal (R11)

export function checkAbort(record: RunRecord): void {
  if (record.abortedAfter === undefined) return;
  const events = record.events.map((e) => e.event);
  if (record.abortedAfter === -1) {
    if (record.providerCalls.length > 0) fail('the signal was aborted before subscribe, yet the provider was called');
    expect(events).toEqual([
      { type: 'loop_end', reason: 'aborted', assistant: { role: 'assistant', content: '', stopReason: 'aborted', errorMessage: 'aborted' }, messages: record.callerSnapshot, usage: { inputTokens: 0, outputTokens: 0 } },
    ]);
    return;
  }
  const afterAbort = record.providerCalls.find((c) => c.afterAbort);
  if (afterAbort) fail(`the provider was called for turn ${afterAbort.turn} after the signal had aborted\n${trace(record)}`);
  // D2: an abort from inside the provider function call is not honoured before its Observable is subscribed
  const d2 = KNOWN_DEFECTS.unsubscribeNotHonouredAtOnce && record.scenario.cancel?.at !== 'before' && 'providerCall' in (record.scenario.cancel?.at ?? {});
  const subscribedAfterAbort = record.providerCalls.find((c) => c.subscribedAfterAbort);
  if (subscribedAfterAbort && !d2) fail(`the provider Observable of turn ${subscribedAfterAbort.turn} was subscribed after the signal had aborted\n${trace(record)}`);
  const toolAfterAbort = record.tools.find((t) => t.afterAbort);
  if (toolAfterAbort) fail(`tool call ${toolAfterAbort.call.id} started after the signal had aborted\n${trace(record)}`);
  const lateTurn = events.findIndex((e, i) => i >= record.abortedAfter! && e.type === 'turn_start');
  if (lateTurn >= 0) fail(`a turn started (event #${lateTurn}) after the signal had aborted (after event #${record.abortedAfter - 1})\n${trace(record)}`);
  let finalTurnEnd = -1;
  events.forEach((e, i) => {
    if (e.type === 'turn_end') finalTurnEnd = i;
  });
  const end = eventsOf(record, 'loop_end')[0];
  if (finalTurnEnd >= 0 && record.abortedAfter <= finalTurnEnd) {
    const turnEnd = events[finalTurnEnd] as LoopEventOf<'turn_end'>;
    if (turnEnd.assistant.stopReason !== 'aborted') fail(`aborted during turn ${turnEnd.turn}, but its assistant says ${turnEnd.assistant.stopReason}\n${trace(record)}`);
    if (end && end.reason !== 'aborted') fail(`aborted during the last turn, but loop_end says ${end.reason}\n${trace(record)}`);
    for (const result of turnEnd.toolResults) {
      if (result.isError !== true && result.content === 'error: aborted') fail(`an aborted result without isError`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// usage (R27)

/**
 * R27: every `turn_end` and the `loop_end` carry the running totals of the `message_end.usage` the loop
 * re-emitted before them; zeros where none reported any; the cache count once one did.
 */
export function checkUsage(record: RunRecord): void {
  const total = { inputTokens: 0, outputTokens: 0 } as { inputTokens: number; outputTokens: number; cacheReadTokens?: number };
  for (const { event } of record.events) {
    if (event.type === 'message_end' && event.usage !== undefined) {
      total.inputTokens += event.usage.inputTokens;
      total.outputTokens += event.usage.outputTokens;
      if (event.usage.cacheReadTokens !== undefined) total.cacheReadTokens = (total.cacheReadTokens ?? 0) + event.usage.cacheReadTokens;
    }
    if (event.type === 'turn_end' || event.type === 'loop_end') {
      if (JSON.stringify(event.usage) !== JSON.stringify(total)) {
        throw new Error(`R27: ${event.type} usage ${JSON.stringify(event.usage)}, but the message_end usage so far sums to ${JSON.stringify(total)}`);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// the turns of a run, and the calls' slots (R3, H1)

interface TurnSpan {
  turn: number;
  /** index of its turn_start */
  start: number;
  /** index of its turn_end, or undefined when the run stopped inside it */
  end?: number;
  /** index of its last event */
  last: number;
  /** the history as of its start: the last turn_end's, or the caller's */
  history: readonly AgentMessage[];
}

function turnsOf(record: RunRecord): TurnSpan[] {
  const spans: TurnSpan[] = [];
  let history: readonly AgentMessage[] = record.callerElements;
  record.events.forEach(({ event }, i) => {
    if (event.type === 'turn_start') spans.push({ turn: event.turn, start: i, last: i, history });
    const open = spans[spans.length - 1];
    if (open === undefined || open.end !== undefined) return;
    if (event.type !== 'loop_end') open.last = i;
    if (event.type === 'turn_end') {
      open.end = i;
      history = event.messages;
    }
  });
  return spans;
}

/** How many events had been received when the run was cancelled (aborted or unsubscribed); Infinity if never. */
function cancelledAt(record: RunRecord): number {
  return Math.min(record.abortedAfter ?? Infinity, record.unsubscribedAfter ?? Infinity);
}

/** A turn's calls in arrival order (the tool_call events the loop re-emitted), each with what the loop's checks make of it. */
function callsOfTurn(record: RunRecord, span: TurnSpan, specs = callsById(record.scenario)): { index: number; call: ToolCall; dup: boolean; hookable: boolean }[] {
  const ids = new Set<string>();
  const calls: { index: number; call: ToolCall; dup: boolean; hookable: boolean }[] = [];
  for (let i = span.start; i <= span.last; i++) {
    const event = record.events[i]!.event;
    if (event.type !== 'tool_call') continue;
    const dup = ids.has(event.call.id);
    ids.add(event.call.id);
    const spec = specs.get(event.call.id);
    // H2: the hooks see the calls the loop would run: known, with an input its checks pass, not a duplicate (R28)
    const hookable = !dup && spec !== undefined && isRegistered(record.scenario, spec.name) && inputProblem(spec.name, spec.input) === undefined;
    calls.push({ index: i, call: event.call, dup, hookable });
  }
  return calls;
}

const hooksOfTurn = (record: RunRecord, span: TurnSpan, hook: HookRun['hook']) =>
  record.hooks.filter((h) => h.hook === hook && h.calledAfterEvents > span.start && h.calledAfterEvents <= span.last + 1);

/**
 * R3 and H1: a call takes a slot when it can (at once in parallel mode; under `maxConcurrency` or in sequential
 * mode when one frees, in call order) and holds it until its `tool_result` — through its hooks' waits too. A
 * call that gets its slot starts there and then: `beforeToolCall` is asked (with the hook), or its `tool_start`
 * is the next event (a known, valid call), or its result is (one the loop refuses). Played from the events,
 * up to a cancellation.
 */
export function checkSlots(record: RunRecord): void {
  const { scenario } = record;
  const concurrency = scenario.toolExecution === 'sequential' ? 1 : (scenario.maxConcurrency ?? Infinity);
  const asked = scenario.hooks?.before === true;
  const cancelAt = cancelledAt(record);
  const events = record.events.map((e) => e.event);
  const specs = callsById(scenario);
  for (const span of turnsOf(record)) {
    const calls = new Map(callsOfTurn(record, span, specs).filter((c) => !c.dup).map((c) => [c.index, c]));
    const queue: { id: string; hookable: boolean }[] = [];
    const running = new Set<string>();
    const asks = asked ? hooksOfTurn(record, span, 'beforeToolCall') : [];
    let next = 0;
    let expected: { type: 'tool_start' | 'tool_result'; id: string } | undefined;
    const where = (i: number) => `(event #${i}, turn ${span.turn}, ${concurrency === Infinity ? 'no limit' : `${concurrency} slot(s)`})\n${trace(record)}`;
    for (let i = span.start + 1; i <= span.last; i++) {
      const event = events[i]!;
      if (expected !== undefined) {
        const id = event.type === 'tool_start' ? event.call.id : event.type === 'tool_result' ? event.message.toolCallId : undefined;
        if (event.type !== expected.type || id !== expected.id) fail(`R3: call ${expected.id} had its slot, but the next event is not its ${expected.type} ${where(i)}`);
        expected = undefined;
      }
      const call = calls.get(i);
      if (call !== undefined) queue.push({ id: call.call.id, hookable: call.hookable });
      if (event.type === 'tool_start') {
        const id = event.call.id;
        if (asked) {
          if (!running.has(id)) fail(`H1: tool_start ${id}, but beforeToolCall was not asked for it in its slot ${where(i)}`);
        } else {
          if (queue[0]?.id !== id || running.size >= concurrency) fail(`R3: tool_start ${id} without a free slot, or out of call order ${where(i)}`);
          queue.shift();
          running.add(id);
        }
      }
      if (event.type === 'tool_result') {
        const { toolCallId: id, content } = event.message;
        const queued = queue.findIndex((q) => q.id === id);
        if (running.has(id)) running.delete(id);
        else if (queued === 0 && !queue[0]!.hookable && running.size < concurrency) queue.shift(); // refused at once in its slot
        else if (queued >= 0 && content === 'error: aborted' && i >= cancelAt - 1) queue.splice(queued, 1);
        else if (queued >= 0 || !/_dup\d+$/.test(id)) fail(`R3: tool_result ${id}, but the call never had a slot ${where(i)}`);
      }
      // what the loop did once event i was delivered: ask for the calls that got a slot
      const gap = i + 1;
      while (next < asks.length && asks[next]!.calledAfterEvents <= gap) {
        const ask = asks[next++]!;
        if (ask.calledAfterEvents < gap) fail(`H1: beforeToolCall was asked for ${ask.id} after event #${ask.calledAfterEvents - 1}, before its tool_call ${where(i)}`);
        if (queue[0]?.id !== ask.id || running.size >= concurrency) fail(`H1: beforeToolCall was asked for ${ask.id} without a free slot, or out of call order ${where(i)}`);
        queue.shift();
        running.add(ask.id!);
      }
      if (gap >= cancelAt || queue.length === 0 || running.size >= concurrency) continue;
      const head = queue[0]!;
      if (head.hookable && asked) fail(`H1: call ${head.id} had a free slot after event #${i}, but beforeToolCall was not asked ${where(i)}`);
      expected = { type: head.hookable ? 'tool_start' : 'tool_result', id: head.id };
    }
    if (expected !== undefined && span.end !== undefined) fail(`R3: call ${expected.id} had its slot, but its ${expected.type} never came (turn ${span.turn})\n${trace(record)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// hooks (H1–H6)

const isAborted = (m: ToolResultMessage | undefined) => m?.content === 'error: aborted' && m.isError;

/** `actual` equals `expected`: the same objects (most often, and fast), else deep equality (with its diff on failure). */
function same(label: string, actual: unknown, expected: unknown): void {
  if (actual === expected) return;
  if (Array.isArray(actual) && Array.isArray(expected) && actual.length === expected.length && actual.every((a, i) => a === expected[i])) return;
  expect({ [label]: actual }).toEqual({ [label]: expected });
}
const hookName = (h: HookRun) => `${h.hook}${h.id === undefined ? ` of turn ${h.context.turn}` : ` of ${h.id}`}`;

/**
 * What the hooks see and what becomes of their answers, under every cancellation:
 * - each hook is asked in its turn, with that turn and (tool hooks) the history as of its start, never after
 *   a cancellation; beforeToolCall once per known, valid, non-duplicate call at most (exactly once without a
 *   cancellation), afterToolCall once per result of a call that reached beforeToolCall — never `error: aborted`;
 * - a denied or answered call has no tool_start and its handler never runs; a call to run gets its tool_start
 *   as soon as the hook answers, on the input the hook gave, and its handler gets that input;
 * - the results: what the decision says, then what afterToolCall makes of it (support/model.ts);
 * - prepareTurn: asked right after each turn_start; what it gives is the provider's input (the very object);
 *   failing, the turn ends as a failed provider call would, with no provider call; torn down, the turn ends
 *   with the aborted stand-in outside the history;
 * - a hook the loop stopped waiting for saw its signal abort; one that answered never did.
 */
export function checkHooks(record: RunRecord): void {
  const { scenario } = record;
  const hooks = scenario.hooks;
  if (hooks === undefined) {
    if (record.hooks.length > 0) fail(`a hook was called, but the scenario has none`);
    return;
  }
  if (record.hung) return; // checkEnds says so
  const events = record.events.map((e) => e.event);
  const cancelAt = cancelledAt(record);
  const cancelled = cancelAt !== Infinity;
  const specs = callsById(scenario);

  for (const run of record.hooks) {
    if (run.afterAbort || run.afterEnd) fail(`${hookName(run)} was asked after the loop was cancelled or ended (after event #${run.calledAfterEvents - 1})\n${trace(record)}`);
    // H5: the signal (read now when the hook did not read it at once) aborts exactly when the loop stopped waiting
    const signal = run.signal ?? run.context.signal;
    if (run.answered && signal.aborted) fail(`H5: ${hookName(run)} answered, yet its signal aborted\n${trace(record)}`);
    if (!run.answered && !signal.aborted) fail(`H5: the loop stopped waiting for ${hookName(run)}, but its signal did not abort\n${trace(record)}`);
    if (!run.answered && !cancelled) fail(`${hookName(run)} never answered, and the loop ended without a cancellation\n${trace(record)}`);
  }

  for (const span of turnsOf(record)) {
    const context = (run: HookRun, withMessages: boolean) => {
      if (run.context.turn !== span.turn) fail(`${hookName(run)} was told turn ${run.context.turn}, asked in turn ${span.turn}`);
      if (withMessages) same(`${hookName(run)}: context.messages`, run.context.messages, span.history);
    };
    const eventsOfTurn = events.slice(span.start, span.last + 1).map((event, k) => ({ event, i: span.start + k }));
    const resultOf = (id: string) => eventsOfTurn.find(({ event }) => event.type === 'tool_result' && event.message.toolCallId === id) as { event: LoopEventOf<'tool_result'>; i: number } | undefined;
    const startOf = (id: string) => eventsOfTurn.find(({ event }) => event.type === 'tool_start' && event.call.id === id) as { event: LoopEventOf<'tool_start'>; i: number } | undefined;
    const handlerRan = (id: string) => record.tools.find((t) => t.call.id === id);

    // H6: prepareTurn
    const prepares = hooksOfTurn(record, span, 'prepareTurn');
    const providerCalls = record.providerCalls.filter((c) => c.calledAfterEvents > span.start && c.calledAfterEvents <= span.last + 1);
    if (!hooks.prepare || span.turn === 0) {
      if (prepares.length > 0) fail(`prepareTurn was asked in turn ${span.turn}`);
    } else if (prepares.length > 1) {
      fail(`prepareTurn was asked ${prepares.length} times in turn ${span.turn}`);
    } else if (prepares.length === 0) {
      if (cancelAt > span.start + 1) fail(`H6: turn ${span.turn} started, but prepareTurn was not asked\n${trace(record)}`);
    } else {
      const prepare = prepares[0]!;
      context(prepare, false);
      if (prepare.calledAfterEvents !== span.start + 1) fail(`H6: prepareTurn of turn ${span.turn} was asked after event #${prepare.calledAfterEvents - 1}, not right after turn_start`);
      same(`${hookName(prepare)}: input.messages`, (prepare.given as ProviderInput).messages, span.history);
      // an answer after the loop was cancelled (the hook cancelled it from inside) counts for nothing
      const answered = prepare.answered && prepare.answeredAfterCancel !== true;
      const failure = answered ? prepareFailure(prepare.spec.answer as never) : undefined;
      const turnEnd = span.end === undefined ? undefined : (events[span.end] as LoopEventOf<'turn_end'>);
      if (answered && failure === undefined) {
        if (providerCalls.length !== 1 || providerCalls[0]!.input !== prepare.value) fail(`H6: prepareTurn of turn ${span.turn} answered, but the provider was not called with what it gave\n${trace(record)}`);
        if (providerCalls[0]!.turn !== span.turn) fail(`H6: the provider call of turn ${span.turn} played turn ${providerCalls[0]!.turn}`);
      } else {
        if (providerCalls.length > 0) fail(`H6: prepareTurn of turn ${span.turn} ${answered ? 'failed' : 'never answered before the cancellation'}, yet the provider was called\n${trace(record)}`);
        if (turnEnd !== undefined && answered) {
          expect(turnEnd.assistant).toEqual({ role: 'assistant', content: '', stopReason: 'error', errorMessage: failure });
          expect(turnEnd.messages).toEqual([...span.history, turnEnd.assistant]);
        }
        if (turnEnd !== undefined && !answered) {
          expect(turnEnd.assistant).toEqual(STAND_IN);
          expect(turnEnd.messages).toEqual(span.history);
        }
        if (turnEnd !== undefined && turnEnd.toolResults.length > 0) fail(`H6: turn ${span.turn} made no provider call, yet has tool results`);
      }
    }

    // H2, H3: the tool hooks
    const calls = callsOfTurn(record, span, specs);
    const befores = hooksOfTurn(record, span, 'beforeToolCall');
    const afters = hooksOfTurn(record, span, 'afterToolCall');
    for (const run of [...befores, ...afters]) {
      context(run, true);
      const call = calls.find((c) => c.call.id === run.id && !c.dup);
      if (call === undefined || !call.hookable) fail(`${hookName(run)}: not a known, valid, non-duplicate call of turn ${span.turn}`);
      if (call.index >= run.calledAfterEvents) fail(`${hookName(run)} was asked before its tool_call`);
      if ([...befores, ...afters].some((other) => other !== run && other.hook === run.hook && other.id === run.id)) fail(`${hookName(run)} was asked twice\n${trace(record)}`);
    }
    for (const call of calls) {
      if (call.dup || !call.hookable) continue;
      const id = call.call.id;
      const spec = specs.get(id)!;
      const before = befores.find((h) => h.id === id);
      const after = afters.find((h) => h.id === id);
      const result = resultOf(id);
      const start = startOf(id);
      const what = `call ${id} (turn ${span.turn})`;
      // the result the call has before afterToolCall, when the decision makes it without running the handler
      let pre: ToolResultMessage | undefined;

      if (hooks.before) {
        if (before === undefined) {
          // never asked: it never had its slot before the run was cancelled
          if (!cancelled) fail(`H2: beforeToolCall was never asked for ${what}\n${trace(record)}`);
          if (start !== undefined || handlerRan(id)) fail(`H2: ${what} ran without beforeToolCall being asked`);
          if (result !== undefined && !isAborted(result.event.message)) fail(`H2: ${what} has a result without beforeToolCall being asked\n${trace(record)}`);
          if (after !== undefined) fail(`H3: afterToolCall was asked for ${what}, which never reached beforeToolCall`);
          continue;
        }
        same(`${hookName(before)}: call`, before.given, call.call);
        if (!before.answered || before.answeredAfterCancel) {
          if (start !== undefined || handlerRan(id)) fail(`H5: ${what} ran, though beforeToolCall never answered\n${trace(record)}`);
          if (result !== undefined && !isAborted(result.event.message)) fail(`H5: ${what} has a result other than error: aborted, though beforeToolCall never answered\n${trace(record)}`);
          if (after !== undefined) fail(`H3: afterToolCall was asked for ${what}, whose beforeToolCall never answered`);
          continue;
        }
        const outcome = beforeOutcome(spec, before.spec.answer as never);
        if (outcome.runs) {
          const input = outcome.rewritten ? (before.value as { input: unknown }).input : call.call.input;
          // R23: the tool_start comes as soon as the hook answered, with the input it gave
          if (start === undefined && cancelAt > before.answeredAfterEvents!) fail(`H2: beforeToolCall let ${what} run, but it has no tool_start\n${trace(record)}`);
          if (start !== undefined) {
            if (start.i !== before.answeredAfterEvents) fail(`H2: the tool_start of ${what} is event #${start.i}, not right after beforeToolCall answered (after event #${before.answeredAfterEvents! - 1})\n${trace(record)}`);
            expect(start.event.call).toEqual({ ...call.call, input });
            const handler = handlerRan(id);
            if (handler !== undefined) expect({ id, input: handler.input }).toEqual({ id, input });
          }
        } else {
          if (start !== undefined || handlerRan(id)) fail(`H2: beforeToolCall said ${before.spec.answer.kind === 'value' ? (before.spec.answer.value as { kind: string }).kind : before.spec.answer.kind} to ${what}, yet it ${start ? 'has a tool_start' : 'ran its handler'}\n${trace(record)}`);
          pre = outcome.message;
          if (!hooks.after && result !== undefined && !isAborted(result.event.message)) {
            if (result.i !== before.answeredAfterEvents) fail(`H2: the result of ${what} came at event #${result.i}, not as beforeToolCall answered`);
            expect(result.event.message).toEqual(outcome.message);
          }
        }
      }

      if (!hooks.after) continue;
      if (after === undefined) {
        // H3: every result of a call that reached beforeToolCall goes through afterToolCall
        if (result !== undefined && !isAborted(result.event.message)) fail(`H3: ${what} has its result, but afterToolCall was not asked\n${trace(record)}`);
        continue;
      }
      const given = after.given as ToolResultMessage;
      if (isAborted(given)) fail(`H3: afterToolCall saw error: aborted for ${what}`);
      if (given.toolCallId !== id || given.toolName !== call.call.name) fail(`H3: afterToolCall for ${what} saw a result for ${given.toolCallId} (${given.toolName})`);
      if (pre !== undefined) expect({ id, afterSaw: given }).toEqual({ id, afterSaw: pre });
      if (before !== undefined && before.answered && !beforeOutcome(spec, before.spec.answer as never).runs && after.calledAfterEvents !== before.answeredAfterEvents) {
        fail(`H3: afterToolCall for ${what} was asked after event #${after.calledAfterEvents - 1}, not as beforeToolCall answered`);
      }
      if (!after.answered || after.answeredAfterCancel) {
        if (result !== undefined && !isAborted(result.event.message)) fail(`H5: ${what} has a result other than error: aborted, though afterToolCall never answered\n${trace(record)}`);
        continue;
      }
      if (result === undefined) {
        if (cancelAt > after.answeredAfterEvents!) fail(`H3: afterToolCall answered for ${what}, but no tool_result came`);
        continue;
      }
      if (result.i !== after.answeredAfterEvents) fail(`H3: the tool_result of ${what} is event #${result.i}, not right after afterToolCall answered (after event #${after.answeredAfterEvents! - 1})\n${trace(record)}`);
      expect({ id, result: result.event.message }).toEqual({ id, result: afterResult(given, (spec.after ?? KEEP_AFTER).answer).message });
    }
  }
}
