/**
 * examples/textbook-loop.ts beside runEventedToolLoop. Where the textbook loop passes, both give the
 * same marble line for the same inputs; where it fails, the spec states what it does instead: an extra
 * provider subscription (R8), a silent death on the call stack (R12), results in completion order in
 * the history (R4), an Observable error for a provider error (R10).
 *
 * The scenarios are restated from the marble files they name, not imported: importing a
 * `*.marble.ts` file runs its `scenario(...)` and registers its test a second time. They are drawn as
 * they were before R23: the textbook loop has no `tool_start`, so both loops' lines are compared
 * without it (`withoutStarts`), on inputs where no group of the library's own line would collide.
 */
import { Observable, config, filter } from 'rxjs';
import { textbookLoop } from '../../examples/textbook-loop.js';
import { scenario } from '../../marbles/support/scenario.js';
import { LoopEvent, LoopOptions, Provider, ProviderEvent, ToolRegistry, UserMessage, runEventedToolLoop } from '../../src/index.js';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from '../../src/testing/index.js';

const user = (content: string): UserMessage => ({ role: 'user', content });
/** The n-th call plays the n-th line. */
const nth = <T>(...runs: Observable<T>[]) => {
  let calls = 0;
  return () => runs[calls++]!;
};

type Loop = (options: Pick<LoopOptions, 'provider' | 'registry' | 'messages' | 'maxTurns'>) => Observable<LoopEvent>;
/** The events both loops have: everything but R23's `tool_start`, which only the library emits. */
const withoutStarts = filter((event: LoopEvent) => event.type !== 'tool_start');

const both: [string, Loop][] = [
  ['runEventedToolLoop', runEventedToolLoop],
  ['textbookLoop', textbookLoop],
];

describe('where the textbook loop passes: the same line as the library, frame for frame', () => {
  describe('marbles/01-s04-current-time', () => {
    const diagram = {
      turn1:       '-s-c---u|',
      currentTime: '   (R|)',
      turn2:       '        ----s-t-e|',
      loop:        '1s-(cR)u(E2)s-t-e(FL|)',
    };
    const events = { s: start, c: call('current_time'), u: end('toolUse'), t: text('工具结果是：2026-01-01T00:00:00Z'), e: end('stop') };
    const loop = {
      ...loopLegend(events, {}),
      1: 'turn_start 1',
      R: 'tool_result current_time: 2026-01-01T00:00:00Z',
      E: 'turn_end 1 (toolUse): user, assistant[current_time], toolResult current_time',
      2: 'turn_start 2',
      F: 'turn_end 2 (stop): user, assistant[current_time], toolResult current_time, assistant "工具结果是：2026-01-01T00:00:00Z"',
      L: 'loop_end stop',
    };

    for (const [name, run] of both) {
      scenario(`${name}: s04, 现在几点？`, ({ cold, expectObservable }) => {
        const currentTime = cold(diagram.currentTime, { R: '2026-01-01T00:00:00Z' });
        const provider = marbleProvider(cold(diagram.turn1, events), cold(diagram.turn2, events));
        const output = run({ provider, registry: marbleTools({ current_time: currentTime }), messages: [user('现在几点？')] });
        expectObservable(output.pipe(withoutStarts, described)).toBe(diagram.loop, loop);
      });
    }
  });

  describe('marbles/03-delayed-tool', () => {
    const diagram = {
      turn1:       '-s-h-c-i-u|',
      weather:     '     --------(R|)',
      turn2:       '             -----s-t-e|',
      loop:        '1s-h-c-i-u---(RE2)s-t-e(FL|)',
      turn1Runs:   '^---------!',
      weatherRuns: '-----^-------!',
    };
    const events = {
      s: start,
      h: text('Let me check. '),
      c: call('weather', { city: 'Paris' }),
      i: text('One moment.'),
      u: end('toolUse'),
      t: text('Sunny, 21 °C.'),
      e: end('stop'),
    };
    const loop = {
      ...loopLegend(events, {}),
      1: 'turn_start 1',
      R: 'tool_result weather: sunny, 21 °C',
      E: 'turn_end 1 (toolUse): user, assistant "Let me check. One moment."[weather], toolResult weather',
      2: 'turn_start 2',
      F: 'turn_end 2 (stop): user, assistant "Let me check. One moment."[weather], toolResult weather, assistant "Sunny, 21 °C."',
      L: 'loop_end stop',
    };

    for (const [name, run] of both) {
      scenario(`${name}: two turns with a delayed tool`, ({ cold, expectObservable, expectSubscriptions }) => {
        const weather = cold(diagram.weather, { R: 'sunny, 21 °C' });
        const turn1 = cold(diagram.turn1, events);
        const provider = marbleProvider(turn1, cold(diagram.turn2, events));
        const output = run({ provider, registry: marbleTools({ weather }), messages: [user('Weather in Paris?')] });
        expectObservable(output.pipe(withoutStarts, described)).toBe(diagram.loop, loop);
        expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
        expectSubscriptions(weather.subscriptions).toBe(diagram.weatherRuns);
      });
    }
  });
});

