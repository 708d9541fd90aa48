import { BehaviorSubject, Subject, lastValueFrom, scan, take, toArray } from 'rxjs';
import { cancelWithSignal, cancelWithTakeUntil } from '../examples/cancel-with-take-until.js';
import { ChatAction, ChatState, chatEpic, chatReducer } from '../examples/chat-epic.js';
import { demoProvider, demoRegistry, runCli } from '../examples/cli.js';
import { Conversation, ConversationService } from '../examples/conversation-service.js';
import { echoProvider } from '../examples/custom-provider.js';
import { chat } from '../examples/prompts-in-events-out.js';
import { ConversationEvent, ProviderInput, ToolRegistry, scriptedProvider } from '../src/index.js';
import { answerTurn, call, only, toolTurn } from './support/events.js';

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

describe('examples/chat-epic', () => {
  it('maps loop events to actions, and a new prompt cancels the running loop (switchMap)', async () => {

    const hanging = new Subject<never>();
    const script = scriptedProvider([toolTurn(call('current_time', {}, 'c1')), answerTurn('It is noon.')]);
    let calls = 0;
    const provider = (input: ProviderInput) => (++calls === 1 ? hanging : script(input));
    const registry = new ToolRegistry().register({ name: 'current_time', description: '', input: {}, handler: () => '12:00' });

    const action$ = new Subject<ChatAction>();
    const state$ = new BehaviorSubject<ChatState>({ messages: [], streaming: '', running: [] });
    const actions: ChatAction[] = [];
    action$.pipe(scan(chatReducer, state$.value)).subscribe(state$);
    chatEpic(action$, state$, { provider, registry }).subscribe((action) => {
      actions.push(action);
      action$.next(action);
    });

    action$.next({ type: 'chat/prompt', text: 'first, never answered' });
    expect(hanging.observed).toBe(true);
    action$.next({ type: 'chat/prompt', text: 'What time is it?' });
    expect(hanging.observed).toBe(false);
    expect(actions.map((a) => a.type)).toEqual(['chat/toolStarted', 'chat/toolFinished', 'chat/turnEnded', 'chat/delta', 'chat/turnEnded', 'chat/answered']);
    expect(state$.value.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
    expect(state$.value.messages[0]).toEqual({ role: 'user', content: 'What time is it?' });
    expect(state$.value.running).toEqual([]);
  });
});

describe('examples/conversation-service', () => {
  it('keeps the conversation in a BehaviorSubject updated from turn_end and loop_end', async () => {
    const provider = scriptedProvider([toolTurn(call('current_time', {}, 'c1')), answerTurn('Noon.')]);
    const registry = new ToolRegistry().register({ name: 'current_time', description: '', input: {}, handler: () => '12:00' });
    const service = new ConversationService(provider, registry);
    const statuses: string[] = [];
    service.conversation$.subscribe((c) => statuses.push(c.status));
    service.ask('What time is it?');
    let now: Conversation | undefined;
    service.conversation$.subscribe((c) => (now = c)).unsubscribe();
    expect(now?.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
    expect(now?.status).toBe('idle');
    expect(statuses).toEqual(expect.arrayContaining(['idle', 'thinking', 'running tools']));
    service.destroy();
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
