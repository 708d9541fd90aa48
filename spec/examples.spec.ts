import { BehaviorSubject, Observable, Subject, concat, lastValueFrom, of, scan, take, toArray } from 'rxjs';
import { cancelWithSignal, cancelWithTakeUntil } from '../examples/cancel-with-take-until.js';
import { ChatAction, ChatState, chatEpic, chatReducer } from '../examples/chat-epic.js';
import { demoProvider, demoRegistry, runCli } from '../examples/cli.js';
import { ConversationService } from '../examples/conversation-service.js';
import { echoProvider } from '../examples/custom-provider.js';
import { chat } from '../examples/prompts-in-events-out.js';
import { AgentMessage, ConversationEvent, LoopViewModel, Provider, ProviderEvent, ProviderInput, ToolRegistry, initialViewModel, scriptedProvider } from '../src/index.js';
import { answerTurn, call, only, start, text, toolTurn } from './support/events.js';

describe('examples/prompts-in-events-out', () => {
  it('carries the history from one prompt to the next (a prompt waits for the running loop), and stop$ ends it all', () => {
    const prompts = new Subject<string>();
    const stop = new Subject<void>();
    const hanging = new Subject<never>();
    let turn = 0;
    const script = scriptedProvider([toolTurn(call('current_time', {}, 'c1')), answerTurn('It is now.'), answerTurn('You are welcome.')]);
    const provider = (input: ProviderInput) => (++turn <= 3 ? script(input) : hanging);

    const events: ConversationEvent[] = [];
    let completed = false;
    chat(prompts, stop, provider).subscribe({ next: (e) => events.push(e), complete: () => (completed = true) });

    prompts.next('What time is it?');
    prompts.next('Thanks!');
    expect(only(events, 'user_message').map((e) => e.message.content)).toEqual(['What time is it?', 'Thanks!']);
    expect(only(events, 'loop_end').map((e) => e.assistant.content)).toEqual(['It is now.', 'You are welcome.']);
    expect(script.inputs[2]!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant', 'user']);

    prompts.next('And now?');
    expect(hanging.observed).toBe(true);
    stop.next();
    expect(hanging.observed).toBe(false);
    expect(completed).toBe(true);
  });
});

describe('examples/custom-provider', () => {
  it('streams the last user message back word by word, and unsubscribing clears its timer', async () => {
    const input = { messages: [{ role: 'user' as const, content: 'hello there world' }], tools: [] };
    const events = await lastValueFrom(echoProvider(1)(input).pipe(toArray()));
    expect(events.map((e) => (e.type === 'text_delta' ? e.text : e.type))).toEqual(['message_start', 'hello ', 'there ', 'world', 'message_end']);

    jest.useFakeTimers();
    try {
      echoProvider(1)(input).pipe(take(2)).subscribe();
      jest.advanceTimersByTime(1);
      expect(jest.getTimerCount()).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });
});

/** A provider whose first call streams `Let me` and then hangs (until unsubscribed), and whose later calls follow `script`. */
function firstHangs(script: (input: ProviderInput) => Observable<ProviderEvent>): { provider: Provider; hanging: Subject<never> } {
  const hanging = new Subject<never>();
  let calls = 0;
  return { hanging, provider: (input) => (++calls === 1 ? concat(of(start, text('Let me')), hanging) : script(input)) };
}

/** Past the frame in which a `switch` conversation starts its loop (asap). */
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

const clock = () => new ToolRegistry().register({ name: 'current_time', description: '', input: {}, handler: () => '12:00' });

/** The aborted turn that a first, hanging call leaves in the history (R11). */
const abortedTurn = { role: 'assistant', content: 'Let me', stopReason: 'aborted' };

describe('examples/chat-epic', () => {
  function store(provider: Provider, preloaded: ChatState = initialViewModel) {
    const action$ = new Subject<ChatAction>();
    const state$ = new BehaviorSubject<ChatState>(preloaded);
    const actions: ChatAction[] = [];
    action$.pipe(scan(chatReducer, preloaded)).subscribe(state$);
    chatEpic(action$, state$, { provider, registry: clock() }).subscribe((action) => {
      actions.push(action);
      action$.next(action);
    });
    return { state$, actions, prompt: (text: string) => action$.next({ type: 'chat/prompt', text }) };
  }

  it('a new prompt aborts the running loop (switch): its turn stays in the history, then the new prompt runs', async () => {
    const script = scriptedProvider([toolTurn(call('current_time', {}, 'c1')), answerTurn('It is noon.')]);
    const { provider, hanging } = firstHangs(script);
    const { state$, actions, prompt } = store(provider);

    prompt('first, never answered');
    await tick();
    expect(hanging.observed).toBe(true);
    expect(state$.value).toMatchObject({ status: 'streaming', text: 'Let me' });

    prompt('What time is it?');
    expect(hanging.observed).toBe(false);
    expect(state$.value.status).toBe('aborted');
    await tick();
    expect(actions.every((a) => a.type === 'chat/event')).toBe(true);
    expect(only(actions.map((a) => (a as Extract<ChatAction, { type: 'chat/event' }>).event), 'loop_end').map((e) => e.reason)).toEqual(['aborted', 'stop']);
    expect(state$.value.messages).toMatchObject([
      { role: 'user', content: 'first, never answered' },
      abortedTurn,
      { role: 'user', content: 'What time is it?' },
      { role: 'assistant', stopReason: 'toolUse' },
      { role: 'toolResult', toolCallId: 'c1', content: '12:00' },
      { role: 'assistant', content: 'It is noon.' },
    ]);
    expect(script.inputs[0]!.messages).toEqual(state$.value.messages.slice(0, 3));
    expect(state$.value).toMatchObject({ status: 'done', turn: 2, text: 'It is noon.', tools: [] });
  });

  it('starts from the history in the state when the epic starts (one restored from storage)', async () => {
    const script = scriptedProvider([answerTurn('Still noon.')]);
    const saved: ChatState = { ...initialViewModel, messages: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello.' }] as AgentMessage[] };
    const { state$, prompt } = store(script, saved);
    prompt('And now?');
    await tick();
    expect(script.inputs[0]!.messages.map((m) => m.content)).toEqual(['Hi', 'Hello.', 'And now?']);
    expect(state$.value.messages).toHaveLength(4);
  });
});

describe('examples/conversation-service', () => {
  it('keeps the view model in a BehaviorSubject: the history carried, the status from the events', async () => {
    const provider = scriptedProvider([toolTurn(call('current_time', {}, 'c1')), answerTurn('Noon.'), answerTurn('You are welcome.')]);
    const service = new ConversationService(provider, clock());
    const statuses: string[] = [];
    service.conversation$.subscribe((s) => statuses.push(s.status));
    service.ask('What time is it?');
    await tick();
    service.ask('Thanks!');
    await tick();
    let now: LoopViewModel | undefined;
    service.conversation$.subscribe((s) => (now = s)).unsubscribe();
    expect(now?.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant', 'user', 'assistant']);
    expect(provider.inputs[2]!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant', 'user']);
    expect(now).toMatchObject({ status: 'done', text: 'You are welcome.' });
    expect(statuses).toEqual(expect.arrayContaining(['idle', 'streaming', 'done']));
    service.destroy();
  });

  it('ask() while a loop runs aborts it (switch): the first prompt and its aborted turn stay, the second runs', async () => {
    const script = scriptedProvider([answerTurn('Noon.')]);
    const { provider, hanging } = firstHangs(script);
    const service = new ConversationService(provider, clock());
    let now: LoopViewModel = initialViewModel;
    service.conversation$.subscribe((s) => (now = s));

    service.ask('first');
    await tick();
    expect(now).toMatchObject({ status: 'streaming', text: 'Let me' });
    service.ask('second');
    expect(hanging.observed).toBe(false);
    await tick();
    expect(now.messages).toMatchObject([{ role: 'user', content: 'first' }, abortedTurn, { role: 'user', content: 'second' }, { role: 'assistant', content: 'Noon.' }]);
    expect(now.status).toBe('done');
    service.destroy();
  });

  it('stop() aborts the running loop only: its turn stays, and the next ask() goes on from that history', async () => {
    const script = scriptedProvider([answerTurn('Noon.')]);
    const { provider, hanging } = firstHangs(script);
    const service = new ConversationService(provider, clock());
    let now: LoopViewModel = initialViewModel;
    let completed = false;
    service.conversation$.subscribe({ next: (s) => (now = s), complete: () => (completed = true) });

    service.stop(); // nothing runs: nothing changes
    service.ask('first');
    await tick();
    expect(hanging.observed).toBe(true);
    service.stop();
    expect(hanging.observed).toBe(false);
    expect(now).toMatchObject({ status: 'aborted', messages: [{ role: 'user', content: 'first' }, abortedTurn] });

    service.ask('again');
    await tick();
    expect(script.inputs[0]!.messages).toMatchObject([{ role: 'user', content: 'first' }, abortedTurn, { role: 'user', content: 'again' }]);
    expect(now).toMatchObject({ status: 'done', text: 'Noon.' });
    expect(now.messages).toHaveLength(4);

    service.destroy();
    expect(completed).toBe(true);
  });
});

describe('examples/cli', () => {
  it('streams the text and shows, then clears, a status line while the tool runs', async () => {
    let written = '';
    const end = await runCli(demoProvider(), demoRegistry(1), 'q', { write: (text: string) => (written += text) });
    expect(end).toMatchObject({ type: 'loop_end', reason: 'stop' });
    expect(written).toContain('⏳ search…');
    expect(written).toContain('⏳ search… 50%');
    expect(written).toContain('[search: done]');
    expect(written).toContain('Found: 3 pages about rxjs expand');
    expect(written.endsWith('\n(stop)\n')).toBe(true);
  });
});

describe('examples/cancel-with-take-until', () => {
  it('takeUntil leaves the last complete turn_end history; a signal leaves error: aborted results', async () => {
    const stopped = await cancelWithTakeUntil();
    expect(stopped.last).toBe('message_end');
    expect(stopped.history.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult']);

    const aborted = await cancelWithSignal();
    expect(aborted).toMatchObject({ type: 'loop_end', reason: 'aborted' });
    if (aborted.type !== 'loop_end') return;
    expect(aborted.messages.slice(-1)).toEqual([
      { role: 'toolResult', toolCallId: 'c2', toolName: 'slow_report', content: 'error: aborted', isError: true },
    ]);
  });
});
