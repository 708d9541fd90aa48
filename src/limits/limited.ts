import { Observable, type Subscriber, type TeardownLogic } from 'rxjs';
import type { Provider, ProviderEvent, ProviderInput } from '../types.js';
import { shown } from '../util/values.js';
import { Limiter, type LimitedCall } from './limiter.js';

/** The options of {@link limited}. */
export interface LimitedOptions {
  /** Calls of a higher priority start first; first come first served within one (default 0). */
  priority?: number;
}

/**
 * L2: `provider`, its calls through `limiter`: each call is subscribed to `provider` only when the limiter
 * gives it a slot (until then the loop shows `turn_start` and nothing yet), and gives the slot back when it
 * ends or is unsubscribed; unsubscribed while it waits, it leaves the queue. Its usage (or its estimate)
 * counts against `tokensPerMinute`, and a 429 it ends with pauses the limiter. The events pass unchanged.
 *
 * ```text
 * provider:     -s-d|      subscribed only when the call gets its slot: here at frame 3, when another call ended
 * limited:   ----s-d|      subscribed at 0: nothing until then
 * ```
 *
 * ```ts
 * const limiter = createLimiter({ maxConcurrent: 2 });
 * const urgent = limited(model, limiter, { priority: 1 });
 * const background = limited(model, limiter);
 * ```
 *
 * @throws TypeError when `provider` is not a function, `limiter` not a `Limiter`, or `priority` not a finite number, at call time.
 */
export function limited(provider: Provider, limiter: Limiter, options: LimitedOptions = {}): Provider {
  const problem = (what: string, value: unknown) => `limited: ${what} (got ${shown(value)})`;
  if (typeof provider !== 'function') throw new TypeError(problem('provider must be a provider function', provider));
  if (!(limiter instanceof Limiter)) throw new TypeError(problem('limiter must be a Limiter from createLimiter()', limiter));
  if (typeof options !== 'object' || options === null) throw new TypeError(problem('options must be an object', options));
  const { priority = 0 } = options;
  if (typeof priority !== 'number' || !Number.isFinite(priority)) throw new TypeError(problem('priority must be a finite number', priority));
  return (input) =>
    new Observable<ProviderEvent>((out) => {
      const call = new MeteredCall(out, provider, input, limiter, priority);
      limiter.enter(call);
      return call.closed ? undefined : call; // unsubscribed with `out`: out of the queue, or its slot freed
    });
}

/**
 * One call of a limited provider: what the limiter queues and starts, and the provider's subscriber once it runs,
 * reading what the limiter counts (streamed text, the usage, a 429) as the events pass to `out`. One object a call,
 * and no rxjs `Subscriber`: rxjs takes an observer that is also unsubscribable (`closed`, `add`, `remove`,
 * `unsubscribe`) as a subscriber as it is, so the provider subscribes it directly, and no `Subscriber` or
 * `Subscription` constructor runs for it (their field stores, shared by every subscriber class, are megamorphic).
 * L6: W1 through a free slot cost 1.16× a plain turn's instructions with a Subscriber a call, 1.06× so (1,600 → 4,000
 * conversations); past the JIT's warm-up 1.077×, where a bare forwarding object costs 1.052× (bench/findings.md).
 */
class MeteredCall implements LimitedCall {
  state: LimitedCall['state'] = 'new';
  estimate: number;
  /** Unsubscribed: nothing more reaches `out`, and the provider's teardowns have run. */
  closed = false;
  /** Ended (error or complete): later notifications are dropped, as a `Subscriber` drops them. */
  private stopped = false;
  /** What the provider's subscription added (its teardown, an operator's subscriber), run at unsubscribe. */
  private teardowns: Teardown[] | undefined;

  constructor(
    private readonly out: Subscriber<ProviderEvent>,
    private readonly provider: Provider,
    private readonly input: ProviderInput,
    private readonly limiter: Limiter,
    readonly priority: number,
  ) {
    this.estimate = limiter.countsTokens ? inputChars(input) / 4 : 0; // characters counted only for tokensPerMinute
  }

  start(): void {
    try {
      this.provider(this.input).subscribe(this);
    } catch (error) {
      this.error(error);
    }
  }

  next(event: ProviderEvent): void {
    if (this.stopped) return;
    const { type } = event;
    if (type === 'message_end') this.limiter.end(this, event.usage, event.failure);
    else if (this.limiter.countsTokens && (type === 'text_delta' || type === 'reasoning_delta')) this.limiter.grow(this, event.text.length);
    this.out.next(event);
  }

  error(error: unknown): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.state === 'running') this.limiter.end(this);
    this.out.error(error);
    this.unsubscribe();
  }

  complete(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.state === 'running') this.limiter.end(this); // most often ended at its message_end already
    this.out.complete();
    this.unsubscribe();
  }

  add(teardown: TeardownLogic): void {
    if (teardown === undefined || teardown === null || (teardown as unknown) === this) return;
    if (this.closed) runTeardown(teardown);
    else (this.teardowns ??= []).push(teardown);
  }

  remove(teardown: Teardown): void {
    const at = this.teardowns?.indexOf(teardown) ?? -1;
    if (at >= 0) this.teardowns!.splice(at, 1);
  }

  /** Unsubscribed (by `out`, or at its own end): waiting, it leaves the queue; running, its slot is free. */
  unsubscribe(): void {
    if (this.closed) return;
    this.closed = true;
    this.stopped = true;
    if (this.state !== 'done') this.limiter.leave(this);
    const teardowns = this.teardowns;
    this.teardowns = undefined;
    if (teardowns !== undefined) for (const teardown of teardowns) runTeardown(teardown);
  }
}

type Teardown = Exclude<TeardownLogic, void>;

function runTeardown(teardown: Teardown): void {
  if (typeof teardown === 'function') teardown();
  else teardown.unsubscribe();
}

/** What a call sends, in characters: the messages' texts and calls; its estimate is a quarter of it. */
function inputChars(input: ProviderInput): number {
  let chars = 0;
  for (const message of input.messages) {
    chars += typeof message.content === 'string' ? message.content.length : 0;
    if (message.role === 'assistant' && message.toolCalls !== undefined) {
      for (const call of message.toolCalls) chars += call.name.length + JSON.stringify(call.input ?? {}).length;
    }
  }
  return chars;
}
