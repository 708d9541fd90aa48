/**
 * What every marble scenario shares: a jest test around `TestScheduler.run`, a provider and tools made
 * of cold marbles, and the loop's events as short strings. See ../README.md.
 */
import { Observable, OperatorFunction, map, timer } from 'rxjs';
import { RunHelpers, TestScheduler } from 'rxjs/testing';
import {
  AgentMessage,
  AssistantMessage,
  LoopEvent,
  Provider,
  ProviderEvent,
  StopReason,
  ToolCall,
  ToolContext,
  ToolRegistry,
  ToolReturn,
  UserMessage,
} from '../../src/index.js';

/**
 * One jest test, run in virtual time: one frame is one character of a diagram. After the scheduler has
 * flushed, each cold line must have been first subscribed at the frame its indentation draws it at.
 */
export function scenario(name: string, body: (helpers: RunHelpers) => void): void {
  test(name, () => {
    const colds: Cold[] = [];
    let drawn = false;
    let failure: unknown;
    try {
      new TestScheduler((actual, expected) => expect(actual).toEqual(expected)).run((helpers) => {
        body(strict(helpers, colds));
        drawn = true;
      });
    } catch (error) {
      if (!drawn) throw error; // a guard refused a line: nothing ran, so nothing was subscribed
      failure = error;
    }
    const misdrawn = colds.flatMap(misplaced);
    // a misdrawn line explains the diff it causes, so it is reported first
    const diff = failure instanceof Error ? [failure.message] : failure === undefined ? [] : [String(failure)];
    if (misdrawn.length > 0) throw new Error([...misdrawn, ...diff].join('\n'));
    if (failure !== undefined) throw failure;
  });
}

// ---- the provider's events: the lowercase letters of a diagram ----

export const start: ProviderEvent = { type: 'message_start' };
export const text = (content: string): ProviderEvent => ({ type: 'text_delta', text: content });
/** A tool call; its id is the tool's name unless given. */
export const call = (name: string, input: ToolCall['input'] = {}, id = name): ProviderEvent => ({
  type: 'tool_call',
  call: { id, name, input },
});
export const end = (stopReason: StopReason): ProviderEvent => ({ type: 'message_end', stopReason });

export const user = (content: string): UserMessage => ({ role: 'user', content });

/** The n-th call gets the n-th Observable, and the last one again after that: one line per turn (or per run of a tool). */
export function inOrder<T>(...runs: Observable<T>[]): () => Observable<T> {
  let calls = 0;
  return () => runs[Math.min(calls++, runs.length - 1)];
}

/** A provider that plays one cold marble per turn. */
export function turns(...replies: Observable<ProviderEvent>[]): Provider {
  const next = inOrder(...replies);
  return () => next();
}

type Handler = (input: Record<string, unknown>, context: ToolContext) => ToolReturn;

/** A registry of tools, each a handler or what every call of it returns (e.g. a cold marble). */
export function tools(table: Record<string, ToolReturn | Handler>): ToolRegistry {
  const registry = new ToolRegistry();
  for (const [name, run] of Object.entries(table)) {
    registry.register({ name, description: `the ${name} tool`, input: {}, handler: typeof run === 'function' ? run : () => run });
  }
  return registry;
}

/** An `AbortSignal` that aborts at the `!` of `marble` (e.g. `'------!'`: at frame 6). Call it inside a scenario. */
export function abortsAt(marble: string): AbortSignal {
  const frame = TestScheduler.parseMarblesAsSubscriptions(checked(marble, 'abort'), true).unsubscribedFrame;
  const controller = new AbortController();
  timer(frame).subscribe(() => controller.abort());
  return controller.signal;
}

// ---- the loop's events as strings: the values of the loop's line ----

/** `runEventedToolLoop(…).pipe(described)`: each event as one short line (see {@link eventLine}). */
export const described: OperatorFunction<LoopEvent, string> = map(eventLine);

/** The legend of provider letters, as the loop re-emits them: `{ s: 'message_start', … }`. */
export function echo(events: Record<string, ProviderEvent>): Record<string, string> {
  return Object.fromEntries(Object.entries(events).map(([letter, event]) => [letter, eventLine(event)]));
}

