import { OperatorFunction, scan } from 'rxjs';
import { assistantMessage } from '../loop/reply.js';
import { NO_USAGE, addUsage } from '../loop/usage.js';
import type { AgentMessage, AssistantMessage, Attachment, ConversationEvent, LoopEventOf, ToolCall, ToolResultMessage, Usage } from '../types.js';

/** One call of the current turn, as a UI lists it (C4). */
export interface ToolView {
  /** The call's id (a repeated id's result comes under `ID_dup2`, R28, and is listed under it). */
  id: string;
  name: string;
  /**
   * `queued` from its `tool_call`, `approval` from its `tool_approval` (H8: it waits for a person's decision),
   * `running` from its `tool_start`, `done` / `error` from its `tool_result`.
   */
  state: 'queued' | 'approval' | 'running' | 'done' | 'error';
  /** While running: the content of its last `tool_update`. Absent before the first one, and once it settled. */
  progress?: string;
  /** F4: once settled, the attachments of its result (a screenshot, a chart) for the UI to show. */
  attachments?: readonly Attachment[];
}

/** What a UI shows of a loop or a conversation: one state per event (C4). See {@link toViewModel}. */
export interface LoopViewModel {
  /**
   * C4 revised: `idle` only before any loop has started (`initialViewModel`, and the prompts heard before the
   * first `turn_start`); `streaming` from `turn_start` (the provider call is made) to `message_end`; `tools`
   * while the provider is done and a tool of the turn is queued or running (from turn 0's `turn_start`: a
   * resumed run calls no provider); otherwise the status stays what it was — a `turn_end` of a turn that goes
   * on, a `user_message` and a `prompt_dropped` never change it; at `loop_end` `aborted`, `error` or `done`,
   * kept until the next loop's `turn_start`. Never `idle` mid-run.
   */
  status: 'idle' | 'streaming' | 'tools' | 'done' | 'error' | 'aborted';
  /** The number of the last `turn_start` (each loop counts from 1; a resumed run starts at 0); 0 before any. */
  turn: number;
  /** The current turn's text: its `text_delta`s joined. */
  text: string;
  /** The current turn's calls, in the order the view first heard of them. */
  tools: readonly ToolView[];
  /**
   * A history to save after any event, which R22 resumes: the last one handed out — by `tool_result` (R29),
   * `turn_end`, `loop_end` or `user_message` — and, from the `message_end` of a reply that asked for tools, that
   * history with the turn's assistant message, every call waiting (R29 widened). A bare loop hands out no history
   * before its first `tool_result`: give `toViewModel` the one it starts from.
   */
  messages: readonly AgentMessage[];
  /** The current turn's calls as the model sent them, in arrival order (repeated ids too): the assistant message's. */
  calls: readonly ToolCall[];
  /** The conversation's token counts: every loop's totals summed (R27), agent tools' inner loops included (A2). */
  usage: Usage;
  /**
   * The current loop's own token counts, as its last `turn_end` or `loop_end` reported them (the last
   * loop's, once it ended; zeros from a new loop's first `turn_start`). Kept in the state, so that
   * {@link reduceViewModel} can sum the loops from the state alone: `usage` is the earlier loops' totals
   * plus this.
   */
  loopUsage: Usage;
}

/** The state before any event: `idle`, turn 0, no text, no tools, no messages, no tokens. Frozen. */
export const initialViewModel: LoopViewModel = Object.freeze({
  status: 'idle',
  turn: 0,
  text: '',
  tools: Object.freeze([]) as readonly ToolView[],
  messages: Object.freeze([]) as readonly AgentMessage[],
  calls: Object.freeze([]) as readonly ToolCall[],
  usage: NO_USAGE,
  loopUsage: NO_USAGE,
});

