/**
 * C6, a terminal chat: the lines of standard input are the prompts, `prompts$.pipe(conversation(…))` turns
 * them into events, and the events are printed as they come — the text streamed, a status line while tools
 * run. On the scripted provider by default (no network, no keys; asked the time, it calls `current_time`,
 * which takes half a second), or on a real API with the s04 flags:
 *
 *   npm run chat
 *   npm run chat -- --provider openai --model gpt-4o-mini
 *   npm run chat -- --api responses --model gpt-5-mini
 *   npm run chat -- --provider anthropic --model claude-sonnet-4-5
 *   printf 'What time is it?\nThanks!\n' | npm run chat
 *   npm run chat -- --session chat.jsonl      # the chat kept in a file: the next run goes on from it (S1)
 *
 * - On a terminal: a `> ` prompt; the status line is rewritten in place. Ctrl+D ends the chat.
 * - Not on a terminal (a pipe, a file): one prompt per line, each echoed as `you: …`; each change of the
 *   status is a line of its own (`[running current_time]`). At the end of input the prompts still waiting
 *   are answered, then the chat exits with code 0.
 * - Policy `queue`: a prompt that arrives while an answer runs waits for it; the history carries over.
 * - Ctrl+C (SIGINT) cancels the running loop: the cancelled turn stays in the history (R11), `[cancelled]` is
 *   printed and the chat goes on. Ctrl+C with nothing running, or again before the cancelled loop has
 *   ended, exits with code 130.
 */
import { Interface, createInterface } from 'node:readline';
import { MonoTypeOperatorFunction, Observable, Subject, concat, concatMap, delay, filter, from, fromEvent, identity, lastValueFrom, map, merge, of, takeUntil, tap, timer } from 'rxjs';
import type { ConversationEvent, ConversationOptions, Provider, ProviderEvent, UserMessage } from '../src/index.js';
import { ToolRegistry, conversation, toolProgress } from '../src/index.js';
import { SessionTree, jsonlStore, persist } from '../src/sessions/index.js';
import type { Output } from './cli.js';
import { FIXED_NOW, providerFromArgs } from './series-demo.js';

/** What the chat emits: the conversation's events, and what the chat itself adds to them. */
export type ChatEvent =
  | ConversationEvent
  /** Ctrl+C cancelled the running loop (after its `loop_end`); `dropped`: the prompts that waited behind it. */
  | { type: 'cancelled'; dropped: number }
  /** Nothing runs and no prompt waits: the place for a `> ` prompt. */
  | { type: 'idle' }
  /** Ctrl+C with nothing to cancel: the chat completes right after it. */
  | { type: 'quit' };

/** A loop's options, as `conversation()` takes them; the chat decides the policy and the stop button. */
export type ChatOptions = Omit<ConversationOptions, 'policy' | 'abort$'>;

/**
 * The chat as an Observable: prompts and interrupts (Ctrl+C) in, events out; completes when the prompts
 * have completed and the last answer has ended, or with `quit`. Ctrl+C is the conversation's `abort$`: the
 * running loop ends as `signal` would end it (R11: its turn and the `error: aborted` results stay in the
 * history) and the prompts typed ahead are dropped — as a terminal drops them when Ctrl+C interrupts a
 * command — then the chat goes on.
 *
 * ```text
 * prompts:     a-----------b---------c|
 * interrupts:  ------x
 * chat:        I(Ua)…(LCI)-(Ub)……(LI)-(Uc)……(LI|)     I = idle, U = user_message, L = loop_end, C = cancelled
 * ```
 *
 * `save`: an operator the conversation's events go through, e.g. `persist(tree, store)` to keep the chat in a
 * session (its error is the chat's).
 */
