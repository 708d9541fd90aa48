import type { TokenLedger } from '../types.js';
import { shown } from '../util/values.js';

/** What a budget is charged with: a `Usage` (R27), or anything that counts input and output tokens. */
export interface TokenCount {
  inputTokens: number;
  outputTokens: number;
}

/**
 * L3: a ledger of tokens that fails closed. Every provider call of a loop given it (`budget`) is charged to it —
 * its input and output tokens, as the provider's `usage` counts them — and the loop checks it before each
 * turn: when nothing is `left`, the loop ends with reason `budget`, its history whole and its last answer kept.
 * One budget may serve many loops: an inner loop given the outer loop's (`ToolContext.budget`) charges it as it
 * goes, and an `agentTool` charges what an inner loop not given it spent when its `loop_end` comes up, so nested
 * agents never overspend unseen. `new TokenBudget(0)` allows no call at all (it is never "unlimited").
 *
 * ```ts
 * const budget = new TokenBudget(50_000);
 * runEventedToolLoop({ provider, registry, messages, budget });
 * // later: budget.used, budget.left
 * ```
 *
 * @throws TypeError when `maxTokens` is not a number >= 0 (`Infinity` is allowed), at construction.
 */
export class TokenBudget implements TokenLedger {
  /** The tokens the budget allows in all. */
  readonly maxTokens: number;
  #used = 0;

  constructor(maxTokens: number) {
    if (typeof maxTokens !== 'number' || Number.isNaN(maxTokens) || maxTokens < 0) {
      throw new TypeError(`TokenBudget: maxTokens must be a number >= 0 (got ${shown(maxTokens)})`);
    }
    this.maxTokens = maxTokens;
  }

  /** Tokens charged so far. */
  get used(): number {
    return this.#used;
  }

  /** Tokens still allowed (never below 0). */
  get left(): number {
    return Math.max(0, this.maxTokens - this.#used);
  }

  /** Charges one provider call's usage (or an inner loop's totals): its input and output tokens. */
  charge(usage: TokenCount): void {
    this.#used += tokensOf(usage);
  }
}

/** What a call costs a budget: its input and output tokens as the provider reports them. */
export function tokensOf(usage: TokenCount | undefined): number {
  const { inputTokens, outputTokens } = usage ?? { inputTokens: 0, outputTokens: 0 };
  return (Number.isFinite(inputTokens) ? inputTokens : 0) + (Number.isFinite(outputTokens) ? outputTokens : 0);
}

/** Whether `value` is a budget to charge: a {@link TokenBudget}, or anything of its shape (another copy of the library). */
export function isTokenBudget(value: unknown): value is TokenLedger {
  const budget = value as Partial<TokenLedger> | null;
  return typeof budget === 'object' && budget !== null && typeof budget.charge === 'function' && typeof budget.left === 'number';
}

/**
 * A budget that charges another (`ledger`) and counts what it charged: what `agentTool` gives its inner loop,
 * so that, at the inner `loop_end`, it charges the ledger only with what the inner loop did not (L3).
 */
export class ChargedThrough extends TokenBudget {
  /** Tokens charged through this budget so far. */
  charged = 0;

  constructor(readonly ledger: TokenLedger) {
    super(ledger.maxTokens);
  }

  override get used(): number {
    return this.ledger.used;
  }

  override get left(): number {
    return this.ledger.left;
  }

  override charge(usage: TokenCount): void {
    this.charged += tokensOf(usage);
    this.ledger.charge(usage);
  }

  /** The inner loop ended having spent `usage` in all: the ledger is charged with what did not come through here. */
  settle(usage: TokenCount): void {
    const rest = tokensOf(usage) - this.charged;
    this.charged += Math.max(0, rest);
    if (rest > 0) this.ledger.charge({ inputTokens: rest, outputTokens: 0 });
  }
}
