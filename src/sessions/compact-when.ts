import { type Observable, defer, map, take, throwIfEmpty } from 'rxjs';
import type { AgentMessage, PrepareTurn, ProviderInput } from '../types.js';
import { shown } from '../util/values.js';

/** The options of {@link compactWhen}. */
export interface CompactOptions {
  /** Compact when the model's next call would see more than this many tokens (estimated). */
  maxTokens: number;
  /** About how many tokens of the newest messages to keep as they are. */
  keepRecentTokens: number;
  /** Summarises the oldest messages; its first value is the summary. Cancelled with the turn (unsubscribed). */
  summarize: (messages: readonly AgentMessage[]) => Observable<string>;
}

/**
 * A `prepareTurn` (H6) that keeps long conversations inside the model's window (S5). Before each model call it
 * estimates the context — the input tokens of the last model call it knows of (the loop tells it the previous
 * call's `usage` in `prepareTurn`'s context, `lastUsage`; it remembers it for the history that call answered)
 * plus chars/4 of the messages since, or chars/4 of all when no usage is known — and when that exceeds
 * `maxTokens` it asks `summarize` for a summary of the oldest messages and sends the model the system messages,
 * the summary (as a user message) and the newest messages, about `keepRecentTokens` of them. It never summarises
 * a system message (each is sent as it is, first) nor the prompt the turn answers (the last user message and
 * any right before it), and never cuts between a tool call and its result: the kept part starts at a message
 * that is not a result. The loop's own history (`turn_end.messages`) stays whole; the compaction it made is
 * told with its answer (`compaction: { summary, firstKept }`), which the loop carries on the turn's `turn_end`,
 * where `persist` finds it and appends it to the tree as an entry, so the tree's `context()` is compacted too. A summary is remembered:
 * later turns of the same history send it again instead of summarising again, until the view outgrows
 * `maxTokens` once more.
 *
 * ```text
 * history:   system user assistant[read] toolResult assistant user     over maxTokens: summarize the oldest
 * model:     system user("SUMMARY") assistant user                    never toolResult first, never the prompt
 * ```
 *
 * ```ts
 * const prepareTurn = compactWhen({ maxTokens: 100_000, keepRecentTokens: 20_000, summarize: (messages) => summaryOf(messages) });
 * prompts$.pipe(conversation({ provider, registry, prepareTurn, messages: tree.context() }), persist(tree, store));
 * ```
 *
 * @throws TypeError or RangeError at call time: `maxTokens` an integer >= 1, `keepRecentTokens` an integer
 *   >= 0 below it, `summarize` a function.
 */
