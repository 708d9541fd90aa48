import type { ToolCall, ToolContext } from '../types.js';

/**
 * The context a handler gets. Its `signal` is made only when the handler reads it: most tools never
 * do, and an `AbortController` per call is the largest per-call cost of a loop. A class, so that the
 * getter lives on the prototype instead of being set up for every call.
 */
export class ToolCallContext implements ToolContext {
  private controller: AbortController | undefined;
  private aborted = false;

  constructor(readonly call: ToolCall) {}

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      // read for the first time after the tool was torn down: it must say so
      if (this.aborted) this.controller.abort();
    }
    return this.controller.signal;
  }

  /** The loop tore the tool down: unsubscribe, `options.signal`, or a timeout. */
  abort(): void {
    this.aborted = true;
    this.controller?.abort();
  }
}
