import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import fc from 'fast-check';
import { Observable, concat, concatMap, config, defer, delay, from, interval, lastValueFrom, map, merge, of, take, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { ToolRegistry, agentTool, conversation, runEventedToolLoop, scriptedProvider, type AgentMessage, type ConversationEvent, type ProviderEvent } from 'rx-tool-loop';
import { answerTurn, toolTurn } from '../support/events.js';
import { replay } from './support/replay.js';
import { call, end, marbleProvider, marbleTools, recordMarbles, start, text, type MarbleRecording } from 'rx-tool-loop/testing';

const root = join(__dirname, '..', '..');

describe('recordMarbles (T3)', () => {
  it('inside TestScheduler.run: one character a virtual frame, one letter a description', () => {
    new TestScheduler((actual, expected) => expect(actual).toEqual(expected)).run(({ cold, expectObservable }) => {
      const events = { s: start, c: call('weather'), u: end('toolUse'), t: text('sunny'), e: end('stop') };
      const provider = marbleProvider(cold('-s-c---u|', events), cold('-----s-t-e|', events));
      const registry = marbleTools({ weather: cold('-----(R|)', { R: 'sunny' }) });
      const run = runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'weather?' }] });
      const recording = recordMarbles(run);
      expectObservable(recording, '^').toBe('------------------(r|)', {
        r: expect.objectContaining({
          diagram: '1s-(cγ)e(RE2)s-t-u(FL|)',
          values: {
            1: 'turn_start 1',
            s: 'message_start',
            c: 'tool_call weather',
            γ: 'tool_start weather', // R23: the call's letter in Greek, as in the project's diagrams
            e: 'message_end toolUse',
            R: 'tool_result weather: sunny',
            E: 'turn_end 1 (toolUse): user, assistant[weather], toolResult weather',
            2: 'turn_start 2',
            t: 'text_delta sunny',
            u: 'message_end stop',
            F: 'turn_end 2 (stop): user, assistant[weather], toolResult weather, assistant "sunny"',
            L: 'loop_end stop',
          },
        }) as unknown as string,
      });
    });
  });

  it('is cold: each subscription records a run of its own', async () => {
    let calls = 0;
    const run = runEventedToolLoop({
      provider: () => {
        calls++;
        return of(start, end('stop'));
      },
      registry: marbleTools({}),
      messages: [],
    });
    const recording = recordMarbles(run);
    expect(calls).toBe(0);
    await lastValueFrom(recording);
    await lastValueFrom(recording);
    expect(calls).toBe(2);
  });

  it('a resumed run (turn 0, R22): its replay has no provider line for turn 0 and starts from the saved history', () => {
    let test = '';
    new TestScheduler((actual, expected) => expect(actual).toEqual(expected)).run(({ cold }) => {
      const saved: AgentMessage[] = [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [{ id: 'a', name: 'slow', input: {} }, { id: 'b', name: 'quick', input: {} }] },
        { role: 'toolResult', toolCallId: 'b', toolName: 'quick', content: 'done before', isError: false },
      ];
      const run = runEventedToolLoop({
        provider: marbleProvider(cold('-----s-e|', { s: start, e: end('stop') })),
        registry: marbleTools({ slow: cold('--(R|)', { R: 'late' }), quick: 'again' }),
        messages: saved,
      });
      recordMarbles(run).subscribe((recording) => (test = recording.test));
    });
    expect(test).not.toContain('turn0:');
    expect(test).toContain('marbleProvider(cold(diagram.turn1, events))');
    expect(test).toContain('{"role":"toolResult","toolCallId":"b","toolName":"quick","content":"done before","isError":false}');
  });

  it('refuses a frameMs that is not a positive number', () => {
    expect(() => recordMarbles(of(), { frameMs: 0 })).toThrow(new RangeError('recordMarbles: frameMs must be a number > 0 (got 0)'));
  });

  it('a real-time run: what happens in one synchronous go shares a frame, even when a frame ends meanwhile', async () => {
    const busy = (ms: number) => {
      const until = Date.now() + ms;
      while (Date.now() < until);
    };
    const provider = () =>
      new Observable<ProviderEvent>((subscriber) => {
        subscriber.next(start);
        subscriber.next(text('a'));
        busy(25); // two and a half frames of 10 ms
        subscriber.next(text('b'));
        subscriber.next(end('stop'));
        subscriber.complete();
      });
    const { diagram } = await lastValueFrom(recordMarbles(runEventedToolLoop({ provider, registry: marbleTools({}), messages: [] })));
    // the replay plays a synchronous provider in one frame too
    expect(diagram).toBe('(1stheEL|)');
  });

  it('a real-time run: its generated test replays it and passes when written to a file and run by jest', async () => {
    // every event 60 ms after the one before (6 frames of 10 ms): far enough apart that timer jitter does not move a frame,
    // and a call's (cγ) group of tool_call and tool_start (4 frames) ends before the next event
    const paced = (...events: ProviderEvent[]): Observable<ProviderEvent> => from(events).pipe(concatMap((event) => of(event).pipe(delay(60))));
    let turn = 0;
    const provider = () => {
      turn++;
      return turn === 1
        ? paced(start, text('Checking. '), call('weather', { city: 'Paris' }, 'c1'), call('clock', {}, 'c2'), end('toolUse'))
        : paced(start, text('Sunny at noon.'), end('stop'));
    };
    const registry = marbleTools({
      // answers well after the turn's message_end (at about frame 30), so that the two never share a frame
      weather: () => timer(200).pipe(concatMap(() => of('sunny'))),
      clock: () => timer(20).pipe(concatMap(() => of({ content: 'no clock here', isError: true }))),
    });
    const { diagram, test } = await lastValueFrom(recordMarbles(runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'weather?' }] })));
    expect(diagram).toMatch(/^1-+s-+t-+\(cγ\)-+\(aα\).*\(uFL\|\)$/);

    const folder = mkdtempSync(join(root, 'spec', 'testing', 'recorded-'));
    try {
      writeFileSync(join(folder, 'recorded.spec.ts'), test);
      // jest exits non-zero when the test fails, and execFileSync throws with its output
      execFileSync(process.execPath, [join(root, 'node_modules/jest/bin/jest.js'), '--ci', relative(root, folder)], {
        cwd: root,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (error) {
      const { stdout, stderr, message } = error as { stdout?: string; stderr?: string; message: string };
      throw new Error(`the recorded test failed:\n${test}\n${stdout ?? ''}${stderr ?? message}`);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 60_000);

  it('draws a conversation\'s prompt_dropped with a letter of its own, X first (left open (a))', () => {
    new TestScheduler((actual, expected) => expect(actual).toEqual(expected)).run(({ cold, hot, expectObservable }) => {
      const events = { s: start, t: text('hm') };
      const prompts = cold('a-b--|', { a: 'first', b: 'second' });
      const stop = hot('----x');
      const run = prompts.pipe(conversation({ provider: marbleProvider(cold('-s-t', events)), registry: marbleTools({}), abort$: stop }));
      expectObservable(recordMarbles(run).pipe(map(({ diagram, values }) => ({ diagram, values: values['X'] })))).toBe('-----(r|)', {
        r: { diagram: '(U1)st(XEL)|', values: 'prompt_dropped second' }, // dropped at the press, before the aborted loop's turn_end
      });
    });
  });

  it('T9: a real-time conversation with a denying hook is rebuilt (prompts as a marble, the hook\'s answer), not only noted', async () => {
    const { test } = await lastValueFrom(
      recordMarbles(
        of('rm it').pipe(
          conversation({
            provider: scriptedProvider([toolTurn(call('rm', {}, 'c1')), answerTurn('ok')]),
            registry: marbleTools({ rm: 'removed' }),
            beforeToolCall: () => ({ action: 'deny', reason: 'no' }),
          }),
        ),
      ),
    );
    expect(test).toContain('cold(diagram.prompts, prompts).pipe(conversation({ provider, registry, beforeToolCall, policy: "queue" }))');
    expect(test).toContain('decision: {"action":"deny","reason":"no"}');
    replay(test);
  });
});

describe('recordMarbles on real-length runs (T7)', () => {
  const answer = (deltas: Observable<ProviderEvent>) => runEventedToolLoop({ provider: () => concat(of(start), deltas, of(end('stop'))), registry: marbleTools({}), messages: [{ role: 'user', content: 'tell me' }] });

  it('T7: a real-length answer of 1,000 distinct deltas is drawn, a letter each, and its test replays it', () => {
    let recording: MarbleRecording | undefined;
    new TestScheduler((actual, expected) => expect(actual).toEqual(expected)).run(() => {
      // from frame 4, after the (1s) group of frames 0–3
      recordMarbles(answer(interval(1).pipe(take(1000), delay(3), map((i) => text(`word${i} `))))).subscribe((r) => (recording = r));
    });
    const { diagram, values, test } = recording!;
    const deltas = Object.entries(values).filter(([, line]) => line.startsWith('text_delta '));
    expect(deltas).toHaveLength(1000);
    expect(deltas.every(([letter]) => letter.length === 1 && !'-|#()^! '.includes(letter))).toBe(true);
    // one character a frame: the line parses back to its 1,000 deltas at their frames
    const parsed = TestScheduler.parseMarbles(diagram, values, undefined, true, true);
    expect(parsed.filter((m) => m.notification.kind === 'N' && String(m.notification.value).startsWith('text_delta ')).map((m) => m.frame / TestScheduler.frameTimeFactor)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 4));
    replay(test);
  });

  it('T7: with { mergeText: true } consecutive text_deltas of one frame are one letter, and the replay sends their text joined', () => {
    let recording: MarbleRecording | undefined;
    new TestScheduler((actual, expected) => expect(actual).toEqual(expected)).run(() => {
      // a streamed answer in bursts: 4 deltas a frame, 250 frames
      const bursts = interval(1).pipe(take(250), delay(3), concatMap((i) => from([0, 1, 2, 3].map((k) => text(`w${i * 4 + k} `)))));
      recordMarbles(answer(bursts), { mergeText: true }).subscribe((r) => (recording = r));
    });
    const { diagram, values, test } = recording!;
    expect(Object.values(values).filter((line) => line.startsWith('text_delta '))).toHaveLength(250);
    expect(diagram.startsWith('(1s)')).toBe(true);
    expect(values[diagram[4]!]).toBe('text_delta w0 w1 w2 w3 ');
    
    expect(diagram.slice(4, 253)).not.toContain('('); // the last burst shares its frame with the end
    replay(test);
  });

  it('T7: a live run of 1,000 deltas in real time (bursts on timers) records, and its test passes as generated', async () => {
    const bursts = interval(3).pipe(take(100), concatMap((i) => from(Array.from({ length: 10 }, (_, k) => text(`w${i * 10 + k} `)))));
    const { values, test } = await lastValueFrom(recordMarbles(answer(bursts), { mergeText: true }));
    expect(Object.values(values).join(' ')).toContain('w999');
    replay(test);
  });

  it('T7: no input makes it throw outside its Observable: random runs, random faults (a property)', () => {
    const unhandled: unknown[] = [];
    const before = config.onUnhandledError;
    config.onUnhandledError = (error) => unhandled.push(error);
    const event = fc.oneof(
      fc.constantFrom<unknown>(start, end('stop'), end('toolUse'), text('x'), call('t'), { type: 'turn_start', turn: 1 }, { type: 'tool_start', call: { id: 't', name: 't', input: {} } }),
      fc.record({ type: fc.constantFrom('turn_start', 'tool_result', 'turn_end', 'loop_end', 'tool_update', 'user_message', 'tool_call', 'odd'), turn: fc.anything() }, { requiredKeys: ['type'] }),
      fc.anything(),
    );
    try {
      fc.assert(
        fc.property(fc.array(fc.tuple(event, fc.nat(3)), { maxLength: 20 }), fc.constantFrom('complete', 'error', 'throw'), (events, ending) => {
          let outcome = 'none';
          new TestScheduler(() => undefined).run(({ cold }) => {
            let frame = 0;
            const timed = events.map(([value, gap]) => ({ value, frame: (frame += gap) }));
            const run$ = new Observable<ConversationEvent>((subscriber) => {
              const subscriptions = timed.map(({ value, frame: at }) => cold(`${'-'.repeat(at)}x`).subscribe(() => subscriber.next(value as ConversationEvent)));
              cold(`${'-'.repeat(frame + 1)}x`).subscribe(() => {
                if (ending === 'complete') subscriber.complete();
                else if (ending === 'error') subscriber.error(new Error('fault'));
                else throw new Error('a fault thrown in a callback');
              });
              return () => subscriptions.forEach((s) => s.unsubscribe());
            });
            recordMarbles(run$).subscribe({ next: () => (outcome = 'recorded'), error: () => (outcome = 'errored') });
          });
          expect(unhandled.filter((e) => (e as Error).message !== 'a fault thrown in a callback')).toEqual([]);
          unhandled.length = 0;
          if (ending !== 'throw') expect(outcome).not.toBe('none');
        }),
        { numRuns: 300, seed: 7 },
      );
    } finally {
      config.onUnhandledError = before;
    }
  });
});

