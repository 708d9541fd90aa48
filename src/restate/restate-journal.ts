import * as restate from '@restatedev/restate-sdk';
import type { Awakeables, Journal } from './journal.js';

interface Waiting {
  promise: restate.RestatePromise<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * D6: `ctx` (a Restate context, or any `Journal`) with every step and awakeable waited on through one wait at a
 * time. A Restate SDK from 1.15 on lets only one awaited `RestatePromise` wait for the runtime: a second one
 * awaited beside it (two tool calls at once, a tool started while the model streams) fails the attempt with
 * `awaitNext already pending`, and Restate retries it — running again a step that had finished but whose result
 * was not yet journaled. So the pending promises are raced together (`RestatePromise.race`), one race at a time;
 * when a race ends, its winner is handed out and the rest race again with any step asked for meanwhile. A step
 * of Restate runs only while a wait includes it: one asked for during a race starts when that race ends (when
 * one of the running steps finishes). Results that are not `RestatePromise`s (another engine's) pass through.
 * `durableLoop` wraps its context so; wrap it once yourself to use `journaledProvider` and `journaledTools`
 * beside each other on a Restate context.
 *
 * ```text
 * asked:   m   a b                    m: a model call; a, b: the tools it calls while it streams
 * waits:   race(m)-----|race(a, b)--|race(b)----|
 * runs:    m-----------|a-----------|
 *                      |b-----------------------|
 * ```
 *
 * ```ts
 * const journal = restateJournal(ctx);
 * runEventedToolLoop({ provider: journaledProvider(journal, provider), registry: journaledTools(journal, registry), messages });
 * ```
 */
export function restateJournal(ctx: Journal & Partial<Awakeables>): Journal & Partial<Awakeables> {
  const waiting: Waiting[] = [];
  let racing = false;
  const settle = (entry: Waiting) => {
    const at = waiting.indexOf(entry);
    if (at >= 0) waiting.splice(at, 1);
  };
  const race = () => {
    if (racing || waiting.length === 0) return;
    racing = true;
    const round = [...waiting];
    // each entry mapped to its index, so that the winner is known without awaiting it on its own
    const winner = restate.RestatePromise.race(round.map((entry, index) => entry.promise.map((value, failure) => ({ index, value, failure }))));
    winner
      .then(
        ({ index, value, failure }) => {
          const entry = round[index]!;
          settle(entry);
          if (failure === undefined) entry.resolve(value);
          else entry.reject(failure);
        },
        (error: unknown) => {
          // not a step's own failure: the SDK failed the wait, and this attempt is over — every entry fails
          for (const entry of round) {
            settle(entry);
            entry.reject(error);
          }
        },
      )
      .finally(() => {
        racing = false;
        race();
      });
  };
  function adopt<T>(promise: PromiseLike<T>): PromiseLike<T> {
    if (!restate.isRestatePromise(promise as Promise<T>)) return promise;
    return new Promise<T>((resolve, reject) => {
      waiting.push({ promise: promise as restate.RestatePromise<T>, resolve: resolve as (value: unknown) => void, reject });
      race();
    });
  }
  const awakeable = ctx.awakeable;
  return {
    run: (name, fn) => adopt(ctx.run(name, fn)),
    ...(typeof awakeable === 'function'
      ? {
          awakeable: <T>() => {
            const { id, promise } = awakeable.call(ctx) as { id: string; promise: PromiseLike<T> };
            return { id, promise: adopt(promise) };
          },
        }
      : {}),
  };
}