describe('where it fails', () => {
  describe('R8: take(maxTurns) subscribes the provider once more and tears it down at once', () => {
    // marbles/09-max-turns: the same loop line for both; the difference is in turn2's subscriptions.
    // The provider's 3rd subscription replays turn2 (it is given twice), so turn2Runs shows it.
    const diagram = {
      turn1:     '-s-a-u|',
      poll1:     '   ---(A|)',
      turn2:     '      -----s-a-u|',
      poll2:     '             ---(B|)',
      loop:      '1s-a-u(AE2)s-a-u(BFL|)',
      turn1Runs: '^-----!',
      turn2Runs: '------^---------!',
      // the textbook loop: the same, and a 3rd provider call subscribed and unsubscribed at frame 16,
      // in the frame of the 2nd turn_end. `expand` passes turn_end 2 on, `take(2)` completes on it,
      // and only then does `expand` call its project, which starts turn 3 under a closed subscriber.
      turn2RunsTextbook: ['------^---------!', '----------------(^!)'],
    };
    const events = { s: start, a: call('poll'), u: end('toolUse') };
    const loop = {
      ...loopLegend(events, {}),
      1: 'turn_start 1',
      A: 'tool_result poll: pending',
      E: 'turn_end 1 (toolUse): user, assistant[poll], toolResult poll',
      2: 'turn_start 2',
      B: 'tool_result poll: still pending',
      F: 'turn_end 2 (toolUse): user, assistant[poll], toolResult poll, assistant[poll], toolResult poll',
      L: 'loop_end maxTurns',
    };
    const turn2Runs: Record<string, string | string[]> = { runEventedToolLoop: diagram.turn2Runs, textbookLoop: diagram.turn2RunsTextbook };

    for (const [name, run] of both) {
      scenario(`${name}: maxTurns 2`, ({ cold, expectObservable, expectSubscriptions }) => {
        const turn1 = cold(diagram.turn1, events);
        const turn2 = cold(diagram.turn2, events);
        const poll = nth(cold(diagram.poll1, { A: 'pending', B: 'still pending' }), cold(diagram.poll2, { A: 'pending', B: 'still pending' }));
        const output = run({ provider: marbleProvider(turn1, turn2, turn2), registry: marbleTools({ poll }), messages: [user('wait')], maxTurns: 2 });
        expectObservable(output.pipe(withoutStarts, described)).toBe(diagram.loop, loop);
        expectSubscriptions(turn1.subscriptions).toBe(diagram.turn1Runs);
        expectSubscriptions(turn2.subscriptions).toBe(turn2Runs[name]!);
      });
    }

    it('with maxTurns N and a model that always asks, the textbook loop subscribes the provider N+1 times; the library N', () => {
      for (const maxTurns of [1, 2, 3, 8]) {
        const library = alwaysAsking();
        const textbook = alwaysAsking();
        const libraryEnd = lastEventOf(runEventedToolLoop({ provider: library.provider, registry: echoRegistry(), messages: [user('go')], maxTurns }));
        const textbookEnd = lastEventOf(textbookLoop({ provider: textbook.provider, registry: echoRegistry(), messages: [user('go')], maxTurns }));
        expect(library.subscriptions()).toBe(maxTurns);
        expect(textbook.subscriptions()).toBe(maxTurns + 1);
        // both still end as the library does: the extra call is invisible in the events
        expect(libraryEnd).toMatchObject({ type: 'loop_end', reason: 'maxTurns' });
        expect(textbookEnd).toMatchObject({ type: 'loop_end', reason: 'maxTurns' });
      }
    });
  });

  describe('R12: synchronous turns', () => {
    /*
     * The textbook loop with a synchronous provider and tool: each turn's turn_end is emitted from
     * inside the turn (the provider's complete, through mergeMap and toArray), and expand subscribes
     * the next turn right there, so every turn adds its frames to the call stack. Measured here (Node
     * 20, jest, this spec): 133 whole turns, and turn 134 stops halfway (after its tool_call), with a
     * fresh process; more (~180–230) once V8 has optimized rxjs's functions and their frames are
     * smaller, and fewer for a loop with more operators per turn. So 1,000 turns, and a range.
     *
     * How it dies: the stack overflows while rxjs is subscribing the next turn; rxjs catches the
     * RangeError and sends it down as an error, but that needs stack too and overflows again, after
     * the subscribers on the way have marked themselves stopped. When the error is caught again
     * further up, it can only reach stopped subscribers, and rxjs drops it (it reports a dropped
     * notification to `config.onStoppedNotification` only, on a timer; that hook is null by default).
     * The consumer gets no `loop_end`, no error, no complete, and its subscription stays open.
     */
    it('the textbook loop stops silently after a hundred-odd turns: no loop_end, no error, no complete', async () => {
      const dropped: unknown[] = [];
      config.onStoppedNotification = (notification) => {
        if (notification.kind === 'E') dropped.push(notification.error);
      };
      try {
        const provider = synchronousTurns(1_000);
        const seen = { turnStarts: 0, turnEnds: 0, loopEnds: 0, errors: 0, completes: 0 };
        const subscription = textbookLoop({ provider: provider.provider, registry: echoRegistry(), messages: [user('go')], maxTurns: 1_000 }).subscribe({
          next: (event) => {
            if (event.type === 'turn_start') seen.turnStarts++;
            if (event.type === 'turn_end') seen.turnEnds++;
            if (event.type === 'loop_end') seen.loopEnds++;
          },
          error: () => seen.errors++,
          complete: () => seen.completes++,
        });
        // subscribe() returned normally, and synchronously, without reaching the end
        expect(seen.turnStarts).toBeGreaterThan(50);
        expect(seen.turnStarts).toBeLessThan(500);
        // the overflow may come between a turn's turn_start and its provider call (seen: 135 starts, 134 calls)
        expect(provider.subscriptions()).toBeGreaterThanOrEqual(seen.turnStarts - 1);
        expect(provider.subscriptions()).toBeLessThanOrEqual(seen.turnStarts);
        expect(seen.turnEnds).toBeGreaterThanOrEqual(seen.turnStarts - 1);
        expect(seen).toMatchObject({ loopEnds: 0, errors: 0, completes: 0 });
        expect(subscription.closed).toBe(false);

        await new Promise((resolve) => setTimeout(resolve, 0)); // rxjs reports dropped notifications on a timer
        expect(dropped.length).toBeGreaterThan(0);
        expect(dropped[0]).toBeInstanceOf(RangeError);
        expect(dropped[0]).toHaveProperty('message', 'Maximum call stack size exceeded');
        expect(seen).toMatchObject({ loopEnds: 0, errors: 0, completes: 0 }); // and nothing came later
        subscription.unsubscribe();
      } finally {
        config.onStoppedNotification = null;
      }
    });

    it('runEventedToolLoop runs 10,000 synchronous turns to loop_end before subscribe() returns', () => {
      const provider = synchronousTurns(10_000);
      const seen = { turnEnds: 0, completes: 0 };
      let last: LoopEvent | undefined;
      runEventedToolLoop({ provider: provider.provider, registry: echoRegistry(), messages: [user('go')], maxTurns: 10_000 }).subscribe({
        next: (event) => {
          last = event;
          if (event.type === 'turn_end') seen.turnEnds++;
        },
        complete: () => seen.completes++,
      });
      expect(provider.subscriptions()).toBe(10_000);
      expect(seen).toEqual({ turnEnds: 10_000, completes: 1 });
      expect(last).toMatchObject({ type: 'loop_end', reason: 'stop' });
    });
  });

  describe('R4: the textbook history has the results in completion order', () => {
    // marbles/04-parallel-out-of-order: the same line for both, but not the same turn_end (E, F):
    // toArray() collects fast's result first; the library keeps one slot per call.
    const diagram = {
      turn1: '-s-a-b-u|',
      slow:  '   ---------(A|)',
      fast:  '     ----(B|)',
      turn2: '            -----s-t-e|',
      loop:  '1s-a-b-u-B--(AE2)s-t-e(FL|)',
    };
    const events = { s: start, a: call('slow'), b: call('fast'), u: end('toolUse'), t: text('S and F'), e: end('stop') };
    const common = { ...loopLegend(events, {}), 1: 'turn_start 1', B: 'tool_result fast: F', A: 'tool_result slow: S', 2: 'turn_start 2', L: 'loop_end stop' };
    const legends: Record<string, Record<string, string>> = {
      runEventedToolLoop: {
        ...common,
        E: 'turn_end 1 (toolUse): user, assistant[slow,fast], toolResult slow, toolResult fast',
        F: 'turn_end 2 (stop): user, assistant[slow,fast], toolResult slow, toolResult fast, assistant "S and F"',
      },
      textbookLoop: {
        ...common,
        E: 'turn_end 1 (toolUse): user, assistant[slow,fast], toolResult fast, toolResult slow',
        F: 'turn_end 2 (stop): user, assistant[slow,fast], toolResult fast, toolResult slow, assistant "S and F"',
      },
    };

    for (const [name, run] of both) {
      scenario(`${name}: two parallel tools finish out of order`, ({ cold, expectObservable }) => {
        const slow = cold(diagram.slow, { A: 'S' });
        const fast = cold(diagram.fast, { B: 'F' });
        const provider = marbleProvider(cold(diagram.turn1, events), cold(diagram.turn2, events));
        const output = run({ provider, registry: marbleTools({ slow, fast }), messages: [user('go')] });
        expectObservable(output.pipe(withoutStarts, described)).toBe(diagram.loop, legends[name]);
      });
    }
  });

  describe('R10: a provider error errors the textbook loop', () => {
    // marbles/11-provider-error: the library ends the turn as a message and completes; the textbook
    // loop errors at once, and the running tool is unsubscribed with it (no result, no history).
    const diagram = {
      turn1: '-s-h-a-#',
      slow:  '     -----(A|)',
      loop: {
        runEventedToolLoop: '1s-h-a----(AEL|)',
        textbookLoop:       '1s-h-a-#',
      },
      slowRuns: {
        runEventedToolLoop: '-----^----!',
        textbookLoop:       '-----^-!',
      },
    };
    const events = { s: start, h: text('Hel'), a: call('slow') };
    const loop = {
      ...loopLegend(events, {}),
      1: 'turn_start 1',
      A: 'tool_result slow: S',
      E: 'turn_end 1 (error: provider error: connection reset): user, assistant "Hel"[slow], toolResult slow',
      L: 'loop_end error',
    };

    for (const [name, run] of both) {
      scenario(`${name}: the provider errors mid-stream`, ({ cold, expectObservable, expectSubscriptions }) => {
        const error = new Error('connection reset');
        const slow = cold(diagram.slow, { A: 'S' });
        const output = run({ provider: marbleProvider(cold(diagram.turn1, events, error)), registry: marbleTools({ slow }), messages: [user('go')] });
        expectObservable(output.pipe(withoutStarts, described)).toBe(diagram.loop[name as keyof typeof diagram.loop], loop, error);
        expectSubscriptions(slow.subscriptions).toBe(diagram.slowRuns[name as keyof typeof diagram.slowRuns]);
      });
    }
  });
});

// ---- synchronous doubles for the plain tests ----

/** A synchronous provider that asks for `echo` on every call, and counts its subscriptions. */
function alwaysAsking(): { provider: Provider; subscriptions: () => number } {
  return synchronousTurns(Infinity);
}

/** A synchronous provider whose first `count - 1` calls ask for `echo` and whose last one answers. */
function synchronousTurns(count: number): { provider: Provider; subscriptions: () => number } {
  let subscriptions = 0;
  const provider: Provider = () =>
    new Observable<ProviderEvent>((subscriber) => {
      subscriptions++;
      const events = subscriptions < count ? [start, call('echo', {}, `c${subscriptions}`), end('toolUse')] : [start, text('done'), end('stop')];
      for (const event of events) subscriber.next(event);
      subscriber.complete();
    });
  return { provider, subscriptions: () => subscriptions };
}

function echoRegistry(): ToolRegistry {
  return new ToolRegistry().register({ name: 'echo', description: 'echoes', input: {}, handler: () => 'again' });
}

function lastEventOf(loop: Observable<LoopEvent>): LoopEvent | undefined {
  let last: LoopEvent | undefined;
  loop.subscribe((event) => (last = event));
  return last;
}