export function eventLine(event: LoopEvent): string {
  switch (event.type) {
    case 'turn_start':
      return `turn_start ${event.turn}`;
    case 'message_start':
      return 'message_start';
    case 'text_delta':
      return `text_delta ${event.text}`;
    case 'tool_call':
      return `tool_call ${event.call.name}`;
    case 'message_end':
      return `message_end ${event.stopReason}`;
    case 'tool_update':
      return `tool_update ${event.toolCallId}: ${event.content}`;
    case 'tool_result':
      return `tool_result ${event.message.toolName}: ${event.message.content}${event.message.isError ? ' (isError)' : ''}`;
    case 'turn_end':
      return `turn_end ${event.turn} (${why(event.assistant)}): ${event.messages.map(brief).join(', ')}`;
    case 'loop_end':
      return `loop_end ${event.reason}`;
  }
}

function why({ stopReason, errorMessage }: AssistantMessage): string {
  return errorMessage === undefined ? stopReason : `${stopReason}: ${errorMessage}`;
}

/** `user`, `assistant "text"[tool,tool]`, `toolResult tool`: the shape of the history. */
function brief(message: AgentMessage): string {
  switch (message.role) {
    case 'user':
      return 'user';
    case 'assistant': {
      const content = message.content === '' ? '' : ` "${message.content}"`;
      const calls = message.toolCalls === undefined ? '' : `[${message.toolCalls.map((c) => c.name).join(',')}]`;
      return `assistant${content}${calls}`;
    }
    case 'toolResult':
      return `toolResult ${message.toolName}`;
  }
}

// ---- every character of a diagram must matter ----

type Kind = 'cold' | 'expected' | 'subscription' | 'abort';

/** A cold line as drawn, and the Observable that logs its subscriptions. */
interface Cold {
  marble: string;
  observable: { subscriptions: readonly { subscribedFrame: number }[] };
}

/**
 * Refuses diagrams with characters that change nothing, so that changing any one character of a
 * diagram fails its test: no time progression (`1s `, `10ms `); spaces only as the indentation of cold
 * lines (elsewhere the scheduler skips them); groups closed and not nested; nothing after the end
 * (`|`, `#`, `!`) but the `)` of its group; no trailing `-`; a `^` exactly in subscription lines, a `!`
 * in an abort line.
 */
function checked(marble: string, kind: Kind): string {
  const wrong = /\d+(?:\.\d+)?(?:ms|s|m) /.test(marble)
    ? 'no time progression: a digit is a value, and frames are drawn one character each'
    : !/^ *(?:[^() ]|\([^() ]+\))*$/.test(marble)
      ? 'spaces only at the start; groups closed, not nested'
      : kind !== 'cold' && marble.startsWith(' ')
        ? 'only cold lines are indented (the scheduler skips these spaces): pad with "-"'
        : /[|#!](?!\)?$)/.test(marble)
          ? 'nothing may follow the end'
          : /-$/.test(marble)
            ? 'a trailing "-" means nothing'
            : (kind === 'subscription') !== marble.includes('^')
              ? 'a "^" belongs in subscription lines, and only there'
              : kind === 'abort' && !marble.endsWith('!')
                ? 'an abort line ends with its "!"'
                : undefined;
  if (wrong !== undefined) throw new Error(`diagram ${JSON.stringify(marble)}: ${wrong}`);
  return marble;
}

/** A cold line's indentation is the frame of its first subscription; a line nothing subscribes to has no place in a diagram. */
function misplaced({ marble, observable }: Cold): string[] {
  const drawnAt = marble.length - marble.replace(/^ +/, '').length;
  const first = observable.subscriptions[0];
  if (first === undefined) return [`cold ${JSON.stringify(marble)}: never subscribed`];
  return first.subscribedFrame === drawnAt
    ? []
    : [`cold ${JSON.stringify(marble)}: drawn at frame ${drawnAt}, first subscribed at frame ${first.subscribedFrame}`];
}

function strict(helpers: RunHelpers, colds: Cold[]): RunHelpers {
  const { cold, expectObservable, expectSubscriptions } = helpers;
  return {
    ...helpers,
    cold: (marbles, values, error) => {
      const observable = cold(checked(marbles, 'cold'), values, error);
      colds.push({ marble: marbles, observable });
      return observable;
    },
    expectObservable: (observable, subscription) => {
      const expectation = expectObservable(observable, subscription == null ? subscription : checked(subscription, 'subscription'));
      return { ...expectation, toBe: (marbles, values, error) => expectation.toBe(checked(marbles, 'expected'), values, error) };
    },
    expectSubscriptions: (logs) => {
      const expectation = expectSubscriptions(logs);
      return { toBe: (marbles) => expectation.toBe([marbles].flat().map((marble) => checked(marble, 'subscription'))) };
    },
  };
}
