import { Observable, map } from 'rxjs';
import type { AgentMessage, ProviderInput, Usage } from '../types.js';
import { firstAnswer } from '../util/first-answer.js';
import { LazyAbort } from '../util/lazy-abort.js';
import { isPlainObject, shown } from '../util/values.js';
import { checkMessages } from './check-messages.js';
import type { LoopSettings } from './loop-options.js';

/**
 * H6, R36: the model's view of a turn as a source — `prepareTurn`'s answer to `input`, checked: one
 * `ProviderInput`, then complete. streamReply subscribes it before it asks the model, and asks the model with
 * what it gives. It errors when prepareTurn throws, rejects, errors, completes without a value or answers
 * something that is not a provider's input (R21 for its messages, R20 for fields that throw); unsubscribed
 * before the answer, the context's signal aborts (H5). `history` is the loop's own: only the place of its
 * messages is checked, they keep the model's calls as it sent them (R17, D7). `lastUsage` is what the previous
 * provider call reported, told to prepareTurn in its context (R34).
 *
 * ```text
 * prepareTurn:   ----a|       its answer, a Promise or an Observable
 * preparedInput: ----(a|)     checked
 * prepareTurn:   ----x|       x is no ProviderInput
 * preparedInput: ----#        TypeError: expected { messages: AgentMessage[], tools: ToolSpec[] }, got …
 * ```
 * (spec/loop/prepare-turn.spec.ts)
 */
export function preparedInput(
  input: ProviderInput,
  turn: number,
  history: readonly AgentMessage[],
  loop: LoopSettings,
  lastUsage?: Usage,
): Observable<ProviderInput> {
  const context = new TurnContext(turn, lastUsage);
  return firstAnswer(() => loop.prepareTurn!(input, context), () => context.abort()).pipe(
    map((prepared) => {
      const problem = notProviderInput(prepared, history);
      if (problem !== undefined) throw problem;
      return prepared;
    }),
  );
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
