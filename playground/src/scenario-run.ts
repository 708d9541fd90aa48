/**
 * Runs a marble scenario of marbles/ in the page, live: in RxJS virtual time, as jest runs it, but one frame
 * at a time, a frame every `frameMs` real milliseconds. The scenario's `cold` lines are TestScheduler's own,
 * its `expectObservable` subscribes the loop at the frame its subscription line says (the page draws it
 * instead of asserting it), and its `expectSubscriptions` are compared when the run is over. Every frame is
 * a `TestScheduler.run` of its own that flushes the actions due by then, so the library's timers (a tool's
 * timeout, an abort signal, a conversation's end of frame) all run in virtual frames, exactly as in jest.
 */
import { TestScheduler } from 'rxjs/testing';
import type { RunHelpers } from 'rxjs/testing';
import type { Observable } from 'rxjs';
import type { Provider } from 'rx-tool-loop';
import { LetterMap } from './letters';
import { Recorder } from './recorder';
import type { Lane, Mark } from './recorder';
import { providerTurns, toolLines, turnLines, withRecorder } from './shim/registry';
import type { Scenario } from './shim/registry';

/** A TestScheduler whose `run` flushes only up to a frame, so that a run can go on frame by frame. */
class PacedScheduler extends TestScheduler {
  private until = -1;

  constructor() {
    super(() => undefined); // nothing is asserted with it: the page compares on its own
    // `run` makes new timer delegates every time, each with its own table of handles: a timer set in one
    // frame and cleared in a later one would not be found there and would fire anyway. One set serves all.
    const self = this as unknown as { createDelegates?: () => unknown };
    const create = self.createDelegates?.bind(this);
    if (create === undefined) throw new Error('rxjs/testing changed: TestScheduler has no createDelegates');
    let delegates: unknown;
    self.createDelegates = () => (delegates ??= create());
  }

  override flush(): void {
    this.maxFrames = this.until; // `run` has just set it to Infinity
    super.flush();
  }

  /** Runs `body` inside `run` without running any action yet. */
  begin(body: (helpers: RunHelpers) => void): void {
    this.until = -1;
    this.run(body);
  }

  /** Runs every action due by `frame`. */
  advanceTo(frame: number): void {
    this.until = frame;
    this.run(() => undefined);
  }

  /** Runs `work` in run mode (one character a frame) without running any action. */
  inside<T>(work: () => T): T {
    this.until = -1;
    return this.run(work);
  }

  get idle(): boolean {
    return this.actions.length === 0;
  }
}

type Logs = { subscribedFrame: number; unsubscribedFrame: number }[];
type ColdLine = Observable<unknown> & {
  messages: { frame: number; notification: { kind: string; value?: unknown; error?: unknown } }[];
  subscriptions: Logs;
};

interface Cold {
  observable: ColdLine;
  /** The character of each of its notifications, in order. */
  chars: string[];
  /** Its name in the scenario's `diagram`. */
  name?: string;
  lanes: Lane[];
}

/** One comparison shown when the run is over. */
export interface Check {
  what: string;
  expected: string;
  actual: string;
  ok: boolean;
}

export interface ScenarioRun {
  recorder: Recorder;
  /** The loop line and legend the scenario expects. */
  expected?: { line: string; legend: Record<string, string> };
  /** The scenario's subscription lines against the run's, once it is over. */
  checks: Check[];
  stop(): void;
}

/**
 * Starts `scenario`: frame 0 at once, then a frame every `frameMs()` ms until nothing is left to happen.
 * `update` is called after every frame, `done` once at the end (with the error that stopped it, if any).
 */
