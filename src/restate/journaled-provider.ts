import { Observable, isObservable } from 'rxjs';
import { type FailureCause, causeOf } from '../tools/tool-result.js';
import type { Provider, ProviderEvent } from '../types.js';
import { subscribeAnswer } from '../util/answer.js';
import { shown } from '../util/values.js';
import type { Journal } from './journal.js';
import { mergeText } from './merge-text.js';

/** One provider call as journaled (JSON): the reply's events, text merged, and how it ended. */
export interface ProviderStep {
  events: ProviderEvent[];
  /** The provider's error (R10), as R25 keeps a cause. */
  failed?: FailureCause;
  /** Torn down before it ended (the loop was aborted or unsubscribed): not an outcome, so a replay waits again. */
  cancelled?: true;
}

/**
 * D1: `provider` with each call journaled as one step, named `model call N` (N counts this loop's calls from 1).
 * The first run streams the events live as they arrive (tools start while the model streams, R3) and journals
 * the reply once it ended; a replay plays the journaled reply and the model is not called. Either way the
 * Observable ends as the journal says (completes, or errors with the journaled cause), so both runs make the
 * same history.
 *
 * ```text
 * provider:        -s-t-t-c-e|            first run: live, journaled as [s, tt, c, e]
 * journaled:       -s-t-t-c-e|
 * replay:          (s T c e|)             T = the two deltas joined; no model call
 * ```
 *
 * ```ts
 * const durable = journaledProvider(journal, openAIChatProvider({ model }));
 * ```
 */
export function journaledProvider(journal: Journal, provider: Provider): Provider {
  let calls = 0;
  return (input) =>
    new Observable<ProviderEvent>((subscriber) => {
      let closed = false;
      let ran = false; // the step ran here (its events went out live), or it was replayed from the journal
      let stop: (() => void) | undefined;
      const step = journal.run(`model call ${++calls}`, () =>
        new Promise<ProviderStep>((resolve) => {
          ran = true;
          const events: ProviderEvent[] = [];
          const end = (how: Omit<ProviderStep, 'events'>) => resolve({ events: mergeText(events), ...how });
          if (closed) return end({ cancelled: true });
          let reply: unknown;
          try {
            reply = provider(input);
          } catch (error) {
            return end({ failed: causeOf(error) });
          }
          if (!isObservable(reply)) return end({ failed: causeOf(new TypeError(`provider returned ${shown(reply)}, not an Observable`)) });
          const inner = (reply as Observable<ProviderEvent>).subscribe({
            next: (event) => {
              events.push(event);
              if (!closed) subscriber.next(event);
            },
            error: (error: unknown) => end({ failed: causeOf(error) }),
            complete: () => end({}),
          });
          stop = () => {
            inner.unsubscribe();
            end({ cancelled: true });
          };
        }),
      );
      const journaled = subscribeAnswer(step, {
        next: (done) => {
          if (!ran) for (const event of done.events) subscriber.next(event);
          if (done.cancelled) return; // a replay of a call torn down last time: it waits, as that call did
          if (done.failed) subscriber.error(done.failed);
          else subscriber.complete();
        },
        error: (error: unknown) => subscriber.error(error), // the engine failed the step itself: this turn fails (R10)
        complete: () => undefined,
      });
      return () => {
        closed = true;
        journaled?.unsubscribe();
        stop?.();
      };
    });
}
