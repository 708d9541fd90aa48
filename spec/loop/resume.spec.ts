/** R22: a history whose last assistant message waits for results resumes with turn 0, then the model goes on. */
import fc from 'fast-check';
import { map } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { AgentMessage, LoopEvent, ProviderEvent, ToolRegistry, runEventedToolLoop, scriptedProvider } from '../../src/index.js';
import { assertValidHistory } from '../../src/testing/index.js';
import { answerTurn, call, collectSync, end, loopEndOf, only, start, text, tool, toolTurn } from '../support/events.js';

/** Loop events as short lines: turns with their number, results with their call id. */
const describeType = map((e: LoopEvent) =>
  e.type === 'turn_start' || e.type === 'turn_end'
    ? `${e.type} ${e.turn}`
    : e.type === 'tool_result'
      ? `tool_result ${e.message.toolCallId}`
      : e.type === 'tool_start'
        ? `tool_start ${e.call.id}`
        : e.type,
);

const saved = (): AgentMessage[] => [
  { role: 'user', content: 'check both' },
  {
    role: 'assistant',
    content: 'Checking.',
    stopReason: 'toolUse',
    toolCalls: [
      { id: 'c1', name: 'weather', input: {} },
      { id: 'c2', name: 'clock', input: {} },
      { id: 'c3', name: 'weather', input: {} },
    ],
  },
  // saved while the tools ran: c3 had answered, c1 and c2 had not
  { role: 'toolResult', toolCallId: 'c3', toolName: 'weather', content: 'rain (earlier)', isError: false },
];

function registry(runs: string[] = []) {
  return new ToolRegistry()
    .register(tool('weather', (_input, { call: c }) => (runs.push(c.id), 'sunny')))
    .register(tool('clock', (_input, { call: c }) => (runs.push(c.id), '12:00')));
}