describe('recorded real-time runs replay as generated (T9 revised)', () => {
  /** Provider events, each `ms` after the one before, on real timers. */
  const paced = (ms: number, ...events: ProviderEvent[]): Observable<ProviderEvent> => from(events).pipe(concatMap((event) => of(event).pipe(delay(ms))));
  const busy = (ms: number) => {
    const until = Date.now() + ms;
    while (Date.now() < until);
  };
  // one frame for the whole run: every event shares frame 0, in the order the timers gave them
  const oneFrame = 60_000;

  it('T9 (1): with frameMs 1, a run whose subscription takes a frame or more still starts at frame 0, and its test passes', async () => {
    let turn = 0;
    const provider = () => (turn++ === 0 ? paced(2, start, call('t', {}, 'c1'), end('toolUse')) : paced(2, start, text('ok'), end('stop')));
    // the subscription itself is slow (a cold start): 3 ms before the loop's synchronous turn_start
    const run$ = defer(() => {
      busy(3);
      return runEventedToolLoop({ provider, registry: marbleTools({ t: () => timer(3).pipe(map(() => 'r')) }), messages: [{ role: 'user', content: 'go' }] });
    });
    const { diagram, test } = await lastValueFrom(recordMarbles(run$, { frameMs: 1 }));
    expect(diagram.startsWith('1')).toBe(true); // the synchronous go of the subscription is frame 0, as in the replay
    replay(test);
  });

  it('T9 (2): an agent tool\'s inner events and the outer model\'s events in one frame replay in the recorded order', async () => {
    let outer = 0;
    const inner = () => runEventedToolLoop({ provider: () => paced(2, start, text('inner'), end('stop')), registry: marbleTools({}), messages: [{ role: 'user', content: 'q' }] });
    const run$ = runEventedToolLoop({
      // the outer model goes on talking while the agent tool runs: x and y come between the inner loop's events
      provider: () => (outer++ === 0 ? paced(3, start, call('agent', {}, 'c1'), text('x'), text('y'), end('toolUse')) : paced(2, start, text('ok'), end('stop'))),
      registry: new ToolRegistry().register(agentTool({ name: 'agent', description: 'a', agent: inner })),
      messages: [{ role: 'user', content: 'go' }],
    });
    const { values, test } = await lastValueFrom(recordMarbles(run$, { frameMs: oneFrame }));
    const lines = Object.values(values);
    expect(lines).toContain('tool_update agent: text_delta inner');
    expect(lines).toContain('text_delta x');
    replay(test);
  });

  it('T9 (3): a denied call\'s tool_result and the reply\'s message_end in one frame replay in the recorded order', async () => {
    let turn = 0;
    // frames of 100 ms: the call at 120 ms (frame 1), the hook's denial at 220, the message_end at 250 (both in frame 2)
    const timed = (...events: [number, ProviderEvent][]) => merge(...events.map(([ms, event]) => timer(ms).pipe(map(() => event))));
    const provider = () => (turn++ === 0 ? timed([30, start], [120, call('t', {}, 'c1')], [250, end('toolUse')]) : timed([5, start], [10, text('ok')], [15, end('stop')]));
    const { diagram, values, test } = await lastValueFrom(
      recordMarbles(
        runEventedToolLoop({
          provider,
          registry: marbleTools({ t: 'ran' }),
          messages: [{ role: 'user', content: 'go' }],
          beforeToolCall: () => timer(100).pipe(map(() => ({ action: 'deny' as const, reason: 'no' }))),
        }),
        { frameMs: 100 },
      ),
    );
    const letterOf = (line: string) => Object.keys(values).find((letter) => values[letter] === line)!;
    expect(diagram.indexOf(letterOf('tool_result t: denied: no (isError)'))).toBeLessThan(diagram.indexOf(letterOf('message_end toolUse')));
    expect(test).toContain('decision: {"action":"deny","reason":"no"}');
    replay(test);
  });

  it('T9 (4): a run aborted in frame 0 after its turn started replays its turn_start, then the abort', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 3);
    const run$ = runEventedToolLoop({ provider: () => paced(50, start, text('late'), end('stop')), registry: marbleTools({}), messages: [{ role: 'user', content: 'go' }], signal: controller.signal });
    const { diagram, test } = await lastValueFrom(recordMarbles(run$, { frameMs: oneFrame }));
    expect(diagram).toBe('(1EL|)');
    replay(test);
  });

  it('T9 (4): a run aborted in the same go as its subscription (frame 0) replays its turn_start, then the abort', () => {
    const controller = new AbortController();
    const run$ = runEventedToolLoop({ provider: () => paced(50, start, text('late'), end('stop')), registry: marbleTools({}), messages: [{ role: 'user', content: 'go' }], signal: controller.signal });
    let recording: MarbleRecording | undefined;
    recordMarbles(run$, { frameMs: oneFrame }).subscribe((r) => (recording = r));
    controller.abort(); // synchronously after the subscription: turn_start came, then the abort
    expect(recording!.diagram).toBe('(1EL|)');
    replay(recording!.test);
  });

  it('T9 (4): a run aborted in the go of its subscription after the model\'s first event replays that event before the abort', () => {
    const controller = new AbortController();
    // the model sends message_start at once, the rest later
    const run$ = runEventedToolLoop({ provider: () => concat(of(start), paced(50, text('late'), end('stop'))), registry: marbleTools({}), messages: [{ role: 'user', content: 'go' }], signal: controller.signal });
    let recording: MarbleRecording | undefined;
    recordMarbles(run$, { frameMs: oneFrame }).subscribe((r) => (recording = r));
    controller.abort();
    expect(recording!.diagram).toBe('(1sEL|)');
    replay(recording!.test);
  });
});
