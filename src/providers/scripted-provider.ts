import { Observable } from 'rxjs';
import type { Provider, ProviderEvent, ProviderInput } from '../types.js';

/** One turn of a script: its events, or a function that makes them from what the model was sent. */
export type ScriptedTurn = readonly ProviderEvent[] | ((input: ProviderInput) => readonly ProviderEvent[]);

/** A {@link Provider} that plays a script, and remembers what it was asked. */
export interface ScriptedProvider extends Provider {
  /** The input of every subscription so far, in order: what the model saw on each turn. */
  readonly inputs: readonly ProviderInput[];
}

/**
 * A provider for demos and tests: its n-th subscription plays `turns[n - 1]` (or the events that
 * function returns for the input), synchronously, each event a fresh copy. A subscription beyond the script errors (the loop turns that into a turn with
 * stop reason `error`).
 *
 * ```text
 * turns:          [[s, t, e], [s, t, e]]
 * 1st subscribe:  (ste|)
 * 2nd subscribe:  (ste|)
 * 3rd subscribe:  #                         "scripted provider: no turn 3 (the script has 2)"
 * ```
 *
 * ```ts
 * const provider = scriptedProvider([
 *   [{ type: 'message_start' }, { type: 'text_delta', text: 'hi' }, { type: 'message_end', stopReason: 'stop' }],
 * ]);
 * runEventedToolLoop({ provider, registry, messages }).subscribe();
 * provider.inputs[0].messages; // what the model saw on turn 1
 * ```
 */
export function scriptedProvider(turns: readonly ScriptedTurn[]): ScriptedProvider {
  if (!Array.isArray(turns) || !turns.every((turn) => Array.isArray(turn) || typeof turn === 'function')) {
    throw new TypeError('scriptedProvider: turns must be an array of event arrays or functions');
  }
  // a copy, so that editing the caller's arrays later does not change the script
  const script = turns.map((turn) => (typeof turn === 'function' ? turn : structuredClone(turn)));
  const inputs: ProviderInput[] = [];
  const provider = (input: ProviderInput) =>
    new Observable<ProviderEvent>((subscriber) => {
      inputs.push(input);
      const turn = script[inputs.length - 1];
      if (turn === undefined) {
        subscriber.error(new Error(`scripted provider: no turn ${inputs.length} (the script has ${script.length})`));
        return;
      }
      const events = typeof turn === 'function' ? turn(input) : turn;
      for (const event of events) {
        if (subscriber.closed) return;
        subscriber.next(structuredClone(event));
      }
      subscriber.complete();
    });
  return Object.assign(provider, { inputs });
}
