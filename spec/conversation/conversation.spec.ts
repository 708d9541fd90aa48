/** C1–C3, C5: conversation() — prompts in, events out, one loop per prompt, the history carried. */
import { Observable, Subject, Subscription, delay, filter, first, merge, of, takeWhile, tap, throwError } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { AgentMessage, ConversationEvent, ConversationOptions, ProviderEvent, ToolRegistry, UserMessage, conversation, scriptedProvider } from '../../src/index.js';
import { assertValidHistory, described, marbleProvider, marbleTools } from '../../src/testing/index.js';
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

/** A provider that counts its open calls and a `send_email` tool that counts its runs: what C3 must close. */
function watched(reply: () => ProviderEvent[] = () => toolTurn(call('send_email', {}, 'e1'))) {
  const seen = { providerCalls: 0, providersOpen: 0, emails: 0, emailsOpen: 0 };
  const provider = () =>
    new Observable<ProviderEvent>((subscriber) => {
      seen.providerCalls++;
      seen.providersOpen++;
      subscriber.add(() => seen.providersOpen--);
      for (const event of reply()) if (!subscriber.closed) subscriber.next(event); // synchronous, as a scripted provider
    });
  const registry = new ToolRegistry().register(
    tool('send_email', () => {
      seen.emails++;
      return new Observable<string>((subscriber) => {
        seen.emailsOpen++;
        subscriber.add(() => seen.emailsOpen--);
      });
    }),
  );
  return { seen, provider, registry };
}

describe('C3: unsubscribing always tears down, also while a loop is starting', () => {
  it('C3: first() on turn_start closes the provider call and never runs the tools', () => {
    const { seen, provider, registry } = watched();
    let heard: ConversationEvent | undefined;
    of('mail Bob').pipe(conversation({ provider, registry }), first((event) => event.type === 'turn_start')).subscribe((event) => (heard = event));
    expect(heard).toEqual({ type: 'turn_start', turn: 1 });
    expect(seen).toEqual({ providerCalls: 0, providersOpen: 0, emails: 0, emailsOpen: 0 });
  });

  it('C3: first() on message_start of a synchronous provider closes it then and there: it sees itself closed', () => {
    const { seen, provider, registry } = watched();
    of('mail Bob').pipe(conversation({ provider, registry }), first((event) => event.type === 'message_start')).subscribe();
    expect(seen).toEqual({ providerCalls: 1, providersOpen: 0, emails: 0, emailsOpen: 0 });
  });

  it('C3: a consumer that unsubscribes inside its user_message (a later prompt) leaves no loop running', () => {
    const { seen, provider, registry } = watched();
    const prompts = new Subject<string>();
    const subscription: Subscription = prompts.pipe(conversation({ provider, registry })).subscribe((event) => {
      if (event.type === 'user_message') subscription.unsubscribe();
    });
    prompts.next('mail Bob');
    expect(seen).toEqual({ providerCalls: 0, providersOpen: 0, emails: 0, emailsOpen: 0 });
    expect(prompts.observed).toBe(false);
  });

  it('C3: leaving on a tool_start means its handler never runs (R23); leaving on the first prompt of a synchronous prompts$ stops it at once', () => {
    const { seen, provider, registry } = watched();
    of('mail Bob').pipe(conversation({ provider, registry }), first((event) => event.type === 'tool_start')).subscribe();
    expect(seen).toEqual({ providerCalls: 1, providersOpen: 0, emails: 0, emailsOpen: 0 });

    const sent: string[] = [];
    const prompts = new Observable<string>((subscriber) => {
      for (const prompt of ['one', 'two', 'three']) if (!subscriber.closed) (sent.push(prompt), subscriber.next(prompt));
    });
    prompts.pipe(conversation({ provider: () => of(start, text('ok'), end('stop')), registry: registry }), first()).subscribe();
    expect(sent).toEqual(['one']);
  });

  it('C3: subscription marks: leaving on a tool_result closes the provider call, the other tool, prompts$ and abort$ in that frame', () => {
    new TestScheduler((actual, expected) => expect(actual).toEqual(expected)).run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const prompts = cold('-a', { a: 'search and mail' });
      const stop = cold('-');
      const turn = cold('-s-(cd)---', { s: start, c: call('quick', {}, 'q1'), d: call('mail', {}, 'm1') });
      const quick = cold('--(R|)', { R: 'found' });
      const mail = cold('------(M|)', { M: 'sent' });
      const run = prompts.pipe(
        conversation({ provider: marbleProvider(turn), registry: marbleTools({ quick, mail }), abort$: stop }),
        takeWhile((event) => event.type !== 'tool_result', true),
        filter((event) => event.type === 'tool_result'),
        described,
      );
      expectObservable(run).toBe('------(R|)', { R: 'tool_result quick: found' });
      expectSubscriptions(prompts.subscriptions).toBe('^-----!');
      expectSubscriptions(stop.subscriptions).toBe('^-----!');
      expectSubscriptions(turn.subscriptions).toBe('-^----!');
      expectSubscriptions(quick.subscriptions).toBe('----^-!');
      expectSubscriptions(mail.subscriptions).toBe('----^-!');
    });
  });

  it('C3: unsubscribing closes prompts$ and abort$ too, and a resumed run still starting (C5)', () => {
    const { seen, provider, registry } = watched(() => [start]);
    const prompts = new Subject<string>();
    const stop = new Subject<void>();
    const saved: AgentMessage[] = [
      { role: 'user', content: 'mail Bob' },
      { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [{ id: 'e0', name: 'send_email', input: {} }] },
    ];
    prompts.pipe(conversation({ provider, registry, messages: saved, abort$: stop }), first((event) => event.type === 'turn_start')).subscribe();
    expect({ ...seen, prompts: prompts.observed, stop: stop.observed }).toEqual({ providerCalls: 0, providersOpen: 0, emails: 0, emailsOpen: 0, prompts: false, stop: false });
  });
});