/**
 * From conversation (or loop) events to view states, one per event (C4): `scan(reduceViewModel, initialViewModel)`.
 * Each state is a new object and never changes afterwards; what an event leaves alone (`tools`, `messages`,
 * `usage`, each untouched tool) is the same object as in the state before — made for `OnPush` components,
 * `distinctUntilChanged` and memoized selectors. The states start with the first event's: add
 * `startWith(initialViewModel)` to show the state before any.
 *
 * - `status` (C4 revised): `streaming` from `turn_start` (the provider call is made) to `message_end` (a
 *   `tool_call` or a tool's events meanwhile keep it); `tools` from `message_end` while a tool of the turn is
 *   `queued` or `running` (turn 0 of a resumed run calls no provider: `tools` from its `turn_start`); at
 *   `loop_end`, `aborted` for reason `aborted`, `error` for `error`, `done` for any other reason. Any other
 *   event keeps the status: the last result of a turn, its `turn_end` (the next `turn_start` says
 *   `streaming` again), a `user_message`. `idle` is `initialViewModel`'s, kept only by the prompts heard
 *   before the first loop starts: a UI never sees `idle` mid-run. A `user_message` changes only `messages`.
 * - A `prompt_dropped` (a prompt a stop dropped before it joined, left open (a)) changes nothing: the state is
 *   the one before. A UI that puts the prompt back in its input box takes it from the events, once
 *   (`filter((e) => e.type === 'prompt_dropped')`), rather than from a state that would have to forget it.
 * - `text` and `tools` are the current turn's, reset at `turn_start`. A tool is `queued` from its
 *   `tool_call`, `running` from its `tool_start` (`progress`: the last `tool_update`'s content), `done` or
 *   `error` (`isError`) from its `tool_result`, which drops its `progress`. An event for a call the view has
 *   not listed adds it: a resumed call (turn 0) has a `tool_start` but no `tool_call`, a repeated id's result
 *   comes under `ID_dup2` (R28). At `turn_end`, a tool still queued or running takes its state from the
 *   turn's `toolResults`.
 * - `messages` is the last history handed out, by `tool_result` (R29), `turn_end`, `loop_end` or `user_message`;
 *   at the `message_end` of a reply with calls it gains the turn's assistant message (its text, its `calls`, the
 *   end's stop reason, error and reasoning), all its calls waiting, as the loop's `turn_end` will hold it (R29
 *   widened): saved while the first tool runs, it resumes (R22, turn 0 runs the calls again).
 * - `usage` is the conversation's token counts: the totals of the loops that ended plus the running total
 *   of the current one (`loopUsage`, from its last `turn_end` or `loop_end`, R27), plus what each agent
 *   tool's inner loop cost (A2: its `loop_end`'s usage, forwarded as a `tool_update`, at any depth). A loop begins at a
 *   `turn_start` after a `loop_end`, or whose number does not go up (a loop cut short without its
 *   `loop_end`); a `loop_end` right after another (a loop aborted at subscribe) is a loop of its own.
 * - An event of a type it does not know gives the state before, as it is.
 *
 * ```text
 * events: 1s-h-(aα)uP-(RE2)s-t-e(FL|)   1 turn_start 1, s message_start, h text_delta "Hi", a tool_call a,
 *                                       α tool_start a, u message_end toolUse, P tool_update a "50%",
 *                                       R tool_result a, E turn_end 1, 2 turn_start 2, t text_delta "Sunny.",
 *                                       e message_end stop, F turn_end 2, L loop_end stop
 * states: AA-B-(CD)EF-(GGH)H-I-I(IJ|)   A streaming 1    B streaming 1 "Hi"
 *                                       C streaming 1 "Hi" [a:queued]    D streaming 1 "Hi" [a:running]
 *                                       E tools 1 "Hi" [a:running]       F tools 1 "Hi" [a:running 50%]
 *                                       G tools 1 "Hi" [a:done] (at E: with turn 1's messages and usage)
 *                                       H streaming 2    I streaming 2 "Sunny." (at F: turn 2's messages, usage)
 *                                       J done 2 "Sunny."
 * ```
 *
 * ```ts
 * // an Angular component: the template reads one object, and OnPush sees every change
 * @Component({ selector: 'app-chat', templateUrl: './chat.html', changeDetection: ChangeDetectionStrategy.OnPush })
 * export class ChatComponent {
 *   private readonly agent = inject(AgentService); // its events$: a loop's or a conversation's events
 *   readonly state$ = this.agent.events$.pipe(toViewModel(), startWith(initialViewModel));
 * }
 * // chat.html: @if (state$ | async; as s) { <p>{{ s.text }}</p> @for (t of s.tools; track t.id) { <li>{{ t.name }}: {{ t.progress ?? t.state }}</li> } }
 * ```
 *
 * `history`: the history a bare loop starts from (its `messages` option), so that the states' `messages` hold it
 * before the loop hands one out — and a history saved at turn 1's `message_end` resumes; a conversation's events
 * carry theirs (`user_message`).
 */
