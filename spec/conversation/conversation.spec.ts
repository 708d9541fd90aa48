/** C1–C3, C5: conversation() — prompts in, events out, one loop per prompt, the history carried. */
import { Subject, of, throwError } from 'rxjs';
import { AgentMessage, ConversationEvent, ProviderEvent, ToolRegistry, UserMessage, conversation, scriptedProvider } from '../../src/index.js';
import { assertValidHistory, described } from '../../src/testing/index.js';
import { answerTurn, call, collectSync, end, only, start, text, tool, toolTurn } from '../support/events.js';

const registry = () => new ToolRegistry().register(tool('now', () => 'noon'));
const roles = (messages: readonly AgentMessage[]) => messages.map((message) => (message.role === 'user' ? `user ${message.content}` : message.role));
const lines = (events: readonly ConversationEvent[]) => {
  const seen: string[] = [];
  of(...events).pipe(described).subscribe((line) => seen.push(line));
  return seen;
};

describe('conversation (C1)', () => {
  it('runs one loop per prompt and carries the history; each prompt is a user_message with the history that holds it', () => {
    const provider = scriptedProvider([toolTurn(call('now', {}, 'c1')), answerTurn('It is noon.'), answerTurn('You are welcome.')]);
    const prompts: (string | UserMessage)[] = ['What time is it?', { role: 'user', content: 'Thanks!' }];
    const { values: events, completed } = collectSync(of(...prompts).pipe(conversation({ provider, registry: registry() })));
    expect(completed).toBe(true);
    expect(lines(events).filter((line) => /^(user_message|turn_start|loop_end)/.test(line))).toEqual([
      'user_message What time is it?',
      'turn_start 1',
      'turn_start 2',
      'loop_end stop',
      'user_message Thanks!',
      'turn_start 1',
      'loop_end stop',
    ]);
    const [first, second] = only(events, 'user_message');
    expect(roles(first!.messages)).toEqual(['user What time is it?']);
    expect(roles(second!.messages)).toEqual(['user What time is it?', 'assistant', 'toolResult', 'assistant', 'user Thanks!']);
    expect(roles(provider.inputs[2]!.messages)).toEqual(roles(second!.messages));
  });

  it('starts from a saved history, and hands out new arrays that it never reads back', () => {
    const provider = scriptedProvider([answerTurn('again')]);
    const saved: AgentMessage[] = [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello', stopReason: 'stop' }];
    const events: ConversationEvent[] = [];
    of('once more')
      .pipe(conversation({ provider, registry: registry(), messages: Object.freeze(saved) as AgentMessage[] }))
      .subscribe((event) => {
        events.push(event);
        if ('messages' in event) (event.messages as AgentMessage[]).push({ role: 'user', content: 'junk' }); // a careless consumer
      });
    expect(roles(provider.inputs[0]!.messages)).toEqual(['user hi', 'assistant', 'user once more']);
  });

  it('checks its options at call time and names itself; a policy other than the three is a RangeError', () => {
    const provider = scriptedProvider([]);
    expect(() => conversation({ provider, registry: registry(), policy: 'merge' as never })).toThrow(
      new RangeError(`conversation: policy must be 'queue', 'switch' or 'steer' (got "merge", a string)`),
    );
    expect(() => conversation({ provider, registry: registry(), maxTurns: 0 })).toThrow(new RangeError('conversation: maxTurns must be an integer >= 1 (got 0, a number)'));
    expect(() => conversation({ provider, registry: registry(), messages: [{ role: 'robot' } as never] })).toThrow(TypeError);
    expect(() => conversation(null as never)).toThrow(new TypeError('conversation: options must be an object (got null)'));
  });

  it('a value that is no prompt ends the conversation with a TypeError, after the running loop has ended (aborted)', () => {
    const hanging = new Subject<never>();
    const provider = () => hanging;
    const prompts = new Subject<unknown>();
    const events: ConversationEvent[] = [];
    let failure: unknown;
    (prompts as Subject<string>).pipe(conversation({ provider, registry: registry() })).subscribe({ next: (e) => events.push(e), error: (e: unknown) => (failure = e) });
    prompts.next('go');
    prompts.next(42);
    expect(failure).toEqual(new TypeError('conversation: a prompt must be a string or a UserMessage (got 42, a number)'));
    expect(events.at(-1)).toMatchObject({ type: 'loop_end', reason: 'aborted' });
    expect(hanging.observed).toBe(false);
  });
});

describe('ends (C3)', () => {
  it('completes when the prompts complete and the last loop has ended — not before', () => {
    const hanging = new Subject<ProviderEvent>();
    const prompts = new Subject<string>();
    const events = collectSync(prompts.pipe(conversation({ provider: () => hanging, registry: registry() })));
    prompts.next('go');
    prompts.complete();
    expect(events.completed).toBe(false);
    hanging.next(start);
    hanging.next(end('stop'));
    hanging.complete();
    expect(events.completed).toBe(true);
  });

  it('unsubscribing tears down the running loop and the prompts', () => {
    const hanging = new Subject<ProviderEvent>();
    const prompts = new Subject<string>();
    const subscription = prompts.pipe(conversation({ provider: () => hanging, registry: registry() })).subscribe();
    prompts.next('go');
    expect(hanging.observed).toBe(true);
    subscription.unsubscribe();
    expect({ provider: hanging.observed, prompts: prompts.observed }).toEqual({ provider: false, prompts: false });
  });

  it('its signal aborts the running loop (R11) and completes after that loop_end; waiting prompts never run', () => {
    const controller = new AbortController();
    const hanging = new Subject<ProviderEvent>();
    const prompts = new Subject<string>();
    const run = collectSync(prompts.pipe(conversation({ provider: () => hanging, registry: registry(), signal: controller.signal })));
    prompts.next('first');
    prompts.next('second');
    controller.abort();
    expect(run.completed).toBe(true);
    expect(lines(run.values).filter((line) => /^(user_message|loop_end)/.test(line))).toEqual(['user_message first', 'loop_end aborted']);
    expect(prompts.observed).toBe(false);
  });

  it('with its signal aborted at subscribe, nothing runs and it completes', () => {
    const controller = new AbortController();
    controller.abort();
    const provider = jest.fn(scriptedProvider([]));
    const run = collectSync(of('go').pipe(conversation({ provider, registry: registry(), signal: controller.signal })));
    expect({ events: run.values, completed: run.completed, calls: provider.mock.calls.length }).toEqual({ events: [], completed: true, calls: 0 });
  });

  it("an error of the prompts aborts the running loop the same way and is passed on after its loop_end", () => {
    const hanging = new Subject<ProviderEvent>();
    const prompts = new Subject<string>();
    const events: ConversationEvent[] = [];
    let failure: unknown;
    prompts.pipe(conversation({ provider: () => hanging, registry: registry() })).subscribe({ next: (e) => events.push(e), error: (e: unknown) => (failure = e) });
    prompts.next('go');
    prompts.error(new Error('input closed'));
    expect(failure).toEqual(new Error('input closed'));
    expect(events.at(-1)).toMatchObject({ type: 'loop_end', reason: 'aborted' });
    expect(hanging.observed).toBe(false);
  });

  it('never errors because of a provider or a tool', () => {
    const provider = () => throwError(() => new Error('down'));
    const failing = new ToolRegistry().register(tool('now', () => {
      throw new Error('broken');
    }));
    const run = collectSync(of('a', 'b').pipe(conversation({ provider, registry: failing })));
    expect(run.completed).toBe(true);
    expect(only(run.values, 'loop_end').map((event) => event.reason)).toEqual(['error', 'error']);
  });

  it('a long queue of synchronous loops keeps a flat stack (R12)', () => {
    const prompts = Array.from({ length: 1000 }, (_, i) => `prompt ${i}`);
    const provider = () => of(start, text('ok'), end('stop'));
    const run = collectSync(of(...prompts).pipe(conversation({ provider, registry: registry() })));
    expect(run.completed).toBe(true);
    expect(only(run.values, 'loop_end')).toHaveLength(1000);
    expect(only(run.values, 'loop_end').at(-1)!.messages).toHaveLength(2000);
  });
});

describe('saved and restored (C5)', () => {
  it('a history that ends with unanswered calls resumes on subscribe, as a loop of its own, before any prompt', () => {
    const saved: AgentMessage[] = [
      { role: 'user', content: 'What time is it?' },
      { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [{ id: 'c1', name: 'now', input: {} }] },
    ];
    const provider = scriptedProvider([answerTurn('It is noon.'), answerTurn('Bye.')]);
    const run = collectSync(of('Thanks').pipe(conversation({ provider, registry: registry(), messages: JSON.parse(JSON.stringify(saved)) as AgentMessage[] })));
    expect(lines(run.values).filter((line) => /^(user_message|turn_start|loop_end)/.test(line))).toEqual([
      'turn_start 0',
      'turn_start 1',
      'loop_end stop',
      'user_message Thanks',
      'turn_start 1',
      'loop_end stop',
    ]);
    expect(roles(only(run.values, 'loop_end')[1]!.messages)).toEqual(['user What time is it?', 'assistant', 'toolResult', 'assistant', 'user Thanks', 'assistant']);
  });

  it('every history it hands out survives a JSON round trip and starts a new conversation', () => {
    const provider = scriptedProvider([toolTurn(call('now', {}, 'c1')), answerTurn('noon')]);
    const first = collectSync(of('time?').pipe(conversation({ provider, registry: registry() }))).values;
    for (const event of first) {
      if (!('messages' in event)) continue;
      const restored = JSON.parse(JSON.stringify(event.messages)) as AgentMessage[];
      expect(restored).toEqual(event.messages);
      assertValidHistory(restored);
      const again = collectSync(of('again').pipe(conversation({ provider: scriptedProvider([answerTurn('ok'), answerTurn('ok')]), registry: registry(), messages: restored })));
      expect(again.completed).toBe(true);
    }
  });
});

describe('abort$: a stop button', () => {
  it('aborts the running loop as signal does and drops the prompts still waiting; the conversation goes on', () => {
    const hanging = new Subject<ProviderEvent>();
    let calls = 0;
    const provider = () => (++calls === 1 ? hanging : of(start, text('fresh'), end('stop')));
    const prompts = new Subject<string>();
    const stop = new Subject<void>();
    const run = collectSync(prompts.pipe(conversation({ provider, registry: registry(), abort$: stop })));
    stop.next(); // idle: nothing happens
    prompts.next('long task');
    hanging.next(start);
    hanging.next(text('working'));
    prompts.next('queued behind it');
    stop.next();
    expect(hanging.observed).toBe(false);
    prompts.next('after the stop');
    prompts.complete();
    expect(run.completed).toBe(true);
    expect(lines(run.values).filter((line) => /^(user_message|loop_end)/.test(line))).toEqual([
      'user_message long task',
      'loop_end aborted',
      'user_message after the stop',
      'loop_end stop',
    ]);
    // the aborted turn stays in the history, with what the user saw of it
    expect(only(run.values, 'loop_end')[1]!.messages).toEqual([
      { role: 'user', content: 'long task' },
      { role: 'assistant', content: 'working', stopReason: 'aborted', errorMessage: 'aborted' },
      { role: 'user', content: 'after the stop' },
      { role: 'assistant', content: 'fresh', stopReason: 'stop' },
    ]);
  });

  it('is checked at call time', () => {
    expect(() => conversation({ provider: scriptedProvider([]), registry: registry(), abort$: 'stop' as never })).toThrow(
      new TypeError('conversation: abort$ must be an Observable (got "stop", a string)'),
    );
  });
});

describe('steer (C2)', () => {
  it('several prompts steered at one boundary join in order, after that turn_end and before the next turn_start', () => {
    const tool$ = new Subject<string>();
    const tools = new ToolRegistry().register(tool('now', () => tool$));
    const provider = scriptedProvider([toolTurn(call('now', {}, 'c1')), answerTurn('ok')]);
    const prompts = new Subject<string>();
    const run = collectSync(prompts.pipe(conversation({ provider, registry: tools, policy: 'steer' })));
    prompts.next('first');
    prompts.next('second');
    prompts.next('third');
    tool$.next('noon');
    tool$.complete();
    const seen = lines(run.values).filter((line) => /^(user_message|turn_start|turn_end)/.test(line));
    expect(seen.map((line) => line.split(':')[0]!.replace(/ \(.*$/, ''))).toEqual([
      'user_message first',
      'turn_start 1',
      'turn_end 1',
      'user_message second',
      'user_message third',
      'turn_start 2',
      'turn_end 2',
    ]);
    expect(roles(provider.inputs[1]!.messages)).toEqual(['user first', 'assistant', 'toolResult', 'user second', 'user third']);
    expect(roles(only(run.values, 'turn_end')[0]!.messages)).toEqual(['user first', 'assistant', 'toolResult']);
  });
});