describe('C2: switch in one frame', () => {
  const testScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

  it('C2: two prompts in one frame from separate sources (merge of two delays): one loop runs on, with both in the history', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const provider = marbleProvider(cold('-----s-t-e|', { s: start, t: text('both'), e: end('stop') }));
      const prompts = merge(of('first').pipe(delay(3)), of('second').pipe(delay(3)));
      expectObservable(prompts.pipe(conversation({ provider, registry: registry(), policy: 'switch' }), described)).toBe('---(UV1)s-t-e(FL|)', {
        U: 'user_message first',
        V: 'user_message second',
        1: 'turn_start 1',
        s: 'message_start',
        t: 'text_delta both',
        e: 'message_end stop',
        F: 'turn_end 1 (stop): user, user, assistant "both"',
        L: 'loop_end stop',
      });
    });
  });

  it('C2/C3: flush() never throws when a signal aborts on the first user_message of a same-frame switch; the conversation completes after that loop_end', () => {
    testScheduler().run(({ cold, expectObservable, flush }) => {
      const controller = new AbortController();
      const provider = marbleProvider(cold('-s-e|', { s: start, e: end('stop') }));
      const prompts = merge(of('first').pipe(delay(2)), of('second').pipe(delay(2)), of('third').pipe(delay(4)));
      const run = prompts.pipe(
        conversation({ provider, registry: registry(), policy: 'switch', signal: controller.signal }),
        tap((event) => event.type === 'user_message' && controller.abort()),
        described,
      );
      // the first joins; the abort on hearing of it drops the second (told first: tap aborts before it passes
      // the first on); the loop starts aborted (R7); the third never comes
      expectObservable(run).toBe('--(DUL|)', { D: 'prompt_dropped second', U: 'user_message first', L: 'loop_end aborted' });
      expect(() => flush()).not.toThrow();
    });
  });

  it('C2: under queue and steer, same-frame prompts from separate sources run in arrival order; nothing is lost', () => {
    for (const policy of ['queue', 'steer'] as const) {
      testScheduler().run(({ cold, expectObservable }) => {
        const turn = () => cold('-s-e|', { s: start, e: end('stop') });
        const provider = marbleProvider(turn(), turn());
        const prompts = merge(of('first').pipe(delay(1)), of('second').pipe(delay(1)));
        const users = prompts.pipe(
          conversation({ provider, registry: registry(), policy }),
          filter((event) => event.type === 'user_message' || event.type === 'loop_end'),
          described,
        );
        // queue: the second waits for the first loop; steer: it joins once the loop ends (no boundary before)
        expectObservable(users).toBe('-U---(LV)(L|)', { U: 'user_message first', V: 'user_message second', L: 'loop_end stop' });
      });
    }
  });
});