export function toViewModel(history?: readonly AgentMessage[]): OperatorFunction<ConversationEvent, LoopViewModel> {
  if (history === undefined) return scan(reduceViewModel, initialViewModel);
  if (!Array.isArray(history)) throw new TypeError(`toViewModel: history must be an array of messages, got ${typeof history}`);
  return scan(reduceViewModel, { ...initialViewModel, messages: history });
}

/**
 * The pure reducer of {@link toViewModel}: the state after `event`. Never changes `state`: the result is a new
 * object that shares with `state` what `event` left alone (an unknown event type gives `state` itself).
 *
 * ```ts
 * // an NgRx reducer over loop events
 * export const chatReducer = createReducer(initialViewModel, on(agentEvent, (state, { event }) => reduceViewModel(state, event)));
 * ```
 */
export function reduceViewModel(state: LoopViewModel, event: ConversationEvent): LoopViewModel {
  switch (event.type) {
    case 'turn_start': {
      const newLoop = ended(state) || event.turn <= state.turn;
      // C4 revised: the provider call is made now; turn 0 (R22) makes none, it runs the saved calls
      const status = event.turn === 0 ? 'tools' : 'streaming';
      return { ...state, status, turn: event.turn, text: '', tools: NO_TOOLS, calls: NO_CALLS, loopUsage: newLoop ? NO_USAGE : state.loopUsage };
    }
    case 'message_start':
      return { ...state, status: 'streaming' };
    case 'text_delta':
      return { ...state, text: state.text + event.text };
    case 'tool_call': {
      const calls = [...state.calls, event.call];
      // a repeated id (R28) lists nothing new: its result comes under ID_dup2 and adds it then
      if (state.tools.some((tool) => tool.id === event.call.id)) return { ...state, calls };
      return { ...withTools(state, [...state.tools, { id: event.call.id, name: event.call.name, state: 'queued' }]), calls };
    }
    case 'tool_approval':
      // H8: `messages` stays: until message_end it is the history before the turn, from then on it has this call waiting
      return withTool(state, event.call.id, event.call.name, () => ({ id: event.call.id, name: event.call.name, state: 'approval' }));
    case 'tool_start':
      return withTool(state, event.call.id, event.call.name, () => ({ id: event.call.id, name: event.call.name, state: 'running' }));
    case 'tool_update': {
      const next = withTool(state, event.toolCallId, event.toolName, (tool) => ({ id: tool.id, name: tool.name, state: 'running', progress: event.content }));
      // A2: an agent tool's inner loop ended (at any depth): what it cost counts, though its loop does not
      const inner = innerLoopEnd(event);
      return inner === undefined ? next : { ...next, usage: addUsage(next.usage, inner.usage) };
    }
    case 'tool_result': // R29: the history to save at this result
      return { ...withTool(state, event.message.toolCallId, event.message.toolName, () => settledView(event.message)), messages: event.messages };
    case 'message_end': {
      const status = busy(state.tools) ? 'tools' : state.status;
      // R29 widened: the calls now wait for their results, and the history says so
      if (state.calls.length === 0) return { ...state, status };
      return { ...state, status, messages: withAssistant(state, assistantOf(state, event)) };
    }
    case 'turn_end': {
      // the status it had: a turn that goes on is followed by the next turn_start, the last by loop_end
      const tools = settleAll(state.tools, event.toolResults);
      return { ...state, ...usageAfter(state, event), tools, messages: event.messages };
    }
    case 'loop_end':
      return { ...state, ...usageAfter(state, event), status: endStatus(event.reason), messages: event.messages };
    case 'user_message':
      return { ...state, messages: event.messages };
    case 'prompt_dropped':
      return state;
    default:
      return state;
  }
}

const NO_TOOLS: readonly ToolView[] = Object.freeze([]);
const NO_CALLS: readonly ToolCall[] = Object.freeze([]);

/**
 * The history with the turn's final assistant message: appended to the history before the turn, or — when a
 * call settled while the model streamed (a tool starts at its call) — in place of the draft that its
 * `tool_result` handed out, before the results so far (one message for each settled tool of the turn).
 */
