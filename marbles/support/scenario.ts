/**
 * The jest glue of the marble scenarios, and nothing else (T6): a jest test around `TestScheduler.run`,
 * a guard that refuses characters that mean nothing, the check that each cold line is drawn where it is
 * subscribed, and an abort signal drawn as a line. The provider, the tools and the event lines come from
 * `rx-tool-loop/testing`, as in a user's tests. See ../README.md.
 */
import { timer } from 'rxjs';
import { RunHelpers, TestScheduler } from 'rxjs/testing';

/**
 * One jest test, run in virtual time: one frame is one character of a diagram. After the scheduler has
 * flushed, each cold line must have been first subscribed at the frame its indentation draws it at.
 */
export function scenario(name: string, body: (helpers: RunHelpers) => void): void {
  test(name, () => runScenario(body));
}

/** A scenario's body run once, as {@link scenario} runs it: throws what its test would fail with. */
export function runScenario(body: (helpers: RunHelpers) => void): void {
  const colds: Cold[] = [];
  let drawn = false;
  let failure: unknown;
  try {
    new TestScheduler((actual, expected) => expect(actual).toEqual(expected)).run((helpers) => {
      body(strict(helpers, colds));
      drawn = true;
    });
  } catch (error) {
    if (!drawn) throw error; // a guard refused a line: nothing ran, so nothing was subscribed
    failure = error;
  }
  const misdrawn = colds.flatMap(misplaced);
  // a misdrawn line explains the diff it causes, so it is reported first
  const diff = failure instanceof Error ? [failure.message] : failure === undefined ? [] : [String(failure)];
  if (misdrawn.length > 0) throw new Error([...misdrawn, ...diff].join('\n'));
  if (failure !== undefined) throw failure;
}

/** An `AbortSignal` that aborts at the `!` of `marble` (e.g. `'------!'`: at frame 6). Call it inside a scenario. */
export function abortsAt(marble: string): AbortSignal {
  const frame = TestScheduler.parseMarblesAsSubscriptions(checked(marble, 'abort'), true).unsubscribedFrame;
  const controller = new AbortController();
  timer(frame).subscribe(() => controller.abort());
  return controller.signal;
}

/** Every line a scenario expected, in order, with its legend: what spec/testing/round-trip.spec.ts compares recordings with. */
export const expected: { diagram: string; legend: Record<string, unknown> }[] = [];

// ---- every character of a diagram must matter ----

type Kind = 'cold' | 'expected' | 'subscription' | 'abort';

/** A cold line as drawn, and the Observable that logs its subscriptions. */
interface Cold {
  marble: string;
  observable: { subscriptions: readonly { subscribedFrame: number }[] };
}

/**
 * Refuses diagrams with characters that change nothing, so that changing any one character of a
 * diagram fails its test: no time progression (`1s `, `10ms `); spaces only as the indentation of cold
 * lines (elsewhere the scheduler skips them); groups closed and not nested; nothing after the end
 * (`|`, `#`, `!`) but the `)` of its group; no trailing `-`; a `^` exactly in subscription lines, a `!`
 * in an abort line.
 */
function checked(marble: string, kind: Kind): string {
  const wrong = /\d+(?:\.\d+)?(?:ms|s|m) /.test(marble)
    ? 'no time progression: a digit is a value, and frames are drawn one character each'
    : !/^ *(?:[^() ]|\([^() ]+\))*$/.test(marble)
      ? 'spaces only at the start; groups closed, not nested'
      : kind !== 'cold' && marble.startsWith(' ')
        ? 'only cold lines are indented (the scheduler skips these spaces): pad with "-"'
        : /[|#!](?!\)?$)/.test(marble)
          ? 'nothing may follow the end'
          : /-$/.test(marble)
            ? 'a trailing "-" means nothing'
            : (kind === 'subscription') !== marble.includes('^')
              ? 'a "^" belongs in subscription lines, and only there'
              : kind === 'abort' && !marble.endsWith('!')
                ? 'an abort line ends with its "!"'
                : undefined;
  if (wrong !== undefined) throw new Error(`diagram ${JSON.stringify(marble)}: ${wrong}`);
  return marble;
}

/** A cold line's indentation is the frame of its first subscription; a line nothing subscribes to has no place in a diagram. */
function misplaced({ marble, observable }: Cold): string[] {
  const drawnAt = marble.length - marble.replace(/^ +/, '').length;
  const first = observable.subscriptions[0];
  if (first === undefined) return [`cold ${JSON.stringify(marble)}: never subscribed`];
  return first.subscribedFrame === drawnAt
    ? []
    : [`cold ${JSON.stringify(marble)}: drawn at frame ${drawnAt}, first subscribed at frame ${first.subscribedFrame}`];
}

function strict(helpers: RunHelpers, colds: Cold[]): RunHelpers {
  const { cold, expectObservable, expectSubscriptions } = helpers;
  return {
    ...helpers,
    cold: (marbles, values, error) => {
      const observable = cold(checked(marbles, 'cold'), values, error);
      colds.push({ marble: marbles, observable });
      return observable;
    },
    expectObservable: (observable, subscription) => {
      const expectation = expectObservable(observable, subscription == null ? subscription : checked(subscription, 'subscription'));
      return {
        ...expectation,
        toBe: (marbles, values, error) => {
          expected.push({ diagram: marbles, legend: (values ?? {}) as Record<string, unknown> });
          expectation.toBe(checked(marbles, 'expected'), values, error);
        },
      };
    },
    expectSubscriptions: (logs) => {
      const expectation = expectSubscriptions(logs);
      return { toBe: (marbles) => expectation.toBe([marbles].flat().map((marble) => checked(marble, 'subscription'))) };
    },
  };
}
