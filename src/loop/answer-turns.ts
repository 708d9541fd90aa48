import type { LoopEndReason, UserMessage } from '../types.js';
import { type AnswerVerdict, checkAnswer } from './answer-check.js';
import type { OutputSettings } from './output-spec.js';
import type { TurnOutcome } from './turn-parts.js';

/**
 * What the loop does next for its typed answer (J2, J3): end — with the answer's `output`, or with reason
 * `error` and `errorMessage` when it never matched — or ask an answer turn (after `prompt`, when there is one).
 */
export type AnswerStep =
  | { kind: 'end'; reason: LoopEndReason; output?: unknown; errorMessage?: string }
  | { kind: 'ask'; prompt?: UserMessage };

/**
 * J2, J3: the typed answer of one loop, decided where the loop decides (its `goOn`), one `turn_end` at a time.
 * A loop that would end with the model's `stop` ends at once when the last text is a valid answer (no extra
 * call); otherwise, or when it would end at the cap (`maxTurns`) or by its tools (`terminated`), an answer turn
 * runs, and an invalid answer one repair turn after a user message naming the issues; a second invalid answer
 * ends the loop with `error`: `output does not match the schema: ISSUES`. The reason of a valid answer stays the
 * one the loop ended for. Aborts and errors end as before: no answer turn, no `output`. At most two answer turns
 * a loop, beyond `maxTurns` (the cap reserves them).
 *
 * ```text
 * turns:  1(tools) 2(tools: maxTurns) 3(answer: invalid) 4(answer after the repair prompt: valid)
 * end:    loop_end maxTurns, output
 * ```
 */
export class AnswerTurns {
  /** Why the loop ends, once an answer turn was asked; `undefined` until then. */
  private reason: LoopEndReason | undefined;
  /** Answer turns asked so far: 0, 1 or 2. */
  private asked = 0;

  constructor(private readonly output: OutputSettings) {}

  /** Whether the turn that ends now is an answer turn. */
  get answering(): boolean {
    return this.asked > 0;
  }

  /** What an answer turn's provider is asked (J1): the schema, and no tools. */
  get request(): OutputSettings['request'] {
    return this.output.request;
  }

  /**
   * After a `turn_end` on which the loop would end for `reason` (or go on, `undefined`, in an answer turn whose
   * model called a tool anyway): the next step, or `undefined` to end as the loop always has (aborts, errors, a
   * cut reply before any answer turn).
   */
  after(outcome: TurnOutcome, reason: LoopEndReason | undefined): AnswerStep | Promise<AnswerStep> | undefined {
    if (reason === 'aborted' || reason === 'error') return undefined;
    if (this.asked === 0) {
      if (reason === 'maxTurns' || reason === 'terminated') return this.ask(reason, undefined);
      if (reason !== 'stop') return undefined; // `length`: the reply was cut, the loop ends as before
      return then(checkAnswer(outcome.assistant.content, this.output), (verdict) =>
        verdict.valid ? { kind: 'end', reason, output: verdict.value } : this.ask(reason, this.prompt(`Answer with JSON that matches the schema "${this.output.request.name}".`)),
      );
    }
    return then(checkAnswer(outcome.assistant.content, this.output), (verdict) => this.judged(verdict));
  }

  private judged(verdict: AnswerVerdict): AnswerStep {
    const reason = this.reason!;
    if (verdict.valid) return { kind: 'end', reason, output: verdict.value };
    if (this.asked === 1) {
      return this.ask(reason, this.prompt(`Your answer does not match the schema "${this.output.request.name}": ${verdict.issues}. Answer again with JSON that matches it.`));
    }
    return { kind: 'end', reason: 'error', errorMessage: `output does not match the schema: ${verdict.issues}` };
  }

  private ask(reason: LoopEndReason, prompt: UserMessage | undefined): AnswerStep {
    this.reason = reason;
    this.asked++;
    return prompt === undefined ? { kind: 'ask' } : { kind: 'ask', prompt };
  }

  private prompt(content: string): UserMessage {
    return { role: 'user', content };
  }
}

/** `f` of a verdict now, or of one still to come (a validator that returns a Promise). */
function then<T>(verdict: AnswerVerdict | Promise<AnswerVerdict>, f: (verdict: AnswerVerdict) => T): T | Promise<T> {
  return verdict instanceof Promise ? verdict.then(f) : f(verdict);
}