function withAssistant(state: LoopViewModel, assistant: AssistantMessage): AgentMessage[] {
  let settledSoFar = 0;
  for (const tool of state.tools) if (tool.state === 'done' || tool.state === 'error') settledSoFar++;
  const messages = state.messages.slice();
  if (settledSoFar === 0) messages.push(assistant);
  else messages[messages.length - settledSoFar - 1] = assistant;
  return messages;
}

/** The turn's assistant message at its `message_end`, as the loop makes it: text, calls, stop reason, error, reasoning. */
function assistantOf(state: LoopViewModel, end: LoopEventOf<'message_end'>): AssistantMessage {
  return assistantMessage(state.text, end.stopReason, state.calls.slice(), end.errorMessage, end.reasoning);
}

function ended({ status }: LoopViewModel): boolean {
  return status === 'done' || status === 'error' || status === 'aborted';
}

function busy(tools: readonly ToolView[]): boolean {
  return tools.some((tool) => tool.state === 'queued' || tool.state === 'approval' || tool.state === 'running');
}

function endStatus(reason: LoopEventOf<'loop_end'>['reason']): LoopViewModel['status'] {
  return reason === 'aborted' ? 'aborted' : reason === 'error' ? 'error' : 'done';
}

/** A tool's view once its result came: done, or error; its attachments when it has some (F4). */
function settledView(result: ToolResultMessage): ToolView {
  const view: ToolView = { id: result.toolCallId, name: result.toolName, state: result.isError ? 'error' : 'done' };
  if (result.attachments !== undefined) view.attachments = result.attachments;
  return view;
}

/** The state with `tools`; while streaming it stays `streaming`, otherwise `tools` while a tool is busy, else as it was. */
function withTools(state: LoopViewModel, tools: readonly ToolView[]): LoopViewModel {
  const status = state.status !== 'streaming' && busy(tools) ? 'tools' : state.status;
  return { ...state, status, tools };
}

/** The state with the tool `id` replaced by `next(tool)`, or added at the end when the view had not listed it. */
function withTool(state: LoopViewModel, id: string, name: string, next: (tool: ToolView) => ToolView): LoopViewModel {
  const index = state.tools.findIndex((tool) => tool.id === id);
  if (index === -1) return withTools(state, [...state.tools, next({ id, name, state: 'queued' })]);
  const tools = state.tools.slice();
  tools[index] = next(state.tools[index]!);
  return withTools(state, tools);
}

/** At `turn_end`: each tool still queued, waiting for approval or running takes its state from the turn's results. */
function settleAll(tools: readonly ToolView[], results: readonly ToolResultMessage[]): readonly ToolView[] {
  if (!busy(tools)) return tools;
  return tools.map((tool) => {
    if (tool.state === 'done' || tool.state === 'error') return tool;
    const result = results.find((r) => r.toolCallId === tool.id);
    return result === undefined ? tool : settledView(result);
  });
}

/** The inner `loop_end` an agent tool's update forwards, through every level of nesting (A4). */
function innerLoopEnd(update: LoopEventOf<'tool_update'>): LoopEventOf<'loop_end'> | undefined {
  let inner = update.event;
  while (inner?.type === 'tool_update') inner = inner.event;
  return inner?.type === 'loop_end' ? inner : undefined;
}

/** `usage` and `loopUsage` after an event that carries the current loop's running total. */
function usageAfter(state: LoopViewModel, event: { usage?: Usage }): Pick<LoopViewModel, 'usage' | 'loopUsage'> {
  const loopUsage = addUsage(NO_USAGE, event.usage); // a copy, sanitized as the loop counts (R27)
  // after a loop_end, this event is a new loop's (a loop aborted at subscribe has only its loop_end)
  const before = ended(state) ? state.usage : minus(state.usage, state.loopUsage);
  return { usage: addUsage(before, loopUsage), loopUsage };
}

/** `total` without `part`, a part of it. */
function minus(total: Usage, part: Usage): Usage {
  const rest: Usage = { inputTokens: total.inputTokens - part.inputTokens, outputTokens: total.outputTokens - part.outputTokens };
  if (total.cacheReadTokens !== undefined) rest.cacheReadTokens = total.cacheReadTokens - (part.cacheReadTokens ?? 0);
  if (total.cacheWriteTokens !== undefined) rest.cacheWriteTokens = total.cacheWriteTokens - (part.cacheWriteTokens ?? 0);
  return rest;
}
