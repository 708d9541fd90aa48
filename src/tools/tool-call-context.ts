import type { ToolCall, ToolContext } from '../types.js';
import { LazyAbort } from '../util/lazy-abort.js';

/** The context a handler gets; its `signal` aborts when the loop tears the tool down (unsubscribe, `options.signal`, a timeout). */
export class ToolCallContext extends LazyAbort implements ToolContext {
  constructor(readonly call: ToolCall) {
    super();
  }
}
