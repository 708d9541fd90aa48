/**
 * The one context with a lazy signal (R31): the base of every context the loop hands out (a tool's, a hook's,
 * `prepareTurn`'s). Its `signal` costs nothing until something needs an `AbortSignal` of the platform: Node 20
 * makes each one in about 5 µs (plus its garbage), more than a whole turn of the loop, and most tools, hooks and
 * inner loops never do more with theirs than check `aborted` or hand it to `runEventedToolLoop`.
 *
 * `signal` is a stand-in for the real signal: `instanceof AbortSignal`, and `aborted` read without making
 * anything; the library's own listener ({@link LazyAbort.listen}, through `onAbort`) is a plain callback. Any
 * other use — `addEventListener`, `reason`, `onabort`, `fetch(url, { signal })`, `AbortSignal.any` — makes the
 * real signal then (aborted already if the context was), and every property is that signal's from then on.
 * Only identity tells them apart: an `abort` event's `target` is the real signal, not the stand-in. A platform whose
 * own `AbortSignal` refuses a stand-in (a browser's, whose `fetch` checks that a signal is its own object, not a
 * Proxy of one) gets the real signal on read instead, as before: the first read of a process asks the platform.
 *
 * ```ts
 * class ToolCallContext extends LazyAbort { constructor(readonly call: ToolCall) { super(); } }
 * const context = new ToolCallContext(call);
 * runEventedToolLoop({ provider, registry, messages, signal: context.signal }); // no AbortController made
 * context.abort(); // the inner loop's listener runs; a real signal, if one was made, aborts
 * ```
 */
export class LazyAbort {
  private controller: AbortController | undefined;
  private standIn: AbortSignal | undefined;
  private listeners: (() => void)[] | undefined;
  private aborted = false;

  get signal(): AbortSignal {
    if (this.standIn !== undefined) return this.standIn;
    if (!LazyAbort.standInsServe()) return LazyAbort.real(this);
    // the context itself is the stand-in's target: one Proxy, nothing else, per context that is asked
    return (this.standIn = new Proxy(this, LazyAbort.standInTraps) as unknown as AbortSignal);
  }

  /** Aborts the signal, now if the real one was made, else as soon as it is; runs the listeners once. */
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.controller?.abort();
    const listeners = this.listeners;
    if (listeners === undefined) return;
    // in order, each once; one that an earlier one removed is not called, as on an EventTarget
    while (listeners.length > 0) listeners.shift()!();
    this.listeners = undefined;
  }

  /**
   * `listener` once when the context behind `signal` aborts, and what removes it; `undefined` when `signal` is
   * no context's stand-in (the caller then listens as to any signal). Makes no real signal.
   */
  static listen(signal: AbortSignal, listener: () => void): (() => void) | undefined {
    const context = (signal as { [OWNER]?: LazyAbort })[OWNER];
    if (context === undefined) return undefined;
    if (context.aborted) {
      listener();
      return noop;
    }
    (context.listeners ??= []).push(listener);
    return () => {
      const at = context.listeners?.indexOf(listener) ?? -1;
      if (at >= 0) context.listeners!.splice(at, 1);
    };
  }

  /** The platform's signal behind the stand-in, made at the first use that needs it. */
  private static real(context: LazyAbort): AbortSignal {
    if (context.controller === undefined) {
      context.controller = new AbortController();
      // made for the first time after the abort: it must say so
      if (context.aborted) context.controller.abort();
    }
    return context.controller.signal;
  }

  private static serve: boolean | undefined;

  /**
   * Whether the platform takes a stand-in for its own signal, asked once: its `aborted` getter, run on a stand-in,
   * reads the real signal's state through the Proxy where signals keep it in properties (Node, whose `fetch`,
   * timers and streams check a signal by those); a browser checks the object itself and throws.
   */
  private static standInsServe(): boolean {
    if (LazyAbort.serve === undefined) {
      try {
        const probe = new LazyAbort();
        const standIn = new Proxy(probe, LazyAbort.standInTraps);
        const before = Reflect.get(AbortSignal.prototype, 'aborted', standIn) as unknown;
        probe.abort();
        LazyAbort.serve = before === false && Reflect.get(AbortSignal.prototype, 'aborted', standIn) === true;
      } catch {
        LazyAbort.serve = false;
      }
    }
    return LazyAbort.serve;
  }

  private static readonly standInTraps: ProxyHandler<LazyAbort> = {
    get(context, key) {
      if (key === 'aborted') return context.aborted;
      if (key === OWNER) return context;
      const real = LazyAbort.real(context);
      const value: unknown = Reflect.get(real, key, real);
      // a method of the platform's runs on the real signal, whose internals it checks; any other value (a
      // handler set as `onabort`, say) comes back as it was given
      return typeof value === 'function' && platformMethods().has(value) ? (value as (...args: unknown[]) => unknown).bind(real) : value;
    },
    set: (context, key, value) => Reflect.set(LazyAbort.real(context), key, value),
    has: (context, key) => key === OWNER || Reflect.has(context.controller?.signal ?? AbortSignal.prototype, key),
    getPrototypeOf: () => AbortSignal.prototype,
    setPrototypeOf: () => false,
    ownKeys: (context) => Reflect.ownKeys(LazyAbort.real(context)),
    getOwnPropertyDescriptor: (context, key) => Reflect.getOwnPropertyDescriptor(LazyAbort.real(context), key),
    defineProperty: (context, key, descriptor) => Reflect.defineProperty(LazyAbort.real(context), key, descriptor),
    deleteProperty: (context, key) => Reflect.deleteProperty(LazyAbort.real(context), key),
  };
}

/** How a stand-in names its context: a property only the stand-in answers, so a real signal answers `undefined`. */
const OWNER: unique symbol = Symbol('rx-tool-loop.lazyAbort');

let methods: Set<unknown> | undefined;

/** The functions `AbortSignal.prototype` and its prototypes hold (`addEventListener`, `throwIfAborted`, …). */
function platformMethods(): Set<unknown> {
  if (methods === undefined) {
    methods = new Set();
    for (let proto: object | null = AbortSignal.prototype; proto !== null && proto !== Object.prototype; proto = Object.getPrototypeOf(proto) as object | null) {
      for (const key of Reflect.ownKeys(proto)) {
        if (key === 'constructor') continue; // the class itself, not a method: `signal.constructor === AbortSignal`
        const descriptor = Object.getOwnPropertyDescriptor(proto, key);
        if (descriptor !== undefined && 'value' in descriptor && typeof descriptor.value === 'function') methods.add(descriptor.value);
      }
    }
  }
  return methods;
}

function noop(): void {}
