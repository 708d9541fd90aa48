/** C4: `toViewModel()` folds a loop's (or a conversation's) events into view states, one per event. */
import { Observable, Subject, concat, defer, map, of, tap, timer } from 'rxjs';
import { RunHelpers, TestScheduler } from 'rxjs/testing';
import {
  AgentMessage,
  ApprovalAnswer,
  ConversationEvent,
  LoopEvent,
  LoopEventOf,
  LoopOptions,
  LoopViewModel,
  Provider,
  Usage,
  UserMessage,
  initialViewModel,
  reduceViewModel,
  runEventedToolLoop,
  scriptedProvider,
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

/**
 * A conversation by hand (the `conversation()` operator is not used here): for each prompt a `user_message`,
 * then a loop on the history so far; each loop starts when the one before has ended.
 */
function conversationOf(prompts: { content: string; provider: Provider; registry?: LoopOptions['registry']; signal?: AbortSignal }[]): Observable<ConversationEvent> {
  return defer(() => {
    let history: readonly AgentMessage[] = [];
    return concat(
      ...prompts.map(({ content, provider, registry = marbleTools({}), signal }) =>
        defer(() => {
          const message: UserMessage = { role: 'user', content };
          history = [...history, message];
          const prompted: ConversationEvent = { type: 'user_message', message, messages: history };
          const loop = runEventedToolLoop({ provider, registry, messages: history, ...(signal === undefined ? {} : { signal }) });
          return concat(of(prompted), loop.pipe(tap((event: LoopEvent) => event.type === 'loop_end' && (history = event.messages))));
        }),
      ),
    );
  });
}

describe('toViewModel (C4)', () => {
  it('one state per event: text streams, a tool runs with progress, the next turn starts afresh, the loop ends done', () => {
    testScheduler().run(({ cold, expectObservable }: RunHelpers) => {
      const diagram = {
        turn1:  '-s-h-a---u|',
        a:      '     -----p-(R|)',
        turn2:  '            -----s-t-e|',
        events: '1s-h-(aα)uP-(RE2)s-t-e(FL|)',
        states: 'AA-B-(CD)EF-(GGH)H-I-I(IJ|)',
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
        A: 'streaming 1', // C4 revised: from turn_start, the provider call is made
        B: 'streaming 1 "Hi"',
        C: 'streaming 1 "Hi" [a:queued]',
        D: 'streaming 1 "Hi" [a:running]',
        E: 'tools 1 "Hi" [a:running]',
        F: 'tools 1 "Hi" [a:running 50%]',
        G: 'tools 1 "Hi" [a:done]', // its turn_end, of a turn that goes on, keeps the status
        H: 'streaming 2',
        I: 'streaming 2 "Sunny."',
        J: 'done 2 "Sunny."',
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
        A: 'streaming 1',
        B: 'streaming 1',
        C: 'streaming 1 [download:queued]',
        D: 'streaming 1 [download:running]',
        E: 'tools 1 [download:running]',
        F: 'tools 1 [download:running 30%]',
        G: 'tools 1 [download:running 60%]',
        H: 'tools 1 [download:done]',
        2: 'streaming 2',
        I: 'streaming 2',
        J: 'streaming 2',
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
        A: 'streaming 1',
        B: 'streaming 1',
        C: 'streaming 1 [first:queued]',
        D: 'streaming 1 [first:running]',
        E: 'streaming 1 [first:running, second:queued]',
        F: 'tools 1 [first:running, second:queued]',
        G: 'tools 1 [first:done, second:queued]',
        H: 'tools 1 [first:done, second:running]',
        I: 'tools 1 [first:done, second:done]',
        J: 'streaming 2',
        K: 'streaming 2',
        L: 'streaming 2 "done"',
        M: 'streaming 2 "done"',
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
        A: 'streaming 1',
        B: 'streaming 1',
        C: 'streaming 1 [fail:queued]',
        D: 'streaming 1 [fail:running]',
        G: 'streaming 1 [fail:error]',
        H: 'streaming 1 [fail:error, nope:queued]',
        I: 'streaming 1 [fail:error, nope:error]',
        J: 'streaming 1 [fail:error, nope:error, fail_dup2:error]',
        K: 'streaming 1 [fail:error, nope:error, fail_dup2:error]', // nothing busy at message_end: it stays
        L: 'streaming 2',
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
        A: 'streaming 1',
        B: 'streaming 1',
        C: 'streaming 1 [search:queued]',
        D: 'streaming 1 [search:running]',
        E: 'streaming 1 [search:running, fetch:queued]',
        F: 'streaming 1 "Searching" [search:running, fetch:queued]',
        G: 'streaming 1 "Searching" [search:error, fetch:queued]',
        H: 'streaming 1 "Searching" [search:error, fetch:error]',
        I: 'streaming 1 "Searching" [search:error, fetch:error]',
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
        A: 'streaming 1',
        B: 'streaming 1',
        C: 'streaming 1 "Hel"',
        D: 'streaming 1 "Hel" [slow:queued]',
        E: 'streaming 1 "Hel" [slow:running]',
        F: 'streaming 1 "Hel" [slow:done]',
        G: 'streaming 1 "Hel" [slow:done]',
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
        A: 'tools 0', // turn 0 calls no provider: it runs the saved calls
        B: 'tools 0 [weather:running]',
        C: 'tools 0 [weather:done]',
        D: 'streaming 1',
        E: 'streaming 1',
        F: 'streaming 1 "Sunny at noon."',
        G: 'streaming 1 "Sunny at noon."',
        H: 'done 1 "Sunny at noon."',
      });
    });
  });

  it('C4, H8: a call waiting for a person is `approval` (busy: the status is tools once the model is done), then running, then done', () => {
    testScheduler().run(({ cold, hot, expectObservable }) => {
      const diagram = {
        turn1:     '-s-a---u|',
        decisions: '----------d',
        turn2:     '          ------(se|)',
        events:    '1s-(aW)u--(αRE2)(seFL|)',
        states:    'AA-(CD)E--(FGGH)(HHHJ|)',
      };
      const provided = { s: start, a: call('a'), u: end('toolUse'), e: end('stop') };
      const decisions = hot(diagram.decisions, { d: { toolCallId: 'a', decision: true } });
      const { events, states } = loopOf(() => ({
        provider: marbleProvider(cold(diagram.turn1, provided), cold('------(se|)', provided)),
        registry: marbleTools({ a: 'sunny' }),
        messages: ask,
        approvals: { needsApproval: () => true, decisions },
      }));
      expectObservable(events).toBe(
        diagram.events,
        loopLegend(provided, {
          1: 'turn_start 1',
          W: 'tool_approval a',
          α: 'tool_start a',
          R: 'tool_result a: sunny',
          E: 'turn_end 1 (toolUse): user, assistant[a], toolResult a',
          2: 'turn_start 2',
          F: 'turn_end 2 (stop): user, assistant[a], toolResult a, assistant',
          L: 'loop_end stop',
        }),
      );
      expectObservable(states).toBe(diagram.states, {
        A: 'streaming 1',
        C: 'streaming 1 [a:queued]',
        D: 'streaming 1 [a:approval]', // H8: it waits for a person
        E: 'tools 1 [a:approval]', // the model is done, a call still waits: busy
        F: 'tools 1 [a:running]',
        G: 'tools 1 [a:done]',
        H: 'streaming 2',
        J: 'done 2',
      });
    });
  });

  it('C4, H8, R29 widened: once the model is done, the history a tool_approval hands out is the view\'s messages already', () => {
    const decisions = new Subject<ApprovalAnswer>();
    const slow = new Subject<string>();
    const seen: LoopEvent[] = [];
    const states: LoopViewModel[] = [];
    runEventedToolLoop({
      provider: scriptedProvider([[start, call('slow', {}, 'c1'), call('wait', {}, 'c2'), end('toolUse')], [start, text('ok'), end('stop')]]),
      registry: marbleTools({ slow, wait: 'ran' }),
      messages: ask,
      maxConcurrency: 1, // c2 gets its slot, and asks, after the model is done
      approvals: { needsApproval: (toolCall) => toolCall.name === 'wait', decisions },
    })
      .pipe(tap((event) => seen.push(event)), toViewModel(ask))
      .subscribe((state) => states.push(state));
    slow.next('done');
    slow.complete();
    const at = seen.findIndex((event) => event.type === 'tool_approval');
    const approval = seen[at] as LoopEventOf<'tool_approval'>;
    expect(seen.findIndex((event) => event.type === 'message_end')).toBeLessThan(at);
    expect(states[at]!.messages).toEqual(approval.messages);
    expect(view(states[at]!)).toBe('tools 1 [c1:done, c2:approval]');
    decisions.next({ toolCallId: 'c2', decision: false });
    const denied = seen.findIndex((event) => event.type === 'tool_result' && event.message.toolCallId === 'c2');
    expect(view(states[denied]!)).toBe('tools 1 [c1:done, c2:error]');
    expect(view(states.at(-1)!)).toBe('done 2 "ok"');
  });

  it('usage: the conversation\'s totals, summed over its loops; loopUsage: the current loop\'s (R27)', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const diagram = {
        first1:  '----s-c----u|',
        first2:  '            ----s-t-e|',
        second1: '                     ------s-e|',
        events:  '(U1)s-(cγR)u(E2)s-t-e(FLV1)s-e(GLWM|)',
        states:  '(AB)B-(BBN)N(DD)D-D-D(EFGI)I-I(JKLM|)',
      };
      const provided = {
        s: start,
        c: call('clock'),
        u: end('toolUse', { usage: { inputTokens: 10, outputTokens: 5 } }),
        t: text('Noon.'),
        e: end('stop', { usage: { inputTokens: 20, outputTokens: 7, cacheWriteTokens: 4 } }),
        f: end('stop', { usage: { inputTokens: 40, outputTokens: 3, cacheReadTokens: 8 } }),
      };
      const aborted = new AbortController();
      aborted.abort();
      const conversation = () =>
        conversationOf([
          { content: 'time?', provider: marbleProvider(cold(diagram.first1, provided), cold(diagram.first2, provided)), registry: marbleTools({ clock: '12:00' }) },
          { content: 'thanks', provider: marbleProvider(cold(diagram.second1, { s: start, e: provided.f })) },
          { content: 'bye', provider: marbleProvider(), signal: aborted.signal }, // aborted at subscribe: only its loop_end (R7)
        ]);
      expectObservable(conversation().pipe(described)).toBe(diagram.events, {
        ...loopLegend(provided, {}),
        U: 'user_message time?',
        1: 'turn_start 1',
        γ: 'tool_start clock',
        R: 'tool_result clock: 12:00',
        E: 'turn_end 1 (toolUse): user, assistant[clock], toolResult clock',
        2: 'turn_start 2',
        F: 'turn_end 2 (stop): user, assistant[clock], toolResult clock, assistant "Noon."',
        L: 'loop_end stop',
        V: 'user_message thanks',
        G: 'turn_end 1 (stop): user, assistant[clock], toolResult clock, assistant "Noon.", user, assistant',
        W: 'user_message bye',
        M: 'loop_end aborted',
      });
      const usage = ({ status, usage, loopUsage, messages }: LoopViewModel) => `${status} ${tokens(usage)} (loop ${tokens(loopUsage)}) ${messages.length}m`;
      expectObservable(conversation().pipe(toViewModel(), map(usage))).toBe(diagram.states, {
        A: 'idle 0/0 (loop 0/0) 1m', // a user_message before any loop: still initialViewModel's status
        B: 'streaming 0/0 (loop 0/0) 1m',
        N: 'streaming 0/0 (loop 0/0) 3m', // R29: the tool_result's history, to save; message_end keeps the status (C4)
        D: 'streaming 10/5 (loop 10/5) 3m',
        E: 'streaming 30/12 cache 0/4 (loop 30/12 cache 0/4) 4m',
        F: 'done 30/12 cache 0/4 (loop 30/12 cache 0/4) 4m',
        G: 'done 30/12 cache 0/4 (loop 30/12 cache 0/4) 5m', // a user_message: only the messages change
        I: 'streaming 30/12 cache 0/4 (loop 0/0) 5m', // a new loop's turn_start
        J: 'streaming 70/15 cache 8/4 (loop 40/3 cache 8/0) 6m',
        K: 'done 70/15 cache 8/4 (loop 40/3 cache 8/0) 6m',
        L: 'done 70/15 cache 8/4 (loop 40/3 cache 8/0) 7m',
        M: 'aborted 70/15 cache 8/4 (loop 0/0) 7m', // a loop of its own, that counted nothing
      });
    });
  });

  it('never changes a state it handed out: each is a new object, shares what the event left alone, one per event', () => {
    const handedOut: { state: LoopViewModel; snapshot: LoopViewModel; event: ConversationEvent; eventsSoFar: number }[] = [];
    let completed = false;
    let failure: unknown;
    testScheduler().run(({ cold, flush }) => {
      const provided = { s: start, h: text('Hi'), a: call('a'), b: call('b'), n: call('nope'), u: end('toolUse', { usage: { inputTokens: 3, outputTokens: 2 } }), e: end('stop') };
      const a = cold('---p-q-(R|)', { p: toolProgress('30%'), q: '60%', R: 'sunny' });
      const boom = () => {
        throw new Error('boom');
      };
      const registry = marbleTools({ a, b: boom });
      const events: ConversationEvent[] = [];
      conversationOf([
        { content: 'one', provider: marbleProvider(cold('-s-h-a-b-n-u|', provided), cold('-s-h-e|', provided)), registry },
        { content: 'two', provider: marbleProvider(cold('-s-a-a-u|', provided), cold('-(se|)', provided)), registry },
      ])
        .pipe(
          tap((event) => events.push(event)),
          toViewModel(),
        )
        .subscribe({
          next: (state) => {
            // frozen: a reducer that changed a state it handed out would throw (the run would error)
            Object.freeze(state);
            Object.freeze(state.tools).forEach((tool) => Object.freeze(tool));
            Object.freeze(state.messages);
            Object.freeze(state.usage);
            Object.freeze(state.loopUsage);
            handedOut.push({ state, snapshot: structuredClone(state), event: events[events.length - 1]!, eventsSoFar: events.length });
          },
          error: (error: unknown) => (failure = error),
          complete: () => (completed = true),
        });
      flush();
    });
    expect([failure, completed]).toEqual([undefined, true]);
    expect(handedOut.map(({ eventsSoFar }) => eventsSoFar)).toEqual(handedOut.map((_, i) => i + 1)); // one state per event, at once
    const types = ['user_message', 'turn_start', 'message_start', 'text_delta', 'tool_call', 'tool_start', 'tool_update', 'tool_result', 'message_end', 'turn_end', 'loop_end'];
    expect(new Set(handedOut.map(({ event }) => event.type))).toEqual(new Set(types)); // every kind of event was reduced
    expect(handedOut.at(-1)!.state).toMatchObject({ status: 'done', turn: 2, usage: { inputTokens: 6, outputTokens: 4 } });
    for (const { state, snapshot } of handedOut) expect(state).toEqual(snapshot);
    const states = [initialViewModel, ...handedOut.map(({ state }) => state)];
    expect(new Set(states).size).toBe(states.length);
    handedOut.forEach(({ state, event }, i) => {
      const before = states[i]!;
      if (event.type === 'tool_result') expect(state.messages).toBe(event.messages); // R29
      else if (event.type === 'message_end' && state.calls.length > 0) expect(state.messages.at(-1 - state.tools.filter((t) => t.state === 'done' || t.state === 'error').length)).toMatchObject({ role: 'assistant', stopReason: event.stopReason }); // R29 widened
      else if (event.type !== 'turn_end' && event.type !== 'loop_end' && event.type !== 'user_message') expect(state.messages).toBe(before.messages);
      if (event.type !== 'turn_end' && event.type !== 'loop_end') expect(state.usage).toBe(before.usage);
      // a new loop's turn_start sets loopUsage to zeros
      if (event.type !== 'turn_end' && event.type !== 'loop_end' && event.type !== 'turn_start') expect(state.loopUsage).toBe(before.loopUsage);
      if (['message_start', 'text_delta', 'message_end', 'loop_end', 'user_message'].includes(event.type)) expect(state.tools).toBe(before.tools);
      // a tool the event did not touch is the same object
      const touched = event.type === 'tool_result' ? event.message.toolCallId : event.type === 'tool_update' ? event.toolCallId : event.type === 'tool_start' || event.type === 'tool_call' ? event.call.id : undefined;
      if (event.type !== 'turn_start' && event.type !== 'turn_end') {
        for (const tool of state.tools) if (tool.id !== touched) expect(before.tools).toContain(tool);
      }
    });
  });
});