export function compactWhen(options: CompactOptions): PrepareTurn {
  if (typeof options !== 'object' || options === null) throw new TypeError(`compactWhen: options must be an object (got ${shown(options)})`);
  const { maxTokens, keepRecentTokens, summarize } = options;
  if (!Number.isInteger(maxTokens) || maxTokens < 1) throw new RangeError(`compactWhen: maxTokens must be an integer >= 1 (got ${shown(maxTokens)})`);
  if (!Number.isInteger(keepRecentTokens) || keepRecentTokens < 0 || keepRecentTokens >= maxTokens) {
    throw new RangeError(`compactWhen: keepRecentTokens must be an integer >= 0 and below maxTokens (got ${shown(keepRecentTokens)})`);
  }
  if (typeof summarize !== 'function') throw new TypeError(`compactWhen: summarize must be a function (got ${shown(summarize)})`);
  /** The summaries made so far, each under the first message it does not cover. */
  const summaries = new WeakMap<AgentMessage, string>();
  /** The input tokens of the model call that wrote each assistant message, as the loop told them (`lastUsage`). */
  const inputTokens = new WeakMap<AgentMessage, number>();
  const known = (assistant: AgentMessage) => inputTokens.get(assistant);

  return (input, context) => {
    const history = input.messages;
    // the previous call wrote the history's last assistant message; its input tokens count what came before it
    const reported = context?.lastUsage?.inputTokens;
    if (typeof reported === 'number' && Number.isFinite(reported)) {
      const wrote = history.findLast((message) => message.role === 'assistant');
      if (wrote !== undefined) inputTokens.set(wrote, reported);
    }
    // the latest summary of this history's beginning, if one was made: the view starts with it
    let start = 0;
    let summary: string | undefined;
    for (let index = history.length - 1; index > 0 && summary === undefined; index--) {
      summary = summaries.get(history[index]!);
      if (summary !== undefined) start = index;
    }
    const view = (from: number, text: string | undefined): ProviderInput =>
      text === undefined ? input : { ...input, messages: [...systemBefore(history, from), summaryMessage(text), ...history.slice(from)] };
    const current = view(start, summary);
    if (estimate(current.messages, known) <= maxTokens) return current;
    const cut = cutPoint(history, start, keepRecentTokens);
    if (cut === undefined) return current; // nothing more to summarise without cutting a call from its result
    const oldest = [...(summary === undefined ? [] : [summaryMessage(summary)]), ...history.slice(start, cut).filter((message) => message.role !== 'system')];
    if (oldest.length === 0) return current; // only system messages before the cut: sent as they are
    return defer(() => summarize(oldest)).pipe(
      take(1),
      throwIfEmpty(() => new Error('compactWhen: summarize completed without a summary')),
      map((text) => {
        if (typeof text !== 'string') throw new TypeError(`compactWhen: summarize must emit a string (got ${shown(text)})`);
        summaries.set(history[cut]!, text);
        // R34: told with the answer, so that the loop carries it on the turn's turn_end, for persist
        return { ...view(cut, text), compaction: { summary: text, firstKept: cut } };
      }),
    );
  };
}

/** The system messages before `end`: never summarised, sent first as they are. */
function systemBefore(messages: readonly AgentMessage[], end: number): AgentMessage[] {
  const systems: AgentMessage[] = [];
  for (let index = 0; index < end; index++) if (messages[index]!.role === 'system') systems.push(messages[index]!);
  return systems;
}

/**
 * Where the kept part starts: the latest place after `start` that keeps at least `keep` tokens of the newest
 * messages and the prompt the turn answers (the last user message, and any right before it), moved back to the
 * message before any results (never a result first), or `undefined` when that would keep everything from
 * `start` on.
 */
export function cutPoint(messages: readonly AgentMessage[], start: number, keep: number): number | undefined {
  if (messages.length - start < 2) return undefined;
  let cut = messages.length - 1;
  for (let kept = estimatedTokens(messages[cut]!); cut > start + 1 && kept < keep; ) kept += estimatedTokens(messages[--cut]!);
  let prompt = messages.findLastIndex((message) => message.role === 'user');
  while (prompt > start && messages[prompt - 1]!.role === 'user') prompt--;
  if (prompt !== -1 && prompt < cut) cut = prompt;
  while (cut > start && messages[cut]!.role === 'toolResult') cut--;
  return cut > start ? cut : undefined;
}

/**
 * S5: the input tokens of the last model call known (`known`: of the call that wrote an assistant message) plus
 * chars/4 of the messages since, or chars/4 of them all.
 */
export function estimate(messages: readonly AgentMessage[], known: (assistant: AgentMessage) => number | undefined = () => undefined): number {
  let tokens = 0;
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    tokens += estimatedTokens(message);
    const before = message.role === 'assistant' ? known(message) : undefined;
    if (before !== undefined) return tokens + before;
  }
  return tokens;
}

/** chars/4 of what a message sends: its text, and its calls as JSON. */
function estimatedTokens(message: AgentMessage): number {
  const calls = message.role === 'assistant' && message.toolCalls !== undefined ? JSON.stringify(message.toolCalls).length : 0;
  return Math.ceil((message.content.length + calls) / 4);
}

function summaryMessage(summary: string): AgentMessage {
  return { role: 'user', content: summary };
}