describe('R22 resume', () => {
  it('turn 0: no provider call, the missing calls run, the history gets one result per call in call order; then turn 1', () => {
    const runs: string[] = [];
    const provider = scriptedProvider([answerTurn('Sunny at noon.')]);
    const { values, completed } = collectSync(runEventedToolLoop({ provider, registry: registry(runs), messages: saved() }));
    expect(completed).toBe(true);
    expect(runs).toEqual(['c1', 'c2']); // c3 had its result: it does not run twice
    expect(values.map((e) => e.type).slice(0, 8)).toEqual(['turn_start', 'tool_start', 'tool_result', 'tool_start', 'tool_result', 'turn_end', 'turn_start', 'message_start']);
    const [turn0, turn1] = only(values, 'turn_end');
    expect(only(values, 'turn_start').map((e) => e.turn)).toEqual([0, 1]);
    expect(turn0!.turn).toBe(0);
    expect(turn0!.assistant).toEqual(saved()[1]);
    expect(turn0!.toolResults.map((r) => r.toolCallId)).toEqual(['c1', 'c2']);
    expect(turn0!.messages.slice(2).map((m) => m.role === 'toolResult' && [m.toolCallId, m.content])).toEqual([
      ['c1', 'sunny'],
      ['c2', '12:00'],
      ['c3', 'rain (earlier)'],
    ]);
    expect(provider.inputs).toHaveLength(1);
    expect(provider.inputs[0]!.messages).toEqual(turn0!.messages);
    expect(turn1!.turn).toBe(1);
    expect(loopEndOf(values).reason).toBe('stop');
  });

  it('turn 0 does not count against maxTurns', () => {
    const provider = scriptedProvider([toolTurn(call('clock', {}, 'c9'))]);
    const { values } = collectSync(runEventedToolLoop({ provider, registry: registry(), messages: saved(), maxTurns: 1 }));
    expect(only(values, 'turn_end').map((e) => e.turn)).toEqual([0, 1]);
    expect(loopEndOf(values).reason).toBe('maxTurns');
  });

  it('survives a JSON round trip of a history saved while tools ran', () => {
    const provider = scriptedProvider([answerTurn('ok')]);
    const restored = JSON.parse(JSON.stringify(saved())) as AgentMessage[];
    const { values } = collectSync(runEventedToolLoop({ provider, registry: registry(), messages: restored }));
    expect(loopEndOf(values).reason).toBe('stop');
  });

  it('when every new result asks to terminate, the loop ends after turn 0 with terminated', () => {
    const stop = new ToolRegistry()
      .register(tool('weather', () => ({ content: 'done', terminate: true })))
      .register(tool('clock', () => ({ content: 'done', terminate: true })));
    const provider = scriptedProvider([]);
    const { values } = collectSync(runEventedToolLoop({ provider, registry: stop, messages: saved() }));
    expect(provider.inputs).toHaveLength(0);
    expect(loopEndOf(values).reason).toBe('terminated');
  });

  it('an abort while turn 0 runs: its calls get error: aborted, the saved message stays, no provider call, loop_end aborted', () => {
    new TestScheduler((actual, expected) => expect(actual).toEqual(expected)).run(({ cold, flush }) => {
      const controller = new AbortController();
      const waits = new ToolRegistry().register(tool('weather', () => cold('-----(r|)', { r: 'late' }))).register(tool('clock', () => cold('-----(r|)', { r: 'late' })));
      const provider = scriptedProvider([]);
      const events: LoopEvent[] = [];
      runEventedToolLoop({ provider, registry: waits, messages: saved(), signal: controller.signal }).subscribe((e) => events.push(e));
      cold('--a').subscribe(() => controller.abort());
      flush();
      const [turn0] = only(events, 'turn_end');
      expect(turn0!.assistant).toEqual(saved()[1]);
      expect(turn0!.toolResults.map((r) => [r.toolCallId, r.content])).toEqual([['c1', 'error: aborted'], ['c2', 'error: aborted']]);
      expect(provider.inputs).toHaveLength(0);
      expect(loopEndOf(events)).toMatchObject({ reason: 'aborted', messages: turn0!.messages });
    });
  });

  it('a history without unanswered calls has no turn 0', () => {
    const complete: AgentMessage[] = [...saved().slice(0, 2), ...['c1', 'c2', 'c3'].map((id): AgentMessage => ({ role: 'toolResult', toolCallId: id, toolName: 'weather', content: 'x', isError: false }))];
    const { values } = collectSync(runEventedToolLoop({ provider: scriptedProvider([answerTurn('ok')]), registry: registry(), messages: complete }));
    expect(only(values, 'turn_start').map((e) => e.turn)).toEqual([1]);
  });

  it('a tool of turn 0 runs as any turn\'s: in virtual time, then turn 1 starts in the frame of turn_end 0', () => {
    new TestScheduler((actual, expected) => expect(actual).toEqual(expected)).run(({ cold, expectObservable }) => {
      const slow = new ToolRegistry()
        .register(tool('weather', () => cold('-------(r|)', { r: 'sunny' })))
        .register(tool('clock', () => cold('-----(r|)', { r: '12:00' })));
      const provider = () => cold('-----(se|)', { s: { type: 'message_start' }, e: { type: 'message_end', stopReason: 'stop' } } as const);
      const loop = runEventedToolLoop({ provider, registry: slow, messages: saved() });
      // both calls start in the frame of turn_start 0 (R23)
      expectObservable(loop.pipe(describeType)).toBe('(0xy)c-(wE1)(seFL|)', {
        0: 'turn_start 0', x: 'tool_start c1', y: 'tool_start c2', c: 'tool_result c2', w: 'tool_result c1', E: 'turn_end 0', 1: 'turn_start 1', s: 'message_start', e: 'message_end', F: 'turn_end 1', L: 'loop_end',
      });
    });
  });
});