describe('reduceViewModel (C4)', () => {
  const history: AgentMessage[] = [{ role: 'user', content: 'hi' }];
  const assistant = { role: 'assistant' as const, content: '', stopReason: 'toolUse' as const };
  const usage = (inputTokens: number, outputTokens: number): Usage => ({ inputTokens, outputTokens });
  const reduce = (...events: ConversationEvent[]) => events.reduce(reduceViewModel, initialViewModel);

  it('C4, A2: usage adds each agent tool\'s inner loop (its forwarded loop_end, at any depth) to the loop\'s own, once, and keeps it across the turns', () => {
    const innerEnd = (u: Usage): LoopEvent => ({ type: 'loop_end', reason: 'stop', assistant: { role: 'assistant', content: 'x', stopReason: 'stop' }, messages: [], usage: u });
    const forwarded = (event: LoopEvent, name = 'researcher'): LoopEvent => ({ type: 'tool_update', toolCallId: name, toolName: name, content: 'loop_end stop', event });
    const state = reduce(
      { type: 'turn_start', turn: 1 },
      { type: 'tool_call', call: { id: 'researcher', name: 'researcher', input: {} } },
      { type: 'tool_start', call: { id: 'researcher', name: 'researcher', input: {} } },
      forwarded({ type: 'turn_end', turn: 1, assistant, toolResults: [], messages: history, usage: usage(50, 50) }), // a running total, not counted
      forwarded(forwarded(innerEnd(usage(1, 2)), 'leaf')), // two deep
      forwarded(innerEnd(usage(10, 20))),
      { type: 'turn_end', turn: 1, assistant, toolResults: [], messages: history, usage: usage(100, 200) },
    );
    expect(state.usage).toEqual(usage(111, 222));
    expect(state.loopUsage).toEqual(usage(100, 200));
    const later = reduceViewModel(state, { type: 'loop_end', reason: 'stop', assistant, messages: history, usage: usage(300, 400) });
    expect(later.usage).toEqual(usage(311, 422));
  });

  it('starts from initialViewModel, frozen: idle, turn 0, nothing yet', () => {
    expect(initialViewModel).toEqual({ status: 'idle', turn: 0, text: '', tools: [], messages: [], calls: [], usage: usage(0, 0), loopUsage: usage(0, 0) });
    expect(Object.isFrozen(initialViewModel) && Object.isFrozen(initialViewModel.tools) && Object.isFrozen(initialViewModel.messages) && Object.isFrozen(initialViewModel.calls)).toBe(true);
    expect(Object.isFrozen(initialViewModel.usage)).toBe(true);
  });

  it('a user_message changes the messages only, and keeps a finished loop\'s status', () => {
    const done = reduce({ type: 'turn_start', turn: 1 }, { type: 'loop_end', reason: 'stop', assistant, messages: history, usage: usage(1, 1) });
    const messages = [...history, { role: 'user' as const, content: 'more' }];
    const next = reduceViewModel(done, { type: 'user_message', message: { role: 'user', content: 'more' }, messages });
    expect(next).toEqual({ ...done, messages });
    expect(next).not.toBe(done);
    expect(next.status).toBe('done');
    expect(next.tools).toBe(done.tools);
  });

  it('R29: a tool_result\'s messages become the view\'s messages: the history to save at that result', () => {
    const asked = { ...assistant, toolCalls: [{ id: 'c1', name: 't', input: {} }] };
    const result = { role: 'toolResult' as const, toolCallId: 'c1', toolName: 't', content: 'x', isError: false };
    const messages = [...history, asked, result];
    const state = reduce({ type: 'turn_start', turn: 1 }, { type: 'message_start' }, { type: 'tool_call', call: asked.toolCalls[0]! }, { type: 'tool_result', message: result, messages });
    expect(state.messages).toBe(messages);
    expect(state.tools).toEqual([{ id: 'c1', name: 't', state: 'done' }]);
  });

  it('loop_end: aborted for aborted, error for error, done for any other reason', () => {
    const status = (reason: LoopEventOf<'loop_end'>['reason']) => reduce({ type: 'loop_end', reason, assistant, messages: history, usage: usage(0, 0) }).status;
    expect(['stop', 'toolUse', 'length', 'maxTurns', 'terminated', 'error', 'aborted'].map((r) => status(r as LoopEventOf<'loop_end'>['reason']))).toEqual(['done', 'done', 'done', 'done', 'done', 'error', 'aborted']);
  });

  it('at turn_end, a call still queued or running takes its state from the turn\'s toolResults', () => {
    const result = (toolCallId: string, isError: boolean) => ({ role: 'toolResult' as const, toolCallId, toolName: 't', content: 'x', isError });
    const state = reduce(
      { type: 'turn_start', turn: 1 },
      { type: 'message_start' },
      { type: 'tool_call', call: { id: 'a', name: 't', input: {} } },
      { type: 'tool_call', call: { id: 'b', name: 't', input: {} } },
      { type: 'tool_start', call: { id: 'b', name: 't', input: {} } },
      { type: 'message_end', stopReason: 'toolUse' },
    );
    expect(view(state)).toBe('tools 1 [a:queued, b:running]');
    const ended = reduceViewModel(state, { type: 'turn_end', turn: 1, assistant, toolResults: [result('b', true), result('a', false)], messages: history, usage: usage(0, 0) });
    expect(view(ended)).toBe('tools 1 [a:done, b:error]'); // C4 revised: turn_end keeps the status
  });

  it('a tool_update for a call it has not listed adds it, running, with its progress', () => {
    const state = reduce({ type: 'turn_start', turn: 0 }, { type: 'tool_update', toolCallId: 'w', toolName: 'weather', content: '10%' });
    expect(state.tools).toEqual([{ id: 'w', name: 'weather', state: 'running', progress: '10%' }]);
    expect(state.status).toBe('tools');
  });

  it('a loop cut short without its loop_end still counts: the next loop begins at a turn_start whose number does not go up', () => {
    const turnEnd = (turn: number, tokens: Usage): ConversationEvent => ({ type: 'turn_end', turn, assistant, toolResults: [], messages: history, usage: tokens });
    const state = reduce(
      { type: 'turn_start', turn: 1 },
      turnEnd(1, usage(5, 1)),
      { type: 'turn_start', turn: 2 },
      turnEnd(2, usage(9, 2)), // loop 1 so far: 9/2, then it is unsubscribed
      { type: 'turn_start', turn: 1 },
      turnEnd(1, usage(4, 4)),
    );
    expect([state.usage, state.loopUsage]).toEqual([usage(13, 6), usage(4, 4)]);
  });

  it('counts as the loop does: a count that is not a finite number counts as nothing (R27)', () => {
    const state = reduce({ type: 'loop_end', reason: 'stop', assistant, messages: history, usage: { inputTokens: Number.NaN, outputTokens: 2, cacheReadTokens: Infinity } });
    expect(state.usage).toEqual(usage(0, 2));
  });

  it('an event of a type it does not know gives the state as it is', () => {
    const state = reduce({ type: 'turn_start', turn: 1 });
    expect(reduceViewModel(state, { type: 'agent_thought' } as unknown as ConversationEvent)).toBe(state);
  });
});
