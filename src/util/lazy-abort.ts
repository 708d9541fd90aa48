import { noop } from 'rxjs';

/**
 * The one context with a lazy signal (R31, R35): the base of every context the loop hands out (a tool's, a hook's,
 * `prepareTurn`'s). Its `signal` is the platform's own `AbortSignal`, made at its first read — a getter, because
 * Node 20 makes one in about 5 µs (plus its garbage), more than a whole turn of the loop, and most tools and hooks
 * never read theirs. Once made, it is a plain signal: `fetch`, `AbortSignal.any`, timers and every check of the
 * platform take it, in Node and in browsers alike. Read after the abort, it is made aborted.
 *
 * The loop itself listens to a context it holds with {@link LazyAbort.onAbort}, a plain callback that makes no
 * signal; whoever holds only the signal (an inner loop given `signal: context.signal`) listens to it as to any.
 *
 * ```ts
 * class ToolCallContext extends LazyAbort { constructor(readonly call: ToolCall) { super(); } }
 * const context = new ToolCallContext(call);
 * await fetch(url, { signal: context.signal }); // the AbortController is made here, at the read
 * context.abort();                               // the request is cancelled
 * ```
 */
export class LazyAbort {
  private controller: AbortController | undefined;
  private listeners: (() => void)[] | undefined;
  private isAborted = false;

  /** The platform's signal, made at the first read (aborted already if the context was). */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.isAborted) this.controller.abort();
    }
    return this.controller.signal;
  }

  /** Whether the context was aborted — read without making the signal. */
  get aborted(): boolean {
    return this.isAborted;
  }

  /** Aborts the signal, if it was made, and runs the listeners once, in order. */
  abort(): void {
    if (this.isAborted) return;
    this.isAborted = true;
    this.controller?.abort();
    const listeners = this.listeners;
    if (listeners === undefined) return;
    // in order, each once; one that an earlier one removed is not called, as on an EventTarget
    while (listeners.length > 0) listeners.shift()!();
    this.listeners = undefined;
  }

  /** `listener` once when the context aborts (at once if it has), and what removes it. Makes no signal. */
  onAbort(listener: () => void): () => void {
    if (this.isAborted) {
      listener();
      return noop;
    }
    (this.listeners ??= []).push(listener);
    return () => {
      const at = this.listeners?.indexOf(listener) ?? -1;
      if (at >= 0) this.listeners!.splice(at, 1);
    };
  }
}
