import { Observable, map } from 'rxjs';
import type { AgentMessage, Compaction, ProviderInput, Usage } from '../types.js';
import { firstAnswer } from '../util/first-answer.js';
import { LazyAbort } from '../util/lazy-abort.js';
import { isPlainObject, shown } from '../util/values.js';
import { checkMessages } from './check-messages.js';
import type { LoopSettings } from './loop-options.js';

/**
 * H6, R36: the model's view of a turn as a source — `prepareTurn`'s answer to `input`, checked: one
 * `PreparedTurn`, then complete. streamReply subscribes it before it asks the model, and asks the model with
 * its `input`. It errors when prepareTurn throws, rejects, errors, completes without a value or answers
 * something that is not a provider's input (R21 for its messages, R20 for fields that throw) or a `compaction`
 * that is none; unsubscribed before the answer, the context's signal aborts (H5). `history` is the loop's own:
 * only the place of its messages is checked, they keep the model's calls as it sent them (R17, D7).
 * `lastUsage` is what the previous provider call reported, told to prepareTurn in its context (R34).
 *
 * ```text
 * prepareTurn:   ----a|       its answer, a Promise or an Observable
 * preparedInput: ----(p|)     p = { input: a, compaction: undefined }, checked
 * prepareTurn:   ----c|       c = { ...a, compaction: { summary: 'S', firstKept: 2 } }
 * preparedInput: ----(q|)     q = { input: a, compaction: { summary: 'S', firstKept: 2 } }: the provider never sees it
 * prepareTurn:   ----x|       x is no ProviderInput
 * preparedInput: ----#        TypeError: expected { messages: AgentMessage[], tools: ToolSpec[] }, got …
 * ```
 * (spec/loop/prepare-turn.spec.ts, spec/loop/prepared-input.spec.ts)
 */
export function preparedInput(
  input: ProviderInput,
  turn: number,
  history: readonly AgentMessage[],
  loop: LoopSettings,
  lastUsage?: Usage,
): Observable<PreparedTurn> {
  const context = new TurnContext(turn, lastUsage);
  return firstAnswer(() => loop.prepareTurn!(input, context), () => context.abort()).pipe(
    map((prepared): PreparedTurn => {
      const problem = notProviderInput(prepared, history);
      if (problem !== undefined) throw problem;
      // R34: a compaction rides the turn's turn_end, never the provider's input; no copy when there is none
      if (!('compaction' in prepared)) return { input: prepared, compaction: undefined };
      const { compaction, ...rest } = prepared;
      return { input: rest, compaction: compactionOf(compaction, history.length) };
    }),
  );
}

/** prepareTurn's answer, checked: what the provider is asked with, and what it summarised (S5, R34). */
export interface PreparedTurn {
  input: ProviderInput;
  compaction: Compaction | undefined;
}

/** S5, R34: a copy of the compaction prepareTurn told (each field read once, R20), or a TypeError saying why it is none. */
function compactionOf(value: unknown, length: number): Compaction | undefined {
  if (value === undefined) return undefined;
  const { summary, firstKept } = (isPlainObject(value) ? value : {}) as Partial<Compaction>;
  if (typeof summary !== 'string' || typeof firstKept !== 'number' || !Number.isInteger(firstKept) || firstKept < 0 || firstKept >= length) {
    const range = length === 0 ? 'none: the history is empty' : `0 to ${length - 1}`;
    throw new TypeError(`compaction must be { summary: string, firstKept: an index of the history prepareTurn was given (${range}) }, got ${shown(value)}`);
  }
  return { summary, firstKept };
}

/** What `prepareTurn` is told (H6); its `signal` is made only if read, and aborts if the turn stops waiting. */
class TurnContext extends LazyAbort {
  constructor(
    readonly turn: number,
    readonly lastUsage: Usage | undefined,
  ) {
    super();
  }
}

/** H6: why `value` cannot be a provider's input (R21 for its messages), or `undefined` when it can. */
function notProviderInput(value: unknown, own: readonly AgentMessage[]): unknown {
  try {
    const { messages, tools } = (isPlainObject(value) ? value : {}) as Partial<ProviderInput>;
    if (!Array.isArray(messages) || !Array.isArray(tools)) {
      return new TypeError(`expected { messages: AgentMessage[], tools: ToolSpec[] }, got ${shown(value)}`);
    }
    checkMessages(messages, '', new Set(own)); // the caller's words, about the messages prepareTurn gave
  } catch (error) {
    return error; // a broken message, or a value whose fields throw when read (R20)
  }
  return undefined;
}
