/** C4: `toViewModel()` folds a loop's (or a conversation's) events into view states, one per event. */
import { Observable, concat, defer, map, of, tap, timer } from 'rxjs';
import { RunHelpers, TestScheduler } from 'rxjs/testing';
import {
  AgentMessage,
  ConversationEvent,
  LoopEvent,
  LoopOptions,
  LoopViewModel,
  Provider,
  Usage,
  UserMessage,
  initialViewModel,
  reduceViewModel,
  runEventedToolLoop,
  toViewModel,
  toolProgress,
} from '../../src/index.js';
import { call, described, end, loopLegend, marbleProvider, marbleTools, start, text } from '../../src/testing/index.js';

const testScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const ask: AgentMessage[] = [{ role: 'user', content: 'go' }];

/** A state as a short line: `streaming 1 "Hi" [a:running 50%, b:queued]`. */
function view({ status, turn, text, tools }: LoopViewModel): string {
  const said = text === '' ? '' : ` "${text}"`;
  const listed = tools.length === 0 ? '' : ` [${tools.map((t) => `${t.id}:${t.state}${t.progress === undefined ? '' : ` ${t.progress}`}`).join(', ')}]`;
  return `${status} ${turn}${said}${listed}`;
}

/** Token counts as `in/out`, with `cache R/W` once reported. */
function tokens({ inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens }: Usage): string {
  const cache = cacheReadTokens === undefined && cacheWriteTokens === undefined ? '' : ` cache ${cacheReadTokens ?? 0}/${cacheWriteTokens ?? 0}`;
  return `${inputTokens}/${outputTokens}${cache}`;
}

/** A loop and its view line, each from a fresh provider: `marbleProvider` plays its turns once. */
function loopOf(options: () => LoopOptions) {
  return {
    events: defer(() => runEventedToolLoop(options())).pipe(described),
    states: defer(() => runEventedToolLoop(options())).pipe(toViewModel(), map(view)),
  };
}

/** An `AbortSignal` that aborts at `frame`; call it inside `run`. */
function abortsAt(frame: number): AbortSignal {
  const controller = new AbortController();
  timer(frame).subscribe(() => controller.abort());
  return controller.signal;
}