describe('R22 resume, as a property', () => {
  it('cut while tools ran, saved as JSON, resumed: a valid history, saved results kept, no finished call run twice', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ answered: fc.boolean(), tool: fc.constantFrom('weather', 'clock') }), { minLength: 1, maxLength: 6 }),
        fc.boolean(),
        (calls, reverse) => {
          const toolCalls = calls.map((c, index) => ({ id: `c${index}`, name: c.tool, input: {} }));
          const earlier = calls.flatMap((c, index): AgentMessage[] =>
            c.answered ? [{ role: 'toolResult', toolCallId: `c${index}`, toolName: c.tool, content: `saved ${index}`, isError: false }] : [],
          );
          const messages: AgentMessage[] = [
            { role: 'user', content: 'go' },
            { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls },
            ...(reverse ? earlier.reverse() : earlier), // saved in completion order, whatever it was
          ];
          const runs: string[] = [];
          const provider = scriptedProvider([answerTurn('done')]);
          const restored = JSON.parse(JSON.stringify(messages)) as AgentMessage[];
          const { values } = collectSync(runEventedToolLoop({ provider, registry: registry(runs), messages: restored }));
          const end = loopEndOf(values);
          const pending = toolCalls.filter((_, index) => !calls[index]!.answered).map((c) => c.id);
          expect(runs.sort()).toEqual([...pending].sort());
          expect(only(values, 'turn_start').map((e) => e.turn)).toEqual(pending.length > 0 ? [0, 1] : [1]);
          if (pending.length === 0) return; // nothing to resume: the caller's complete history goes on as it is (R21 takes any result order)
          assertValidHistory(end.messages); // turn 0 put one result per call, in call order
          const results = end.messages.slice(2, 2 + toolCalls.length);
          calls.forEach((c, index) => {
            if (c.answered) expect(results[index]).toMatchObject({ toolCallId: `c${index}`, content: `saved ${index}` });
          });
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('R29 a history to save at every result', () => {
  const user: AgentMessage = { role: 'user', content: 'go' };
  const result = (id: string, name: string, content: string): AgentMessage => ({ role: 'toolResult', toolCallId: id, toolName: name, content, isError: false });

  /** A turn whose calls finish out of order, some while the model still streams: a 5 frames, b 1, c 2. */
  function run(before: AgentMessage[] = []): LoopEvent[] {
    const events: LoopEvent[] = [];
    new TestScheduler((actual, expected) => expect(actual).toEqual(expected)).run(({ cold, flush }) => {
      const registry = new ToolRegistry()
        .register(tool('a', () => cold('-----(r|)', { r: 'A' })))
        .register(tool('b', () => cold('-(r|)', { r: 'B' })))
        .register(tool('c', () => cold('--(r|)', { r: 'C' })));
      const first = cold<ProviderEvent>('-s-h-a-b---t-c-(u|)', { s: start, h: text('Let me '), a: call('a', {}, 'ca'), b: call('b', {}, 'cb'), t: text('check.'), c: call('c', {}, 'cc'), u: end('toolUse') });
      const second = cold<ProviderEvent>('-(sxe|)', { s: start, x: text('Done.'), e: end('stop') });
      let n = 0;
      runEventedToolLoop({ provider: () => (n++ === 0 ? first : second), registry, messages: [...before, user] }).subscribe((event) => events.push(event));
      flush();
    });
    return events;
  }

  it('R29: each tool_result carries the history at that moment: the assistant message as known, then the results so far in call order', () => {
    const events = run();
    const calls = [
      { id: 'ca', name: 'a', input: {} },
      { id: 'cb', name: 'b', input: {} },
      { id: 'cc', name: 'c', input: {} },
    ];
    expect(only(events, 'tool_result').map((e) => [e.message.toolCallId, e.messages])).toEqual([
      // b at frame 8, while the model streams: its text and calls so far, stop reason toolUse
      ['cb', [user, { role: 'assistant', content: 'Let me ', stopReason: 'toolUse', toolCalls: calls.slice(0, 2) }, result('cb', 'b', 'B')]],
      // a at frame 10: still streaming, and a comes before b (call order, not completion order)
      ['ca', [user, { role: 'assistant', content: 'Let me ', stopReason: 'toolUse', toolCalls: calls.slice(0, 2) }, result('ca', 'a', 'A'), result('cb', 'b', 'B')]],
      // c at frame 16, after message_end: the final message, with all its calls
      ['cc', [user, { role: 'assistant', content: 'Let me check.', stopReason: 'toolUse', toolCalls: calls }, result('ca', 'a', 'A'), result('cb', 'b', 'B'), result('cc', 'c', 'C')]],
    ]);
    // the last result's history is the turn's
    expect(only(events, 'tool_result')[2]!.messages).toEqual(only(events, 'turn_end')[0]!.messages);
  });

  it('R29: past 256 messages the history is made when first read, and is the same as a copy would be', () => {
    const long: AgentMessage[] = Array.from({ length: 300 }, (_, i): AgentMessage => (i % 2 === 0 ? { role: 'user', content: `q${i}` } : { role: 'assistant', content: `a${i}`, stopReason: 'stop' }));
    const short = only(run(), 'tool_result');
    const results = only(run(long), 'tool_result');
    expect(Object.getOwnPropertyDescriptor(results[0], 'messages')?.get).toBeDefined(); // the lazy form
    expect(Object.getOwnPropertyDescriptor(short[0], 'messages')?.value).toBeDefined(); // the copied one
    expect(results.map((e) => e.messages)).toEqual(short.map((e) => [...long, ...e.messages]));
    expect(JSON.parse(JSON.stringify(results[0]))).toEqual({ type: 'tool_result', message: results[0]!.message, messages: [...long, ...short[0]!.messages] });
    expect({ ...results[1]! }.messages).toBe(results[1]!.messages); // made once, then kept
    const replaced: AgentMessage[] = [];
    results[2]!.messages = replaced; // settable, as a plain field
    expect(results[2]!.messages).toBe(replaced);
  });

  it('R29: every messages is a new array; changing one changes nothing the loop hands out later', () => {
    const events = run();
    const results = only(events, 'tool_result');
    expect(new Set(results.map((e) => e.messages)).size).toBe(3);
    (results[0]!.messages as AgentMessage[]).length = 0;
    expect(results[1]!.messages).toHaveLength(4);
    expect(loopEndOf(events).messages).toHaveLength(6);
  });

  it('R29, R22: the loop resumes from each tool_result\'s messages, saved as JSON: the calls without a result run again, and it completes', () => {
    for (const saved of only(run(), 'tool_result').map((e) => JSON.parse(JSON.stringify(e.messages)) as AgentMessage[])) {
      // a history that waits for results (R21 accepts it; runEventedToolLoop would throw otherwise)
      const runs: string[] = [];
      const registry = new ToolRegistry()
        .register(tool('a', (_input, { call: c }) => (runs.push(c.id), 'A')))
        .register(tool('b', (_input, { call: c }) => (runs.push(c.id), 'B')))
        .register(tool('c', (_input, { call: c }) => (runs.push(c.id), 'C')));
      const { values, completed } = collectSync(runEventedToolLoop({ provider: scriptedProvider([answerTurn('Done.')]), registry, messages: saved }));
      expect(completed).toBe(true);
      const end = loopEndOf(values);
      expect(end.reason).toBe('stop');
      assertValidHistory(end.messages);
      const answered = new Set(saved.flatMap((m) => (m.role === 'toolResult' ? [m.toolCallId] : [])));
      const asked = (saved[1] as { toolCalls: { id: string }[] }).toolCalls.map((c) => c.id);
      expect(runs).toEqual(asked.filter((id) => !answered.has(id))); // the ones still running at the save, no other
    }
  });

  it('R29: results the abort gives carry the aborted message and the results so far', () => {
    const controller = new AbortController();
    const registry = new ToolRegistry()
      .register(tool('a', () => 'A'))
      .register(tool('b', () => new Promise<string>(() => {})));
    const provider = scriptedProvider([toolTurn(call('a', {}, 'ca'), call('b', {}, 'cb'))]);
    const events: LoopEvent[] = [];
    runEventedToolLoop({ provider, registry, messages: [user], signal: controller.signal }).subscribe((event) => events.push(event));
    controller.abort();
    const results = only(events, 'tool_result');
    expect(results.map((e) => e.message.content)).toEqual(['A', 'error: aborted']);
    expect(results[1]!.messages).toEqual(loopEndOf(events).messages);
    expect(results[1]!.messages[1]).toMatchObject({ role: 'assistant', stopReason: 'aborted' });
  });

  it('R29, R22: turn 0\'s results carry the saved message and every result so far, saved ones included, in call order', () => {
    const events = collectSync(runEventedToolLoop({ provider: scriptedProvider([answerTurn('ok')]), registry: registry(), messages: saved() })).values;
    const [first, second] = only(events, 'tool_result');
    expect(first!.messages).toEqual([...saved().slice(0, 2), result('c1', 'weather', 'sunny'), saved()[2]]);
    expect(second!.messages).toEqual([...saved().slice(0, 2), result('c1', 'weather', 'sunny'), result('c2', 'clock', '12:00'), saved()[2]]);
  });
});
