/**
 * An `AbortSignal` made only when someone reads it: most tools and hooks never look at theirs, and an
 * `AbortController` per call is the largest per-call cost of a loop. A class, so that the getter lives on
 * the prototype instead of being set up for every call.
 *
 * ```ts
 * class ToolCallContext extends LazyAbort { constructor(readonly call: ToolCall) { super(); } }
 * ```
 */
export class LazyAbort {
  private controller: AbortController | undefined;
  private aborted = false;

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      // read for the first time after the abort: it must say so
      if (this.aborted) this.controller.abort();
    }
    return this.controller.signal;
  }

  /** Aborts the signal, now if it was read, else as soon as it is. */
  abort(): void {
    this.aborted = true;
    this.controller?.abort();
  }
}