describe('left open (a): prompt_dropped', () => {
  const testScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

  it('(a) abort$ drops the prompts that have not joined, each as prompt_dropped, in order, before the aborted loop ends', () => {
    const hanging = new Subject<ProviderEvent>();
    const prompts = new Subject<string>();
    const stop = new Subject<void>();
    const run = collectSync(prompts.pipe(conversation({ provider: () => hanging, registry: registry(), abort$: stop })));
    prompts.next('long task');
    prompts.next('second');
    prompts.next({ role: 'user', content: 'third' } as never);
    stop.next();
    expect(lines(run.values)).toEqual(['user_message long task', 'turn_start 1', 'prompt_dropped second', 'prompt_dropped third', 'turn_end 1 (aborted: aborted): user, assistant', 'loop_end aborted']);
    expect(only(run.values, 'prompt_dropped').map((event) => event.message)).toEqual([
      { role: 'user', content: 'second' },
      { role: 'user', content: 'third' },
    ]);
    expect(run.completed).toBe(false); // the conversation goes on
  });

  it('(a) a press while no loop runs drops the prompts waiting in the same burst (switch) the same way; the next prompt runs', () => {
    testScheduler().run(({ cold, hot, expectObservable }) => {
      const provider = marbleProvider(cold('(se|)', { s: start, e: end('stop') }));
      const prompts = hot('a--b---|', { a: 'dropped', b: 'runs' });
      const stop = hot('a', { a: undefined });
      const run = prompts.pipe(conversation({ provider, registry: registry(), policy: 'switch', abort$: stop }), filter((event) => event.type === 'user_message' || event.type === 'prompt_dropped' || event.type === 'loop_end'), described);
      expectObservable(run).toBe('D--(UL)|', { D: 'prompt_dropped dropped', U: 'user_message runs', L: 'loop_end stop' });
    });
  });

  it('(a) an error of abort$ ends the conversation as one of prompts$ does: the running loop is aborted, the error follows its loop_end', () => {
    const hanging = new Subject<ProviderEvent>();
    const prompts = new Subject<string>();
    const stop = new Subject<void>();
    const events: ConversationEvent[] = [];
    let failure: unknown;
    prompts.pipe(conversation({ provider: () => hanging, registry: registry(), abort$: stop })).subscribe({ next: (e) => events.push(e), error: (e: unknown) => (failure = e) });
    prompts.next('go');
    prompts.next('waits');
    stop.error(new Error('button broke'));
    expect(failure).toEqual(new Error('button broke'));
    expect(lines(events).slice(-3)).toEqual(['prompt_dropped waits', 'turn_end 1 (aborted: aborted): user, assistant', 'loop_end aborted']);
    expect({ provider: hanging.observed, prompts: prompts.observed }).toEqual({ provider: false, prompts: false });
  });

  it('(a) C3: the signal drops the waiting prompts the same way, so that nothing the user typed is lost; then the conversation completes', () => {
    const controller = new AbortController();
    const prompts = new Subject<string>();
    const run = collectSync(prompts.pipe(conversation({ provider: () => new Subject<ProviderEvent>(), registry: registry(), signal: controller.signal })));
    prompts.next('first');
    prompts.next('second');
    controller.abort();
    expect(lines(run.values).filter((line) => !line.startsWith('turn_'))).toEqual(['user_message first', 'prompt_dropped second', 'loop_end aborted']);
    expect(run.completed).toBe(true);
  });

  /** A conversation whose consumer aborts the signal on hearing of its first `prompt_dropped`. */
  const abortingAtFirstDrop = (options: ConversationOptions, prompts: Subject<string>) => {
    const controller = new AbortController();
    const events: ConversationEvent[] = [];
    let completed = false;
    prompts.pipe(conversation({ ...options, signal: controller.signal })).subscribe({
      next: (event) => {
        events.push(event);
        if (event.type === 'prompt_dropped') controller.abort();
      },
      complete: () => (completed = true),
    });
    return { events, completed: () => completed };
  };

  it('C3: switch, two prompts in one burst, a press drops them and the signal aborts on hearing the first drop: the second is still told dropped, then it completes', () => {
    let calls = 0;
    const prompts = new Subject<string>();
    const stop = new Subject<void>();
    const run = abortingAtFirstDrop({ provider: () => (calls++, new Subject<ProviderEvent>()), registry: registry(), policy: 'switch', abort$: stop }, prompts);
    prompts.next('first');
    prompts.next('second'); // both wait for the end of the frame
    stop.next();
    expect(lines(run.events)).toEqual(['prompt_dropped first', 'prompt_dropped second']);
    expect({ completed: run.completed(), calls, prompts: prompts.observed }).toEqual({ completed: true, calls: 0, prompts: false });
  });

  it('C3: queue and steer, a press drops the waiting prompts and the signal aborts on hearing the first drop: the others are told dropped before the aborted loop ends', () => {
    for (const policy of ['queue', 'steer'] as const) {
      const prompts = new Subject<string>();
      const stop = new Subject<void>();
      const run = abortingAtFirstDrop({ provider: () => new Subject<ProviderEvent>(), registry: registry(), policy, abort$: stop }, prompts);
      prompts.next('first');
      prompts.next('second');
      prompts.next('third');
      stop.next();
      expect({ policy, seen: lines(run.events) }).toEqual({
        policy,
        seen: ['user_message first', 'turn_start 1', 'prompt_dropped second', 'prompt_dropped third', 'turn_end 1 (aborted: aborted): user, assistant', 'loop_end aborted'],
      });
      expect({ policy, completed: run.completed() }).toEqual({ policy, completed: true });
    }
  });

  it('C3: a press drops only the prompts waiting at that press: one sent again on hearing of its drop waits, and runs after the aborted loop', () => {
    let calls = 0;
    const provider = () => (++calls === 1 ? new Subject<ProviderEvent>() : of(start, text('done'), end('stop')));
    const prompts = new Subject<string>();
    const stop = new Subject<void>();
    const events: ConversationEvent[] = [];
    let sentAgain = 0;
    prompts.pipe(conversation({ provider, registry: registry(), abort$: stop })).subscribe((event) => {
      events.push(event);
      // a UI that puts a dropped prompt back and sends it at once (at most twice here, so a regression cannot spin)
      if (event.type === 'prompt_dropped' && sentAgain++ < 2) prompts.next(event.message.content);
    });
    prompts.next('first');
    prompts.next('second');
    stop.next();
    expect(lines(events).filter((line) => /^(user_message|prompt_dropped|loop_end)/.test(line))).toEqual([
      'user_message first',
      'prompt_dropped second',
      'loop_end aborted',
      'user_message second',
      'loop_end stop',
    ]);
  });
});

