import { Observable, SchedulerLike, Subscription, asyncScheduler } from 'rxjs';
import type { Provider, ProviderEvent, ProviderFailure } from '../types.js';
import { modelOf } from '../providers/named-provider.js';
import { shown } from '../util/values.js';

/** The options of {@link withFallback}. */
export interface FallbackOptions {
  /** Whether a call that failed before its first word goes on to the next provider (default {@link failsOver}). */
  failOver?: (failure: ProviderFailure) => boolean;
  /** How long, after a fail-over, calls stay on the provider that answered before the first is tried again (default 60,000). */
  cooldownMs?: number;
  /** Where the cooldown's clock is read (default `asyncScheduler`: virtual under `TestScheduler.run`). */
  scheduler?: SchedulerLike;
}

/** How long calls stay on a fallback after a fail-over, unless said. */
export const DEFAULT_COOLDOWN_MS = 60_000;

/**
 * L1: the failures a call fails over on unless `failOver` says otherwise — the ones a server may answer
 * differently a moment later: `network`, `timeout`, HTTP 408, 409, 429, 5xx and 529; never a 4xx that the
 * request itself caused (400, 401, 403, 404, 413, 422), a refusal or a protocol error.
 *
 * ```ts
 * failsOver({ kind: 'http', status: 503, message: 'overloaded' }); // true
 * failsOver({ kind: 'http', status: 401, message: 'bad key' });    // false
 * ```
 */
export function failsOver(failure: ProviderFailure): boolean {
  switch (failure.kind) {
    case 'network':
    case 'timeout':
      return true;
    case 'http': {
      const { status = 0 } = failure;
      return status === 408 || status === 409 || status === 429 || (status >= 500 && status <= 599);
    }
    default:
      return false;
  }
}

/**
 * L1: one provider made of several. Each call subscribes the first (or, within `cooldownMs` of a fail-over,
 * the one that answered then); when that call ends with `error` before any event but `message_start`, and
 * `failOver(failure)` says so, it is unsubscribed and the next provider is subscribed with the same input —
 * the consumer sees one call: one `message_start`, then the answering provider's events. An error after the
 * first content event is the reply's (its text is never sent twice); so is the last provider's failure. Every
 * `message_end` names the model that answered (`model`, from the provider's own `model`, as the real
 * providers have it), so that a trace does too. P4's retries stay in each provider: a call is seen failed
 * only after its own retries (L4).
 *
 * ```text
 * primary:   -s-(e|)       e: message_end error, failure { kind: 'http', status: 503 }, at frame 3
 * backup:       -s-t-d|    subscribed at 3; its message_start is not passed on
 * fallback:  -s----t-d|    one message_start, then the backup's answer, d naming its model
 * ```
 * (spec/limits/with-fallback.spec.ts runs this picture; marbles/31-fallback.marble.ts draws it in a loop, with the cooldown.)
 *
 * ```ts
 * const provider = withFallback([anthropicProvider({ model: 'claude-sonnet-4-5' }), openAIChatProvider({ model: 'gpt-4.1' })]);
 * runEventedToolLoop({ provider, registry, messages });
 * ```
 *
 * @throws TypeError when `providers` is not a non-empty array of functions or `failOver` is not a function;
 * RangeError when `cooldownMs` is not a number >= 0 — at call time.
 */
export function withFallback(providers: readonly Provider[], options: FallbackOptions = {}): Provider {
  const problem = (what: string, value: unknown) => `withFallback: ${what} (got ${shown(value)})`;
  if (!Array.isArray(providers) || providers.length === 0) throw new TypeError(problem('providers must be a non-empty array of providers', providers));
  providers.forEach((provider, index) => {
    if (typeof provider !== 'function') throw new TypeError(problem(`providers[${index}] must be a provider function`, provider));
  });
  if (typeof options !== 'object' || options === null) throw new TypeError(problem('options must be an object', options));
  const { failOver = failsOver, cooldownMs = DEFAULT_COOLDOWN_MS, scheduler = asyncScheduler } = options;
  if (typeof failOver !== 'function') throw new TypeError(problem('failOver must be a function', failOver));
  if (typeof cooldownMs !== 'number' || Number.isNaN(cooldownMs) || cooldownMs < 0) throw new RangeError(problem('cooldownMs must be a number >= 0', cooldownMs));
  if (typeof scheduler?.now !== 'function') throw new TypeError(problem('scheduler must be a SchedulerLike', scheduler));
  const list = providers.slice();
  const models = list.map(modelOf);
  // after a fail-over: the provider that answered, and since when; shared by every call of this provider
  let staying = 0;
  let since = 0;
  const firstToTry = (): number => {
    if (staying !== 0 && !(scheduler.now() - since < cooldownMs)) staying = 0;
    return staying;
  };
  const answered = (index: number): void => {
    if (index === staying) return;
    staying = index;
    since = scheduler.now();
  };

  return (input) =>
    new Observable<ProviderEvent>((subscriber) => {
      let started = false; // the consumer has had its message_start
      let current: Subscription | undefined;
      const attempt = (index: number): void => {
        let content = false;
        let left = false; // this attempt failed over: nothing more of it counts
        const last = index === list.length - 1;
        const subscription = list[index]!(input).subscribe({
          next: (event: ProviderEvent) => {
            if (left) return;
            if (!content) {
              if (event.type === 'message_start') {
                if (!started) subscriber.next(event);
                started = true;
                return;
              }
              const failure = event.type === 'message_end' && event.stopReason === 'error' ? event.failure : undefined;
              if (!last && failure !== undefined && failOver(failure)) {
                left = true;
                current?.unsubscribe();
                return attempt(index + 1);
              }
              content = true;
              answered(index);
              if (!started) subscriber.next({ type: 'message_start' });
              started = true;
            }
            const model = models[index];
            subscriber.next(event.type === 'message_end' && model !== undefined && event.model === undefined ? { ...event, model } : event);
          },
          error: (error: unknown) => {
            if (!left) subscriber.error(error);
          },
          complete: () => {
            if (!left) subscriber.complete();
          },
        });
        // a provider that failed over synchronously, inside its own subscribe: it is let go now
        if (left) subscription.unsubscribe();
        else current = subscription;
      };
      attempt(firstToTry());
      return () => current?.unsubscribe();
    });
}

