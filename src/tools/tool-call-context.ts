import type { TokenLedger, ToolCall, ToolContext } from '../types.js';
import { LazyAbort } from '../util/lazy-abort.js';

/**
 * The context a handler gets; its `signal` aborts when the loop tears the tool down (unsubscribe, `options.signal`, a
 * timeout), and is made only when used (R31: the one lazy signal, {@link LazyAbort}).
 */
export class ToolCallContext extends LazyAbort implements ToolContext {
  /** L3: the loop's budget, if it has one. */
  readonly budget?: TokenLedger;

  constructor(
    readonly call: ToolCall,
    budget?: TokenLedger,
  ) {
    super();
    if (budget !== undefined) this.budget = budget;
  }
}
