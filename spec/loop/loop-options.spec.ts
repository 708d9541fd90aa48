import { Observable, lastValueFrom, queueScheduler, toArray } from 'rxjs';
import { LoopOptions, ToolRegistry, runEventedToolLoop, scriptedProvider } from '../../src/index.js';
import { answerTurn } from '../support/events.js';

const valid = (): LoopOptions => ({ provider: scriptedProvider([answerTurn('ok')]), registry: new ToolRegistry(), messages: [] });
const withOption = (key: string, value: unknown): LoopOptions => ({ ...valid(), [key]: value }) as LoopOptions;

describe('R20 options are checked at call time', () => {
  it.each<[string, unknown, ErrorConstructor, string]>([
    ['maxTurns', '3', RangeError, 'maxTurns must be an integer >= 1 (got "3", a string)'],
    ['maxTurns', 0, RangeError, 'maxTurns must be an integer >= 1 (got 0, a number)'],
    ['maxTurns', null, RangeError, 'maxTurns must be an integer >= 1 (got null)'],
    ['maxConcurrency', 2.5, RangeError, 'maxConcurrency must be an integer >= 1 or Infinity (got 2.5, a number)'],
    ['toolTimeoutMs', '100', RangeError, 'toolTimeoutMs must be an integer >= 1 or Infinity (got "100", a string)'],
    ['toolTimeoutMs', NaN, RangeError, 'toolTimeoutMs must be an integer >= 1 or Infinity (got NaN, a number)'],
    ['toolExecution', 'serial', RangeError, `toolExecution must be 'parallel' or 'sequential' (got "serial", a string)`],
    ['signal', {}, TypeError, 'signal must be an AbortSignal (got {}, an object)'],
    ['signal', true, TypeError, 'signal must be an AbortSignal (got true, a boolean)'],
    ['signal', null, TypeError, 'signal must be an AbortSignal (got null)'],
    ['provider', 'gpt', TypeError, 'provider must be a function (got "gpt", a string)'],
    ['registry', new Map(), TypeError, 'registry must be a ToolRegistry (got {}, a Map)'],
    ['messages', 'hi', TypeError, 'messages must be an array (got "hi", a string)'],
    ['messages', undefined, TypeError, 'messages must be an array (got undefined)'],
  ])('%s = %p throws a %p that shows the value and its type', (key, value, kind, message) => {
    expect(() => runEventedToolLoop(withOption(key, value))).toThrow(kind);
    expect(() => runEventedToolLoop(withOption(key, value))).toThrow(`runEventedToolLoop: ${message}`);
  });

  it('options that are not an object', () => {
    expect(() => runEventedToolLoop(undefined as unknown as LoopOptions)).toThrow(new TypeError('runEventedToolLoop: options must be an object (got undefined)'));
  });

  it('accepts an AbortSignal from another realm by its shape', async () => {
    const foreign = { aborted: false, addEventListener() {}, removeEventListener() {} } as unknown as AbortSignal;
    const events = await lastValueFrom(runEventedToolLoop({ ...valid(), signal: foreign }).pipe(toArray()));
    expect(events[events.length - 1]).toMatchObject({ type: 'loop_end', reason: 'stop' });
  });

  it('after subscribe, nothing the caller passed makes the Observable error', async () => {
    // an undefined optional option is the default, whatever the spread brought in
    const options = { ...valid(), maxTurns: undefined, signal: undefined, toolTimeoutMs: undefined };
    const events = await lastValueFrom(runEventedToolLoop(options).pipe(toArray()));
    expect(events.map((e) => e.type)).toEqual(['turn_start', 'message_start', 'text_delta', 'message_end', 'turn_end', 'loop_end']);
  });
});

describe('R19 a private queue', () => {
  it('a loop subscribed inside an application queueScheduler action delivers its synchronous events before subscribe() returns', () => {
    const registry = new ToolRegistry().register({ name: 'echo', description: 'echo', input: {}, handler: () => 'x' });
    const provider = scriptedProvider([
      [{ type: 'message_start' }, { type: 'tool_call', call: { id: 'c1', name: 'echo', input: {} } }, { type: 'message_end', stopReason: 'toolUse' }],
      answerTurn('done'),
    ]);
    const seen: string[] = [];
    let completedInside = false;
    queueScheduler.schedule(() => {
      runEventedToolLoop({ provider, registry, messages: [] }).subscribe({
        next: (event) => seen.push(event.type),
        complete: () => (completedInside = true),
      });
      // still inside the application's action: the whole loop has run
      expect(completedInside).toBe(true);
      expect(seen).toContain('loop_end');
    });
    expect(seen.filter((type) => type === 'turn_start')).toHaveLength(2);
  });

  it('two loops nested in each other (a tool that runs a loop synchronously) both finish synchronously', () => {
    const inner = () => runEventedToolLoop({ provider: scriptedProvider([answerTurn('inner')]), registry: new ToolRegistry(), messages: [] });
    const registry = new ToolRegistry().register({
      name: 'agent',
      description: 'a sub-agent',
      input: {},
      handler: () =>
        new Observable<string>((subscriber) => {
          inner().subscribe((event) => {
            if (event.type === 'loop_end') subscriber.next(event.assistant.content);
          });
          subscriber.complete();
        }),
    });
    const provider = scriptedProvider([
      [{ type: 'message_start' }, { type: 'tool_call', call: { id: 'c1', name: 'agent', input: {} } }, { type: 'message_end', stopReason: 'toolUse' }],
      answerTurn('outer'),
    ]);
    const results: string[] = [];
    let completed = false;
    runEventedToolLoop({ provider, registry, messages: [] }).subscribe({
      next: (event) => event.type === 'tool_result' && results.push(event.message.content),
      complete: () => (completed = true),
    });
    expect(results).toEqual(['inner']);
    expect(completed).toBe(true);
  });
});
