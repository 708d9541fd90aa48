import { Observable, Subscriber } from 'rxjs';
import type { Provider, ProviderEvent, ProviderInput } from '../types.js';
import { shown } from '../util/values.js';
import { LimitedCall, Limiter } from './limiter.js';

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
    new Observable<ProviderEvent>((subscriber) => {
      let metered: Metered | undefined;
      const call = new LimitedCall(
        priority,
        () => {
          metered = new Metered(subscriber, limiter, call);
          try {
            provider(input).subscribe(metered);
          } catch (error) {
            metered.error(error);
          }
        },
        limiter.countsTokens ? inputChars(input) : 0,
      );
      limiter.enter(call);
      return () => {
        limiter.leave(call); // waiting: out of the queue; running: its slot is free
        metered?.unsubscribe();
      };
    });
}

/**
 * The provider's events on their way to the call's subscriber: what the limiter counts (streamed text, the usage,
 * a 429) read as they pass. Not a child of that subscriber (no parent link to make and unmake per call, L6): the
 * call's teardown unsubscribes it.
 */
class Metered extends Subscriber<ProviderEvent> {
  constructor(
    private readonly out: Subscriber<ProviderEvent>,
    private readonly limiter: Limiter,
    private readonly call: LimitedCall,
  ) {
    super();
  }

  override next(event: ProviderEvent): void {
    if (this.isStopped) return;
    if (event.type === 'text_delta' || event.type === 'reasoning_delta') {
      if (this.limiter.countsTokens) this.limiter.grow(this.call, event.text.length);
    } else if (event.type === 'message_end') this.limiter.end(this.call, event.usage, event.failure);
    this.out.next(event);
  }

  protected override _error(error: unknown): void {
    this.limiter.end(this.call);
    this.out.error(error);
    this.unsubscribe();
  }

  protected override _complete(): void {
    this.limiter.end(this.call);
    this.out.complete();
    this.unsubscribe();
  }
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