export function chat(
  prompts$: Observable<string>,
  interrupts$: Observable<unknown>,
  options: ChatOptions,
  save: MonoTypeOperatorFunction<ConversationEvent> = identity,
): Observable<ChatEvent> {
  return new Observable<ChatEvent>((subscriber) => {
    subscriber.next({ type: 'idle' });
    const aborts = new Subject<void>();
    /** Prompts that have not joined the history yet. */
    let waiting = 0;
    let dropped = 0;
    /** `running` from a prompt's `user_message` to its `loop_end`; `cancelling` once Ctrl+C has aborted it. */
    let loop: 'idle' | 'running' | 'cancelling' = 'idle';

    const events = prompts$
      .pipe(
        tap(() => waiting++),
        conversation({ ...options, policy: 'queue', abort$: aborts }),
        save,
      )
      .subscribe({
        next: (event) => {
          if (event.type === 'user_message') {
            waiting--;
            loop = 'running';
          }
          subscriber.next(event);
          if (event.type !== 'loop_end') return;
          if (loop === 'cancelling') subscriber.next({ type: 'cancelled', dropped });
          loop = 'idle';
          if (waiting === 0) subscriber.next({ type: 'idle' });
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });

    const interrupts = interrupts$.subscribe(() => {
      if (loop !== 'running') {
        subscriber.next({ type: 'quit' });
        return subscriber.complete();
      }
      loop = 'cancelling';
      dropped = waiting;
      waiting = 0;
      aborts.next(); // the loop ends at once with `aborted`, the waiting prompts are dropped
    });

    return () => {
      events.unsubscribe();
      interrupts.unsubscribe();
    };
  });
}

/** The lines of a readline interface until it closes, blank ones left out. */
export function lines(input: Interface): Observable<string> {
  return fromEvent(input, 'line', (line: string) => line).pipe(
    takeUntil(fromEvent(input, 'close')),
    filter((line) => line.trim() !== ''),
  );
}

/** `current_time`, slow enough to watch: a progress update at once, the (fixed) time after `ms`. */
export function chatRegistry(ms = 500): ToolRegistry {
  return new ToolRegistry().register({
    name: 'current_time',
    description: 'Returns the current time as an ISO 8601 string',
    input: {},
    handler: () => concat(of(toolProgress('reading the clock')), timer(ms).pipe(map(() => FIXED_NOW))),
  });
}

/**
 * The scripted model of the chat, which answers every prompt from the history alone: asked the time, it
 * calls `current_time` and then says the time; anything else it repeats, with what it remembers — how many
 * prompts it has seen, the one before, and the answers that were cancelled.
 */
export function chatProvider(wordMs = 10): Provider {
  return ({ messages }) => {
    const last = messages[messages.length - 1];
    if (last?.role === 'toolResult') {
      return answer(last.isError ? `I could not read the clock (${last.content}).` : `The time is ${last.content}.`, wordMs);
    }
    const prompts = messages.filter((message): message is UserMessage => message.role === 'user');
    const prompt = prompts[prompts.length - 1]?.content ?? '';
    if (/\btime\b/i.test(prompt)) {
      const id = `call_${messages.filter((message) => message.role === 'assistant').length + 1}`;
      return from<ProviderEvent[]>([
        { type: 'message_start' },
        { type: 'tool_call', call: { id, name: 'current_time', input: {} } },
        { type: 'message_end', stopReason: 'toolUse' },
      ]);
    }
    const before = prompts[prompts.length - 2]?.content;
    const cancelled = messages.filter((message) => message.role === 'assistant' && message.stopReason === 'aborted').length;
    return answer(
      `You said "${prompt}". ` +
        (before === undefined ? 'That is the first prompt of this chat.' : `That is prompt ${prompts.length} of this chat; the one before was "${before}".`) +
        (cancelled === 0 ? '' : ` So far ${cancelled} ${cancelled === 1 ? 'answer was' : 'answers were'} cancelled.`),
      wordMs,
    );
  };
}

/** A streamed answer: its words one by one, `wordMs` apart. */
function answer(text: string, wordMs: number): Observable<ProviderEvent> {
  const words = text.match(/\S+\s*/g) ?? [];
  return concat(
    of<ProviderEvent>({ type: 'message_start' }),
    from(words).pipe(concatMap((word) => of<ProviderEvent>({ type: 'text_delta', text: word }).pipe(delay(wordMs)))),
    of<ProviderEvent>({ type: 'message_end', stopReason: 'stop' }),
  );
}

/**
 * Prints a chat's events to `out`. `inPlace`: the status line is rewritten in place (`\r\x1b[K`) under the
 * text, for a terminal; else each change of status is a line. `echo`: each prompt is printed as `you: …`, for
 * when the terminal did not show it as it was typed.
 */
export function chatRenderer(out: Output, { inPlace, echo }: { inPlace: boolean; echo: boolean }): (event: ChatEvent) => void {
  const tools = new Map<string, string>(); // call id -> its status, in the order they started
  let status = ''; // the status on screen (in place) or last printed
  let lineOpen = false; // text was written without its newline yet

  const showStatus = () => {
    const next = [...tools.values()].map((tool) => `[${tool}]`).join(' ');
    if (next === status) return;
    if (inPlace) {
      if (lineOpen) return; // the status line has a line of its own: it comes back once the text's line ends
      out.write(`\r\x1b[K${next}`);
    } else if (next !== '') {
      if (lineOpen) out.write('\n');
      lineOpen = false;
      out.write(`${next}\n`);
    }
    status = next;
  };
  const print = (text: string) => {
    if (inPlace && status !== '') out.write('\r\x1b[K');
    if (inPlace) status = '';
    out.write(text);
    lineOpen = !text.endsWith('\n');
    showStatus();
  };
  const endLine = () => {
    if (lineOpen) print('\n');
  };

  return (event) => {
    switch (event.type) {
      case 'user_message':
        return echo ? print(`you: ${event.message.content}\n`) : undefined;
      case 'text_delta':
        return print(event.text);
      case 'message_end':
        return endLine();
      case 'tool_start':
        tools.set(event.call.id, `running ${event.call.name}`);
        return showStatus();
      case 'tool_update':
        tools.set(event.toolCallId, `${event.toolName}: ${event.content}`);
        return showStatus();
      case 'tool_result': {
        const { toolCallId, toolName, isError, content } = event.message;
        tools.delete(toolCallId);
        endLine();
        return print(isError ? `[${toolName} failed: ${content}]\n` : `[${toolName} done]\n`);
      }
      case 'loop_end':
        tools.clear();
        endLine();
        if (event.reason === 'error') return print(`[error: ${event.assistant.errorMessage ?? 'the model call failed'}]\n`);
        if (event.reason !== 'stop' && event.reason !== 'aborted') return print(`[ended: ${event.reason}]\n`);
        return showStatus();
      case 'cancelled':
        return print(event.dropped === 0 ? '[cancelled]\n' : `[cancelled; ${event.dropped} waiting ${event.dropped === 1 ? 'prompt' : 'prompts'} dropped]\n`);
      default:
        return undefined;
    }
  };
}

/** `--session FILE` (taken out of the arguments; the rest choose the provider): where the chat is kept. */
function sessionArg(args: string[]): { session: string | undefined; rest: string[] } {
  const at = args.findIndex((arg) => arg === '--session' || arg.startsWith('--session='));
  if (at === -1) return { session: undefined, rest: args };
  const [flag] = args.splice(at, 1);
  return { session: flag!.includes('=') ? flag!.slice('--session='.length) : args.splice(at, 1)[0], rest: args };
}

async function main(): Promise<void> {
  const { session, rest } = sessionArg(process.argv.slice(2));
  const provider = providerFromArgs('chat', rest, chatProvider());
  if (provider === undefined) return;
  if (session === '') throw new Error('chat: --session needs a file');
  // S1: the chat goes on from the session's leaf, and every message joins the file as it joins the history
  const store = session === undefined ? undefined : jsonlStore(session);
  const tree = store === undefined ? undefined : await lastValueFrom(SessionTree.load(store));
  // a terminal on both ends: readline edits the line, shows the prompt and turns Ctrl+C into its 'SIGINT'
  const interactive = process.stdin.isTTY === true && process.stdout.isTTY === true;
  const input = createInterface({ input: process.stdin, output: interactive ? process.stdout : undefined, terminal: interactive, prompt: '> ' });
  const interrupts$ = merge(fromEvent(process, 'SIGINT'), fromEvent(input, 'SIGINT'));
  const render = chatRenderer(process.stdout, { inPlace: process.stdout.isTTY === true, echo: !interactive });
  let idle = false;
  let ended = false;
  input.on('close', () => (ended = true));
  if (interactive) {
    console.log('chat: Ctrl+C cancels the answer, Ctrl+C with nothing running exits, Ctrl+D ends.');
    input.on('line', (line) => line.trim() === '' && idle && input.prompt()); // a blank line is no prompt
  }

  const messages = tree?.context() ?? [];
  chat(lines(input), interrupts$, { provider, registry: chatRegistry(), messages }, tree === undefined ? identity : persist(tree, store!)).subscribe({
    next: (event) => {
      render(event);
      if (event.type === 'user_message') idle = false;
      if (event.type === 'idle') idle = true;
      if (event.type === 'idle' && interactive && !ended) input.prompt();
      if (event.type === 'quit') {
        if (interactive) process.stdout.write('\n');
        input.close();
        process.exit(130);
      }
    },
    error: (error: unknown) => {
      console.error(error instanceof Error ? error.message : String(error));
      input.close();
      process.exitCode = 1;
    },
    complete: () => {
      if (interactive) process.stdout.write('\n'); // after Ctrl+D at the `> ` prompt
      input.close();
    },
  });
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  });
}