export function runScenario(scenario: Scenario, frameMs: () => number, update: () => void, done: (error?: unknown) => void): ScenarioRun {
  const scheduler = new PacedScheduler();
  const colds: Cold[] = [];
  const coldOf = new Map<object, Cold>();
  const unnamed = [...scenario.diagram];
  const nameOf = (marbles: string): string | undefined => {
    const at = unnamed.findIndex(([, line]) => line === marbles);
    return at === -1 ? undefined : unnamed.splice(at, 1)[0]![0];
  };
  const expectations: { logs: Logs; marbles: string | string[] }[] = [];

  const recorder = new Recorder(() => scheduler.now(), {
    callLabel: (provider: Provider, call: number) => {
      const turn = providerTurns.get(provider)?.[call - 1];
      return turn === undefined ? undefined : coldOf.get(turn)?.name;
    },
  });
  let frame = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let over = false;
  const finish = (error?: unknown) => {
    if (over) return;
    over = true;
    if (timer !== undefined) clearTimeout(timer);
    if (error === undefined) run.checks = scheduler.inside(() => expectations.map(compare));
    done(error);
  };
  const run: ScenarioRun = { recorder, checks: [], stop: () => finish(new Error('stopped')) };

  const helpers = (real: RunHelpers): RunHelpers => ({
    ...real,
    cold: <T>(marbles: string, values?: { [marble: string]: T }, error?: unknown) => {
      const line = real.cold<T>(marbles, values, error);
      const observable = line as unknown as ColdLine;
      const cold: Cold = { observable, chars: characters(marbles), lanes: [] };
      const name = nameOf(marbles);
      if (name !== undefined) cold.name = name;
      colds.push(cold);
      coldOf.set(observable, cold);
      return line;
    },
    flush: () => undefined,
    expectObservable: (observable, subscription) => {
      const { subscribedFrame, unsubscribedFrame } = TestScheduler.parseMarblesAsSubscriptions(subscription ?? null, true);
      let subscribed: { unsubscribe(): void } | undefined;
      scheduler.schedule(() => void (subscribed = observable.subscribe({ error: () => undefined })), subscribedFrame === Infinity ? 0 : subscribedFrame);
      if (unsubscribedFrame !== Infinity) scheduler.schedule(() => subscribed?.unsubscribe(), unsubscribedFrame);
      return {
        toBe: (line, values) => {
          if (run.expected !== undefined) return; // a scenario's first expectation is its loop line
          const legend = Object.fromEntries(Object.entries((values ?? {}) as Record<string, unknown>).map(([letter, value]) => [letter, String(value)]));
          run.expected = { line, legend };
          recorder.letters = new LetterMap(legend); // the page draws with the scenario's own letters
        },
        toEqual: () => undefined,
      };
    },
    expectSubscriptions: (logs) => ({ toBe: (marbles) => void expectations.push({ logs: logs as Logs, marbles }) }),
  });

  const compare = ({ logs, marbles }: { logs: Logs; marbles: string | string[] }): Check => {
    const lines = [marbles].flat();
    const actual = logs.map((log) => subscriptionLine(log.subscribedFrame, log.unsubscribedFrame)).join(' ');
    const wanted = lines.map((line) => TestScheduler.parseMarblesAsSubscriptions(line, true)).map((log) => subscriptionLine(log.subscribedFrame, log.unsubscribedFrame));
    const name = colds.find((cold) => cold.observable.subscriptions === logs)?.name;
    return { what: name === undefined ? 'subscriptions' : `${name} subscriptions`, expected: lines.join(' '), actual, ok: actual === wanted.join(' ') };
  };

  /** Cold lines that are neither a provider's turn nor a tool's value (prompts, approvals) get a lane per subscription. */
  const syncColds = () => {
    for (const cold of colds) {
      if (turnLines.has(cold.observable) || toolLines.has(cold.observable)) continue;
      cold.observable.subscriptions.forEach((log, i) => {
        if (log.subscribedFrame > frame) return;
        let lane = cold.lanes[i];
        if (lane === undefined) {
          lane = recorder.open('input', cold.name ?? 'cold', 'cold line');
          lane.subscribed = log.subscribedFrame;
          cold.lanes[i] = lane;
        }
        const end = log.unsubscribedFrame;
        if (end <= frame) lane.unsubscribed = end;
        lane.marks = cold.observable.messages.flatMap((message, k): Mark[] => {
          const at = message.frame + log.subscribedFrame;
          if (at > Math.min(frame, end)) return [];
          const { kind, value, error } = message.notification;
          if (kind !== 'N') return [{ ...recorder.endMark(kind === 'E' ? 'E' : 'C', error), frame: at }];
          return [{ frame: at, kind: 'N', letter: cold.chars[k] ?? '?', description: shown(value), detail: value, tone: 'value' }];
        });
      });
    }
  };

  const step = () => {
    timer = undefined;
    try {
      scheduler.advanceTo(frame);
      recorder.frame = frame;
      syncColds();
      update();
      if (scheduler.idle) return finish();
      frame++;
      timer = setTimeout(step, frameMs());
    } catch (error) {
      finish(error);
    }
  };

  try {
    withRecorder(recorder, () => scheduler.begin((real) => scenario.body(helpers(real))));
    step();
  } catch (error) {
    finish(error);
  }
  return run;
}

/** The character of each notification of a marble line, in order: values, `|` and `#`. */
function characters(marbles: string): string[] {
  return [...marbles].filter((c) => !' -()^!'.includes(c));
}

function subscriptionLine(from: number, to: number): string {
  return to === Infinity ? `${from}-` : `${from}-${to}`;
}

function shown(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
