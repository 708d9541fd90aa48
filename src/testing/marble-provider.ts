import { Observable, isObservable, of } from 'rxjs';
import type { Provider, ProviderEvent, ProviderInput } from '../types.js';
import { argumentError } from './arguments.js';
import { end, start } from './events.js';

/** A {@link Provider} that plays one Observable per subscription, and remembers what it was called with. */
export type MarbleProvider = Provider & {
  /** The input of every call of the provider function, in order: what the model saw on each turn. */
  readonly inputs: ProviderInput[];
};

/**
 * A provider made of cold marbles (T1): its n-th **subscription** plays `turns[n - 1]`. A subscription
 * past the last plays `message_start` then `message_end` with stop reason `error` and `errorMessage`
 * `no scripted turn N`, so that a loop that goes on too long says so in its own events.
 *
 * ```text
 * turns:            -s-c-u|      -s-t-e|
 * 1st subscribe:    -s-c-u|
 * 2nd subscribe:                 -s-t-e|
 * 3rd subscribe:    (se|)        e = message_end error: no scripted turn 3
 * ```
 *
 * ```ts
 * const provider = marbleProvider(cold('-s-c-u|', events), cold('-s-t-e|', events));
 * // after the run: provider.inputs[1].messages is what the model saw on turn 2
 * ```
 */
export function marbleProvider(...turns: Observable<ProviderEvent>[]): MarbleProvider {
  turns.forEach((turn, i) => {
    if (!isObservable(turn)) throw argumentError('marbleProvider', `turn ${i + 1} must be an Observable of provider events`, turn);
  });
  const inputs: ProviderInput[] = [];
  let subscriptions = 0;
  const provider = (input: ProviderInput) => {
    inputs.push(input);
    return new Observable<ProviderEvent>((subscriber) => {
      const n = ++subscriptions;
      const turn = turns[n - 1] ?? of(start, end('error', { errorMessage: `no scripted turn ${n}` }));
      return turn.subscribe(subscriber);
    });
  };
  return Object.assign(provider, { inputs });
}