describe('left open (b) and R20: what joins and what is kept', () => {
  it('(b) a UserMessage prompt is copied ({ role, content }) when it joins the history: changing it later, or its extra fields, changes nothing', () => {
    const provider = scriptedProvider([answerTurn('ok')]);
    const prompt = { role: 'user' as const, content: 'hello', extra: 'not for the model' };
    const run = collectSync(of(prompt).pipe(conversation({ provider, registry: registry() })));
    prompt.content = 'changed';
    const [joined] = only(run.values, 'user_message');
    expect(joined!.message).toEqual({ role: 'user', content: 'hello' });
    expect(joined!.message).not.toBe(prompt);
    expect(only(run.values, 'loop_end')[0]!.messages[0]).toEqual({ role: 'user', content: 'hello' });
    expect(provider.inputs[0]!.messages[0]).toEqual({ role: 'user', content: 'hello' });
  });

  it('R20: conversation() copies its options and messages at call time: changing either afterwards changes nothing', () => {
    const provider = scriptedProvider([answerTurn('ok')]);
    const messages: AgentMessage[] = [{ role: 'user', content: 'saved' }, { role: 'assistant', content: 'yes', stopReason: 'stop' }];
    const options: ConversationOptions = { provider, registry: registry(), messages, maxTurns: 1, policy: 'queue' };
    const operator = conversation(options);
    messages.push({ role: 'user', content: 'pushed later' });
    options.maxTurns = 0;
    options.policy = 'nonsense' as never;
    options.provider = () => throwError(() => new Error('not this one'));
    const run = collectSync(of('now').pipe(operator));
    expect(run.completed).toBe(true);
    expect(roles(provider.inputs[0]!.messages)).toEqual(['user saved', 'assistant', 'user now']);
    expect(only(run.values, 'loop_end')[0]!.reason).toBe('stop');
  });
});