describe('toViewModel (C4)', () => {
  it('one state per event: text streams, a tool runs with progress, the next turn starts afresh, the loop ends done', () => {
    testScheduler().run(({ cold, expectObservable }: RunHelpers) => {
      const diagram = {
        turn1:  '-s-h-a---u|',
        a:      '     -----p-(R|)',
        turn2:  '            -----s-t-e|',
        events: '1s-h-(aα)uP-(RE2)s-t-e(FL|)',
        states: 'AB-C-(DE)FG-(HH2)I-J-K(KL|)',
      };
      const provided = { s: start, h: text('Hi'), a: call('a'), u: end('toolUse'), t: text('Sunny.'), e: end('stop') };
      const a = cold(diagram.a, { p: toolProgress('50%'), R: 'sunny' });
      const { events, states } = loopOf(() => ({
        provider: marbleProvider(cold(diagram.turn1, provided), cold(diagram.turn2, provided)),
        registry: marbleTools({ a }),
        messages: ask,
      }));
      expectObservable(events).toBe(
        diagram.events,
        loopLegend(provided, {
          1: 'turn_start 1',
          α: 'tool_start a',
          P: 'tool_update a: 50%',
          R: 'tool_result a: sunny',
          E: 'turn_end 1 (toolUse): user, assistant "Hi"[a], toolResult a',
          2: 'turn_start 2',
          F: 'turn_end 2 (stop): user, assistant "Hi"[a], toolResult a, assistant "Sunny."',
          L: 'loop_end stop',
        }),
      );
      expectObservable(states).toBe(diagram.states, {
        A: 'idle 1',
        B: 'streaming 1',
        C: 'streaming 1 "Hi"',
        D: 'streaming 1 "Hi" [a:queued]',
        E: 'streaming 1 "Hi" [a:running]',
        F: 'tools 1 "Hi" [a:running]',
        G: 'tools 1 "Hi" [a:running 50%]',
        H: 'idle 1 "Hi" [a:done]',
        2: 'idle 2',
        I: 'streaming 2',
        J: 'streaming 2 "Sunny."',
        K: 'idle 2 "Sunny."',
        L: 'done 2 "Sunny."',
      });
    });
  });

  it('progress: the last tool_update is the running tool\'s progress; its result drops it (R14)', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const diagram = {
        turn1:    '-s-a---u|',
        download: '   ---p-q-(R|)',
        turn2:    '          ------(se|)',
        events:   '1s-(aα)uP-(QRE2)(seFL|)',
        states:   'AB-(CD)EF-(GHH2)(IJJK|)',
      };
      const provided = { s: start, a: call('download'), u: end('toolUse'), e: end('stop') };
      const download = cold(diagram.download, { p: '30%', q: '60%', R: 'saved' });
      const { events, states } = loopOf(() => ({
        provider: marbleProvider(cold(diagram.turn1, provided), cold(diagram.turn2, provided)),
        registry: marbleTools({ download }),
        messages: ask,
      }));
      expectObservable(events).toBe(
        diagram.events,
        loopLegend(provided, {
          1: 'turn_start 1',
          α: 'tool_start download',
          P: 'tool_update download: 30%',
          Q: 'tool_update download: 60%',
          R: 'tool_result download: saved',
          E: 'turn_end 1 (toolUse): user, assistant[download], toolResult download',
          2: 'turn_start 2',
          F: 'turn_end 2 (stop): user, assistant[download], toolResult download, assistant',
          L: 'loop_end stop',
        }),
      );
      expectObservable(states).toBe(diagram.states, {
        A: 'idle 1',
        B: 'streaming 1',
        C: 'streaming 1 [download:queued]',
        D: 'streaming 1 [download:running]',
        E: 'tools 1 [download:running]',
        F: 'tools 1 [download:running 30%]',
        G: 'tools 1 [download:running 60%]',
        H: 'idle 1 [download:done]',
        2: 'idle 2',
        I: 'streaming 2',
        J: 'idle 2',
        K: 'done 2',
      });
    });
  });

  it.each([
    ['sequential mode', { toolExecution: 'sequential' as const }],
    ['maxConcurrency 1', { maxConcurrency: 1 }],
  ])('%s: a call that waits for its slot is queued, running from its tool_start', (_mode, limit) => {
    testScheduler().run(({ cold, expectObservable }) => {
      const diagram = {
        turn1:  '-s-a---b-u|',
        first:  '   --------(A|)',
        second: '           ----(B|)',
        turn2:  '               -----s-t-e|',
        events: '1s-(aα)b-u-(Aβ)(BE2)s-t-e(FL|)',
        states: 'AB-(CD)E-F-(GH)(IIJ)K-L-M(MN|)',
      };
      const provided = { s: start, a: call('first'), b: call('second'), u: end('toolUse'), t: text('done'), e: end('stop') };
      const first = cold(diagram.first, { A: 'one' });
      const second = cold(diagram.second, { B: 'two' });
      const { events, states } = loopOf(() => ({
        provider: marbleProvider(cold(diagram.turn1, provided), cold(diagram.turn2, provided)),
        registry: marbleTools({ first, second }),
        messages: ask,
        ...limit,
      }));
      expectObservable(events).toBe(
        diagram.events,
        loopLegend(provided, {
          1: 'turn_start 1',
          α: 'tool_start first',
          A: 'tool_result first: one',
          β: 'tool_start second',
          B: 'tool_result second: two',
          E: 'turn_end 1 (toolUse): user, assistant[first,second], toolResult first, toolResult second',
          2: 'turn_start 2',
          F: 'turn_end 2 (stop): user, assistant[first,second], toolResult first, toolResult second, assistant "done"',
          L: 'loop_end stop',
        }),
      );
      expectObservable(states).toBe(diagram.states, {
        A: 'idle 1',
        B: 'streaming 1',
        C: 'streaming 1 [first:queued]',
        D: 'streaming 1 [first:running]',
        E: 'streaming 1 [first:running, second:queued]',
        F: 'tools 1 [first:running, second:queued]',
        G: 'tools 1 [first:done, second:queued]',
        H: 'tools 1 [first:done, second:running]',
        I: 'idle 1 [first:done, second:done]',
        J: 'idle 2',
        K: 'streaming 2',
        L: 'streaming 2 "done"',
        M: 'idle 2 "done"',
        N: 'done 2 "done"',
      });
    });
  });

  it('error results: a handler that throws, an unknown tool (no tool_start), a repeated id (listed as ID_dup2, R28)', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const diagram = {
        turn1:  '-s-f-----n---f---u|',
        turn2:  '                  (se|)',
        events: '1s-(fφF)-(nN)(fD)u(E2seGL|)',
        states: 'AB-(CDG)-(HI)(IJ)K(KLMLLN|)',
      };
      const provided = { s: start, f: call('fail'), n: call('nope'), u: end('toolUse'), e: end('stop') };
      const { events, states } = loopOf(() => ({
        provider: marbleProvider(cold(diagram.turn1, provided), cold(diagram.turn2, provided)),
        registry: marbleTools({
          fail: () => {
            throw new Error('boom');
          },
        }),
        messages: ask,
      }));
      expectObservable(events).toBe(
        diagram.events,
        loopLegend(provided, {
          1: 'turn_start 1',
          φ: 'tool_start fail',
          F: 'tool_result fail: error: boom (isError)',
          N: 'tool_result nope: unknown tool: nope (isError)',
          D: 'tool_result fail: error: duplicate tool call id: fail (isError)',
          E: 'turn_end 1 (toolUse): user, assistant[fail,nope,fail], toolResult fail, toolResult nope, toolResult fail',
          2: 'turn_start 2',
          G: 'turn_end 2 (stop): user, assistant[fail,nope,fail], toolResult fail, toolResult nope, toolResult fail, assistant',
          L: 'loop_end stop',
        }),
      );
      expectObservable(states).toBe(diagram.states, {
        A: 'idle 1',
        B: 'streaming 1',
        C: 'streaming 1 [fail:queued]',
        D: 'streaming 1 [fail:running]',
        G: 'streaming 1 [fail:error]',
        H: 'streaming 1 [fail:error, nope:queued]',
        I: 'streaming 1 [fail:error, nope:error]',
        J: 'streaming 1 [fail:error, nope:error, fail_dup2:error]',
        K: 'idle 1 [fail:error, nope:error, fail_dup2:error]',
        L: 'idle 2',
        M: 'streaming 2',
        N: 'done 2',
      });
    });
  });

  it('an aborted loop (signal): the running and the queued call end in error, the status is aborted (R11)', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const diagram = {
        turn1:  '-s-a---b-h',
        search: '   ',
        signal: '-----------!',
        events: '1s-(aα)b-h-(ABEL|)',
        states: 'AB-(CD)E-F-(GHIJ|)',
      };
      const provided = { s: start, a: call('search'), b: call('fetch'), h: text('Searching') };
      const search = cold(diagram.search);
      const { events, states } = loopOf(() => ({
        provider: marbleProvider(cold(diagram.turn1, provided)),
        registry: marbleTools({ search, fetch: 'never runs' }),
        messages: ask,
        maxConcurrency: 1,
        signal: abortsAt(diagram.signal.indexOf('!')),
      }));
      expectObservable(events).toBe(
        diagram.events,
        loopLegend(provided, {
          1: 'turn_start 1',
          α: 'tool_start search',
          A: 'tool_result search: error: aborted (isError)',
          B: 'tool_result fetch: error: aborted (isError)',
          E: 'turn_end 1 (aborted: aborted): user, assistant "Searching"[search,fetch], toolResult search, toolResult fetch',
          L: 'loop_end aborted',
        }),
      );
      expectObservable(states).toBe(diagram.states, {
        A: 'idle 1',
        B: 'streaming 1',
        C: 'streaming 1 [search:queued]',
        D: 'streaming 1 [search:running]',
        E: 'streaming 1 [search:running, fetch:queued]',
        F: 'streaming 1 "Searching" [search:running, fetch:queued]',
        G: 'streaming 1 "Searching" [search:error, fetch:queued]',
        H: 'streaming 1 "Searching" [search:error, fetch:error]',
        I: 'idle 1 "Searching" [search:error, fetch:error]',
        J: 'aborted 1 "Searching" [search:error, fetch:error]',
      });
    });
  });

  it('a provider error: streaming until the turn ends (no message_end), the running tool finishes, the status is error (R10)', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const diagram = {
        turn1:  '-s-h-a-#',
        slow:   '     -----(A|)',
        events: '1s-h-(aα)-(AEL|)',
        states: 'AB-C-(DE)-(FGH|)',
      };
      const provided = { s: start, h: text('Hel'), a: call('slow') };
      const slow = cold(diagram.slow, { A: 'S' });
      const { events, states } = loopOf(() => ({
        provider: marbleProvider(cold(diagram.turn1, provided, new Error('connection reset'))),
        registry: marbleTools({ slow }),
        messages: ask,
      }));
      expectObservable(events).toBe(
        diagram.events,
        loopLegend(provided, {
          1: 'turn_start 1',
          α: 'tool_start slow',
          A: 'tool_result slow: S',
          E: 'turn_end 1 (error: provider error: connection reset): user, assistant "Hel"[slow], toolResult slow',
          L: 'loop_end error',
        }),
      );
      expectObservable(states).toBe(diagram.states, {
        A: 'idle 1',
        B: 'streaming 1',
        C: 'streaming 1 "Hel"',
        D: 'streaming 1 "Hel" [slow:queued]',
        E: 'streaming 1 "Hel" [slow:running]',
        F: 'streaming 1 "Hel" [slow:done]',
        G: 'idle 1 "Hel" [slow:done]',
        H: 'error 1 "Hel" [slow:done]',
      });
    });
  });

  it('turn 0 of a resumed run: a call with a tool_start and no tool_call is listed, running; then turn 1 (R22)', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const diagram = {
        weather: '----(R|)',
        turn1:   '    -----s-t-e|',
        events:  '(0α)(RE1)s-t-e(FL|)',
        states:  '(AB)(CCD)E-F-G(GH|)',
      };
      const saved: AgentMessage[] = [
        { role: 'user', content: 'weather and time?' },
        {
          role: 'assistant',
          content: 'Checking.',
          stopReason: 'toolUse',
          toolCalls: [
            { id: 'weather', name: 'weather', input: {} },
            { id: 'clock', name: 'clock', input: {} },
          ],
        },
        { role: 'toolResult', toolCallId: 'clock', toolName: 'clock', content: '12:00', isError: false },
      ];
      const provided = { s: start, t: text('Sunny at noon.'), e: end('stop') };
      const weather = cold(diagram.weather, { R: 'sunny' });
      const { events, states } = loopOf(() => ({
        provider: marbleProvider(cold(diagram.turn1, provided)),
        registry: marbleTools({ weather, clock: 'never asked again' }),
        messages: saved,
      }));
      expectObservable(events).toBe(
        diagram.events,
        loopLegend(provided, {
          0: 'turn_start 0',
          α: 'tool_start weather',
          R: 'tool_result weather: sunny',
          E: 'turn_end 0 (toolUse): user, assistant "Checking."[weather,clock], toolResult weather, toolResult clock',
          1: 'turn_start 1',
          F: 'turn_end 1 (stop): user, assistant "Checking."[weather,clock], toolResult weather, toolResult clock, assistant "Sunny at noon."',
          L: 'loop_end stop',
        }),
      );
      expectObservable(states).toBe(diagram.states, {
        A: 'idle 0',
        B: 'tools 0 [weather:running]',
        C: 'idle 0 [weather:done]',
        D: 'idle 1',
        E: 'streaming 1',
        F: 'streaming 1 "Sunny at noon."',
        G: 'idle 1 "Sunny at noon."',
        H: 'done 1 "Sunny at noon."',
      });
    });
  });
});
