/**
 * Plays a generated {@link Scenario} through `runEventedToolLoop` and records everything the
 * properties look at: the loop's events (with their time), what each provider subscription sent,
 * every tool invocation and its signal, and what was still running when the loop ended.
 *
 * - `virtual` scenarios run inside `TestScheduler.run`: every delay is a virtual frame, the whole run
 *   is synchronous and deterministic.
 * - `real` scenarios run on real timers (ms) and Promises, which `TestScheduler.run` does not virtualise.
 *
 * Leak accounting at the moment the loop is torn down (completion or unsubscribe):
 * - every provider subscription and every Observable tool subscription must be closed;
 * - every tool that had not finished by itself must have seen its `signal` abort (a Promise tool that
 *   reads `context.signal` only later must find it aborted when it does);
 * - no rxjs timer may be left: rxjs async timers all go through `intervalProvider`, which we wrap;
 * - no listener may be left on the caller's `signal`.
 */
import { type MonoTypeOperatorFunction, Observable, Subscriber, Subscription, asyncScheduler, config, finalize, identity } from 'rxjs';
import { intervalProvider } from 'rxjs/internal/scheduler/intervalProvider';
import { TestScheduler } from 'rxjs/testing';
import {
  AgentMessage,
  HookContext,
  LoopEvent,
  LoopOptions,
  Provider,
  ProviderEvent,
  ProviderInput,
  Tool,
  ToolCall,
  ToolContext,
  ToolRegistry,
  ToolResultMessage,
  runEventedToolLoop,
} from '../../../src/index.js';
import {
  Behaviour,
  CallSpec,
  Decision,
  HOSTILE_NAMES,
  HookSpec,
  KEEP_AFTER,
  Out,
  PASS_BEFORE,
  PASS_PREPARE,
  Preparation,
  Replacement,
  Scenario,
  Thrown,
  initialMessages,
  inputOf,
  turnScript,
  turnSpec,
} from './scenario.js';
import { KNOWN_DEFECTS } from './known-defects.js';

export interface ProviderCall {
  /** the turn as the provider reads it: from the history's assistant messages, or the turn prepareTurn was asked for */
  turn: number;
  input: ProviderInput;
  /** how many loop events had been received when the provider function was called */
  calledAfterEvents: number;
  subscriptions: number;
  /** subscribed, not torn down, and not finished by itself */
  active: boolean;
  /** the events this subscription actually sent, in order */
  sent: unknown[];
  /** index in `sent` of the first event that breaks the protocol */
  faultAt?: number;
  errored: boolean;
  threw: boolean;
  /** the caller's signal had already aborted, or the loop had already ended, when the provider was called */
  afterAbort: boolean;
  afterEnd: boolean;
  /** its Observable was subscribed after the loop had ended, or after the caller's signal had aborted */
  subscribedAfterEnd?: boolean;
  subscribedAfterAbort?: boolean;
}

export interface ToolRun {
  call: CallSpec;
  input: unknown;
  /** the handler's `context.signal`, for tools that read it at once */
  signal?: AbortSignal;
  /** the handler's work ended by itself (returned, threw, resolved, rejected, completed, errored) */
  settled: boolean;
  /** an Observable tool that is subscribed and not torn down */
  active: boolean;
  /** a Promise tool that reads `context.signal` only when its timer fires */
  late?: { done: Promise<void>; read: boolean; sawAbort: boolean };
  unsettledAtEnd?: boolean;
  /** the caller's signal had already aborted, or the loop had already ended, when the handler was called */
  afterAbort: boolean;
  afterEnd: boolean;
  /** how many loop events had been received when the handler was called (R23: the last is its tool_start) */
  calledAfterEvents: number;
}

/** One call of a hook (H1–H6), and what became of it. */
export interface HookRun {
  hook: 'beforeToolCall' | 'afterToolCall' | 'prepareTurn';
  /** the call's id (beforeToolCall: `call.id`, afterToolCall: `result.toolCallId`) */
  id?: string;
  spec: HookSpec<unknown>;
  /** what it was given: the call, the result, the provider input */
  given: unknown;
  /** its context: the turn, the history as of the turn's start (tool hooks), the signal (read when `spec.signal` says) */
  context: { turn: number; messages?: readonly AgentMessage[]; signal: AbortSignal };
  /** what it answered with, when it answers a value (the decision, the replacement, the prepared input) */
  value?: unknown;
  /** how many loop events had been received when it was called */
  calledAfterEvents: number;
  /** the loop had been cancelled (aborted, unsubscribed) or had ended when it was called */
  afterAbort: boolean;
  afterEnd: boolean;
  /** the loop took its answer (a value or a failure) before it was cancelled */
  answered: boolean;
  /** how many loop events had been received when it answered */
  answeredAfterEvents?: number;
  /** it answered after the loop was cancelled (a hook that cancels the loop from inside, then answers): the answer counts for nothing */
  answeredAfterCancel?: boolean;
  /** the signal, read at once (`spec.signal` eager) */
  signal?: AbortSignal;
  /** an Observable answer: subscribed, and neither answered nor torn down */
  active: boolean;
  subscriptions: number;
}

export interface RunRecord {
  scenario: Scenario;
  events: { at: number; event: LoopEvent }[];
  /** events that came after `loop_end` (kept apart, so that the other checks read the loop up to its end) */
  afterLoopEnd: LoopEvent[];
  completed: boolean;
  error?: unknown;
  /** the loop was unsubscribed after this many events */
  unsubscribedAfter?: number;
  /** … and that happened before `subscribe()` had returned (the loop's synchronous start) */
  unsubscribedDuringSubscribe?: boolean;
  /** the signal aborted after this many events (-1: before subscribe) */
  abortedAfter?: number;
  /** the loop neither completed, errored nor was unsubscribed */
  hung: boolean;
  providerCalls: ProviderCall[];
  tools: ToolRun[];
  /** every call of a hook, in call order */
  hooks: HookRun[];
  /** what was still running when the loop was torn down */
  leaks: string[];
  /** rxjs reported an unhandled error */
  rxjsNotes: string[];
  callerMessages: readonly AgentMessage[];
  callerSnapshot: AgentMessage[];
  callerElements: readonly AgentMessage[];
}

// ---------------------------------------------------------------------------------------------
// rxjs timers and notifications

type IntervalHandle = ReturnType<typeof setInterval> | number;
type Delegate = NonNullable<typeof intervalProvider.delegate>;

/**
 * Counts the rxjs async timers (every `asyncScheduler` action with a delay goes through `intervalProvider`).
 * A timer is left behind when it is still live once the loop has ended and the call stack that ended it
 * has unwound (rxjs runs a completed subscriber's teardown only after the completion has travelled all
 * the way down, so a check from inside the last `complete` would see timers that are about to go), or
 * when it fires after the loop has ended.
 */
export class TimerTracker {
  readonly live = new Set<unknown>();
  private ended = false;
  private firedAfterEnd = 0;

  /** Wraps whatever `intervalProvider` uses now (TestScheduler's delegate in run mode, Node's timers otherwise). */
  install(): () => void {
    const previous = intervalProvider.delegate;
    const base: Delegate = previous ?? {
      setInterval: (handler, timeout, ...args) => setInterval(handler, timeout, ...args) as unknown as number,
      clearInterval: (handle) => clearInterval(handle as unknown as ReturnType<typeof setInterval>),
    };
    const tracker = this;
    intervalProvider.delegate = {
      setInterval(handler: (...args: unknown[]) => void, timeout?: number, ...args: unknown[]) {
        const wrapped = (...a: unknown[]) => {
          if (tracker.ended) tracker.firedAfterEnd++;
          handler(...a);
        };
        const handle = base.setInterval(wrapped, timeout, ...args) as IntervalHandle;
        tracker.live.add(handle);
        return handle as never;
      },
      clearInterval(handle: unknown) {
        tracker.live.delete(handle);
        base.clearInterval(handle as never);
      },
    } as Delegate;
    return () => {
      intervalProvider.delegate = previous;
    };
  }

  markEnd(): void {
    this.ended = true;
  }

  /** Timers still live, plus those that fired after `markEnd`. */
  leftBehind(): number {
    return this.live.size + this.firedAfterEnd;
  }
}

export const rxjsNotes: string[] = [];
let hooksInstalled = 0;
let savedHooks: { onUnhandledError: typeof config.onUnhandledError } | undefined;

/**
 * Records rxjs' unhandled errors. (Not `onStoppedNotification`: rxjs' own `timer` completes a subscriber that
 * unsubscribed during its `next`, so stopped notifications are routine and mean nothing here.)
 */
export function installRxjsHooks(): () => void {
  if (hooksInstalled++ === 0) {
    savedHooks = { onUnhandledError: config.onUnhandledError };
    config.onUnhandledError = (error) => rxjsNotes.push(`unhandled error: ${String(error)}`);
  }
  return () => {
    if (--hooksInstalled === 0 && savedHooks) {
      config.onUnhandledError = savedHooks.onUnhandledError;
    }
  };
}

// ---------------------------------------------------------------------------------------------
// Playing timelines

interface Timed {
  delay: number;
  run: () => void;
}

/** Runs `items` in order: a delay of 0 runs at once (synchronously), others on `asyncScheduler`. Stops when `closed()`. */
function play(items: Timed[], closed: () => boolean): Subscription {
  const subscription = new Subscription();
  const from = (start: number): void => {
    for (let i = start; i < items.length; i++) {
      if (closed()) return;
      const item = items[i]!;
      if (item.delay > 0) {
        subscription.add(
          asyncScheduler.schedule(() => {
            if (closed()) return;
            item.run();
            from(i + 1);
          }, item.delay),
        );
        return;
      }
      item.run();
    }
  };
  from(0);
  return subscription;
}

/** Freezes `value` and everything in it, so that a write from the loop throws (the sources are strict mode). */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key]);
  }
  return value;
}

export function outValue(out: Out): unknown {
  switch (out.kind) {
    case 'string':
      return out.content;
    case 'output': {
      const output: Record<string, unknown> = { content: out.content, isError: out.isError, terminate: out.terminate };
      if (out.details !== undefined) output.details = structuredClone(out.details);
      return deepFreeze(output); // the loop must never write to a tool's output
    }
    case 'bad':
      return out.value;
  }
}

export function thrownValue(thrown: Thrown, message: string): unknown {
  switch (thrown) {
    case 'Error':
      return new Error(message);
    case 'string':
      return message;
    case 'object':
      return { reason: message };
    case 'undefined':
      return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// The provider and the tools of a scenario

function assistantCount(messages: readonly AgentMessage[]): number {
  let n = 0;
  for (const message of messages) if (message?.role === 'assistant') n++;
  return n;
}

interface Recorder {
  record: RunRecord;
  /** re-entrant cancellation points: a provider call, a tool handler call */
  onProviderCall(index: number): void;
  onHandler(index: number): void;
  onHook(index: number): void;
  /** loop events received so far */
  eventCount(): number;
  aborted(): boolean;
  ended(): boolean;
  /** H6: the turn each input that prepareTurn gave was prepared for (a compacted history does not say) */
  prepared: WeakMap<object, number>;
}

/** A pure provider: the turn is read from the history it is given (so the same loop can be subscribed twice). */
export function scenarioProvider(scenario: Scenario, recorder: Recorder): Provider {
  const base = assistantCount(initialMessages(scenario.initial));
  return (input) => {
    const turn = recorder.prepared.get(input) ?? assistantCount(input.messages) - base + 1;
    const script = turnScript(turnSpec(scenario, turn));
    const call: ProviderCall = {
      turn,
      input,
      calledAfterEvents: recorder.eventCount(),
      subscriptions: 0,
      active: false,
      sent: [],
      errored: false,
      threw: false,
      afterAbort: recorder.aborted(),
      afterEnd: recorder.ended(),
    };
    recorder.record.providerCalls.push(call);
    recorder.onProviderCall(recorder.record.providerCalls.length - 1);
    if (script.throwOnCall) {
      call.threw = true;
      throw script.throwOnCall;
    }
    return new Observable<ProviderEvent>((subscriber) => {
      if (recorder.ended()) call.subscribedAfterEnd = true;
      if (recorder.aborted()) call.subscribedAfterAbort = true;
      call.subscriptions++;
      call.active = true;
      const items: Timed[] = script.items.map((item) => ({
        delay: item.delay,
        run: () => {
          if ('error' in item) {
            call.errored = true;
            call.active = false; // finished by itself (its teardown runs only once the error has gone all the way down)
            subscriber.error(item.error);
            return;
          }
          if (!item.valid && call.faultAt === undefined) call.faultAt = call.sent.length;
          deepFreeze(item.event); // the loop must never write to a provider's events
          call.sent.push(item.event);
          subscriber.next(item.event as ProviderEvent);
        },
      }));
      if (!script.items.some((item) => 'error' in item)) {
        items.push({
          delay: 0,
          run: () => {
            call.active = false;
            subscriber.complete();
          },
        });
      }
      const playing = play(items, () => subscriber.closed);
      return () => {
        call.active = false;
        playing.unsubscribe();
      };
    });
  };
}

function runBehaviour(behaviour: Behaviour, context: ToolContext, run: ToolRun): unknown {
  switch (behaviour.kind) {
    case 'sync':
      run.settled = true;
      return outValue(behaviour.out);
    case 'throw':
      run.settled = true;
      throw thrownValue(behaviour.thrown, behaviour.message);
    case 'observable':
      return new Observable<unknown>((subscriber) => {
        run.active = true;
        run.signal = context.signal;
        const items: Timed[] = behaviour.steps.map((step) => ({ delay: step.delay, run: () => subscriber.next(outValue(step.out)) }));
        if (behaviour.end !== 'never') {
          items.push({
            delay: behaviour.endDelay,
            run: () => {
              run.settled = true;
              run.active = false; // finished by itself (its teardown runs only once the completion has gone all the way down)
              if (behaviour.end === 'complete') subscriber.complete();
              else subscriber.error(new Error('stream broke'));
            },
          });
        }
        const playing = play(items, () => subscriber.closed);
        return () => {
          run.active = false;
          playing.unsubscribe();
        };
      });
    case 'promise': {
      const { delay, settle, out, message } = behaviour;
      const finish = (resolve: (value: unknown) => void, reject: (error: unknown) => void) => {
        run.settled = true;
        if (settle === 'resolve') resolve(outValue(out));
        else reject(new Error(message));
      };
      if (behaviour.signal === 'late') {
        // an abort-aware async tool that looks at its signal only once its first step is done
        return new Promise((resolve, reject) => {
          let done!: () => void;
          run.late = { done: new Promise<void>((r) => (done = r)), read: false, sawAbort: false };
          const late = run.late;
          setTimeout(() => {
            late.read = true;
            if (context.signal.aborted) late.sawAbort = true;
            else finish(resolve, reject);
            done();
          }, delay);
        });
      }
      return new Promise((resolve, reject) => {
        const signal = context.signal;
        run.signal = signal;
        if (delay === 0) return finish(resolve, reject);
        const timer = asyncScheduler.schedule(() => finish(resolve, reject), delay);
        signal.addEventListener('abort', () => timer.unsubscribe(), { once: true });
      });
    }
    case 'subscribeThrows':
      return new Observable<unknown>(() => {
        run.settled = true;
        throw new Error(behaviour.message);
      });
    case 'never':
      if (behaviour.as === 'promise') {
        run.signal = context.signal;
        return new Promise(() => undefined);
      }
      return new Observable<unknown>(() => {
        run.active = true;
        run.signal = context.signal;
        return () => {
          run.active = false;
        };
      });
  }
}

/** The scenario's calls by id; a duplicate (R28) never runs, so an id names its first call. */
export function callsById(scenario: Scenario): Map<string, CallSpec> {
  const calls = new Map<string, CallSpec>();
  for (const turn of scenario.turns) for (const step of turn.steps) if (step.kind === 'call' && !calls.has(step.call.id)) calls.set(step.call.id, step.call);
  return calls;
}

export function scenarioRegistry(scenario: Scenario, recorder: Recorder): ToolRegistry {
  const calls = callsById(scenario);
  const handler: Tool['handler'] = (input, context) => {
    const call = calls.get(context.call.id);
    if (call === undefined) throw new Error(`harness: no behaviour for call ${context.call.id}`);
    const run: ToolRun = {
      call,
      input,
      settled: false,
      active: false,
      afterAbort: recorder.aborted(),
      afterEnd: recorder.ended(),
      calledAfterEvents: recorder.eventCount(),
    };
    recorder.record.tools.push(run);
    recorder.onHandler(recorder.record.tools.length - 1);
    return runBehaviour(call.behaviour, context, run) as ReturnType<Tool['handler']>;
  };
  const registry = new ToolRegistry()
    .register({ name: 'tool', description: 'does what the scenario says', input: {}, handler })
    .register({ name: 'needs', description: 'needs a key', input: { key: 'the key' }, handler });
  for (const name of HOSTILE_NAMES) {
    if (scenario.hostileRegistered.includes(name)) registry.register({ name, description: `a tool called ${name}`, input: {}, handler });
  }
  return registry;
}

// ---------------------------------------------------------------------------------------------
// The hooks of a scenario (H1–H6)

/**
 * Gives a hook's answer as its spec says: at once, as an Observable after a delay (a second value follows
 * the first; only the first may count), as a Promise after a delay, a failure, or never. Marks `run.answered`
 * when the loop takes the answer: a plain value at once; an Observable's when it is sent to a subscriber
 * still there; a Promise's when it settles before the loop was cancelled (the harness's own `then` runs
 * right before the loop's).
 */
function answer(run: HookRun, value: () => unknown, second: unknown, recorder: Recorder): unknown {
  const { answer, timing } = run.spec;
  if (answer.kind === 'never') {
    if (answer.as === 'promise') return new Promise(() => undefined);
    return new Observable<never>(() => {
      run.subscriptions++;
      run.active = true;
      return () => {
        run.active = false;
      };
    });
  }
  const failure = () => new Error(answer.kind === 'error' ? answer.message : 'harness: no failure');
  const answered = () => {
    run.answered = true;
    run.answeredAfterEvents = recorder.eventCount();
    if (recorder.aborted() || recorder.ended()) run.answeredAfterCancel = true;
  };
  if (timing.via === 'sync' && answer.kind !== 'empty') {
    answered();
    if (answer.kind === 'error') throw failure();
    return (run.value = value());
  }
  if (timing.via === 'promise') {
    const settle = (resolve: (v: unknown) => void, reject: (e: unknown) => void) => {
      if (answer.kind === 'value') resolve((run.value = value()));
      else reject(failure());
    };
    const promise = new Promise((resolve, reject) => (timing.delay === 0 ? settle(resolve, reject) : setTimeout(() => settle(resolve, reject), timing.delay)));
    const taken = () => {
      if (!recorder.aborted() && !recorder.ended()) answered();
    };
    promise.then(taken, taken);
    return promise;
  }
  const delay = timing.via === 'observable' ? timing.delay : 0;
  return new Observable<unknown>((subscriber) => {
    run.subscriptions++;
    run.active = true;
    const fire = () => {
      answered();
      run.active = false; // answered by itself (its teardown runs once the answer has gone all the way down)
      if (answer.kind === 'value') {
        subscriber.next((run.value = value()));
        subscriber.next(second);
        subscriber.complete();
      } else if (answer.kind === 'error') subscriber.error(failure());
      else subscriber.complete();
    };
    if (delay === 0) {
      fire();
      return undefined;
    }
    const timer = asyncScheduler.schedule(fire, delay);
    return () => {
      run.active = false;
      timer.unsubscribe();
    };
  });
}

function hookRun(hook: HookRun['hook'], spec: HookSpec<unknown>, given: unknown, context: HookRun['context'], recorder: Recorder, id?: string): HookRun {
  const run: HookRun = {
    hook,
    spec,
    given,
    context,
    calledAfterEvents: recorder.eventCount(),
    afterAbort: recorder.aborted(),
    afterEnd: recorder.ended(),
    answered: false,
    active: false,
    subscriptions: 0,
  };
  if (id !== undefined) run.id = id;
  if (spec.signal === 'eager') run.signal = context.signal;
  recorder.record.hooks.push(run);
  recorder.onHook(recorder.record.hooks.length - 1);
  return run;
}

/** H2: the decision as the hook gives it. */
function decisionValue(decision: Decision, call: CallSpec | undefined): unknown {
  switch (decision.kind) {
    case 'pass':
      return undefined;
    case 'run':
      return { action: 'run' };
    case 'rewrite':
      // a fresh input of that kind for the same tool; the loop must not write to it
      return { action: 'run', input: deepFreeze(inputOf({ ...call!, input: decision.input })) };
    case 'deny':
      return { action: 'deny', reason: decision.reason };
    case 'answer':
      return { action: 'answer', output: outValue(decision.out) };
    case 'bad':
      return decision.value;
  }
}

function replacementValue(replacement: Replacement): unknown {
  return replacement.kind === 'keep' ? undefined : replacement.kind === 'replace' ? outValue(replacement.out) : replacement.value;
}

/** H6, a valid compaction: a system summary, then the history from its last assistant message on (its results follow it). */
export function compacted(messages: readonly AgentMessage[]): AgentMessage[] {
  let cut = messages.length;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === 'assistant') {
      cut = i;
      break;
    }
  }
  if (cut === messages.length) cut = 0;
  return [{ role: 'system', content: `summary of ${cut} earlier messages` }, ...messages.slice(cut)];
}

function preparationValue(preparation: Preparation, input: ProviderInput): unknown {
  switch (preparation.kind) {
    case 'pass':
      return input;
    case 'compact':
      return { messages: compacted(input.messages), tools: input.tools };
    case 'bad':
      return preparation.what === 'noInput' ? { messages: [] } : { ...input, messages: [{ role: 'robot', content: 'x' }] };
  }
}

/** The hooks the scenario gives the loop: each call and turn does what its spec says (a call without one: nothing, at once). */
function scenarioHooks(scenario: Scenario, recorder: Recorder): Pick<LoopOptions, 'beforeToolCall' | 'afterToolCall' | 'prepareTurn'> {
  const hooks: Pick<LoopOptions, 'beforeToolCall' | 'afterToolCall' | 'prepareTurn'> = {};
  if (scenario.hooks === undefined) return hooks;
  const calls = callsById(scenario);
  const toolContext = (context: HookContext) => ({ turn: context.turn, messages: context.messages, get signal() { return context.signal; } });
  if (scenario.hooks.before) {
    hooks.beforeToolCall = (call: ToolCall, context: HookContext) => {
      const spec = calls.get(call.id)?.before ?? PASS_BEFORE;
      const run = hookRun('beforeToolCall', spec, call, toolContext(context), recorder, call.id);
      const decision = spec.answer.kind === 'value' ? spec.answer.value : undefined;
      return answer(run, () => decisionValue(decision!, calls.get(call.id)), { action: 'deny', reason: 'a second value' }, recorder) as never;
    };
  }
  if (scenario.hooks.after) {
    hooks.afterToolCall = (result: ToolResultMessage, context: HookContext) => {
      const spec = calls.get(result.toolCallId)?.after ?? KEEP_AFTER;
      const run = hookRun('afterToolCall', spec, result, toolContext(context), recorder, result.toolCallId);
      const replacement = spec.answer.kind === 'value' ? spec.answer.value : undefined;
      return answer(run, () => replacementValue(replacement!), 'a second value', recorder) as never;
    };
  }
  if (scenario.hooks.prepare) {
    hooks.prepareTurn = (input: ProviderInput, context: { turn: number; signal: AbortSignal }) => {
      const spec = turnSpec(scenario, context.turn).prepare ?? PASS_PREPARE;
      const run = hookRun('prepareTurn', spec, input, { turn: context.turn, get signal() { return context.signal; } }, recorder);
      const preparation = spec.answer.kind === 'value' ? spec.answer.value : undefined;
      const value = () => {
        const prepared = preparationValue(preparation!, input);
        if (typeof prepared === 'object' && prepared !== null) recorder.prepared.set(prepared, context.turn);
        return prepared;
      };
      return answer(run, value, { messages: [], tools: [] }, recorder) as never;
    };
  }
  return hooks;
}

// ---------------------------------------------------------------------------------------------
// Running a scenario

export interface RunOptions {
  /** check the rxjs timer count when the loop ends (off when many loops run at once) */
  timers?: TimerTracker;
  /** real mode: how long to wait for a loop to end before calling it hung */
  hangAfterMs?: number;
  /**
   * Check that a tool which reads `context.signal` only after it was torn down finds it aborted
   * (default true). Off while defect D1 (spec/properties/defects.spec.ts) is open.
   */
  lateSignals?: boolean;
}

function newRecord(scenario: Scenario): RunRecord {
  const caller = initialMessages(scenario.initial);
  return {
    scenario,
    events: [],
    afterLoopEnd: [],
    completed: false,
    hung: false,
    providerCalls: [],
    tools: [],
    hooks: [],
    leaks: [],
    rxjsNotes: [],
    callerMessages: caller,
    callerSnapshot: structuredClone(caller),
    callerElements: caller.slice(),
  };
}

/** Counts the listeners the loop keeps on the caller's signal. */
function countedSignal(controller: AbortController): { signal: AbortSignal; listeners: () => number } {
  const signal = controller.signal;
  const active = new Set<unknown>();
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = ((type: string, listener: EventListenerOrEventListenerObject, options?: AddEventListenerOptions | boolean) => {
    if (type === 'abort') {
      active.add(listener);
      // a `once` listener is gone once it has run
      const once = typeof options === 'object' && options?.once === true;
      if (once) add(type, () => active.delete(listener), { once: true });
    }
    add(type, listener, options);
  }) as AbortSignal['addEventListener'];
  signal.removeEventListener = ((type: string, listener: EventListenerOrEventListenerObject, options?: EventListenerOptions | boolean) => {
    if (type === 'abort') active.delete(listener);
    remove(type, listener, options);
  }) as AbortSignal['removeEventListener'];
  return { signal, listeners: () => active.size };
}

interface Session {
  record: RunRecord;
  start(now: () => number, scheduleCancel: (run: () => void, time: number) => () => void, deferCheck: (check: () => void) => void): void;
  /** the loop has ended (completed, errored or unsubscribed) */
  ended: boolean;
  /** called once the checks after the end are done */
  onEnd?: () => void;
}

function session(
  scenario: Scenario,
  loopOptions: (options: LoopOptions) => LoopOptions,
  timers: TimerTracker | undefined,
  through: MonoTypeOperatorFunction<LoopEvent> = identity,
): Session {
  const record = newRecord(scenario);
  const cancel = scenario.cancel;
  const controller = new AbortController();
  const recorder: Recorder = {
    record,
    onProviderCall: () => undefined,
    onHandler: () => undefined,
    onHook: () => undefined,
    eventCount: () => record.events.length,
    aborted: () => controller.signal.aborted,
    // ended, or the consumer has unsubscribed (the loop may only learn it once a subscribe() returns)
    ended: () => self.ended || record.unsubscribedAfter !== undefined,
    prepared: new WeakMap(),
  };
  const deadline = scenario.deadline;
  const counted = cancel?.how === 'signal' || deadline?.how === 'signal' ? countedSignal(controller) : undefined;
  if (cancel?.how === 'signal' && cancel.at === 'before') {
    controller.abort();
    record.abortedAfter = -1;
  }
  const options: LoopOptions = { provider: scenarioProvider(scenario, recorder), registry: scenarioRegistry(scenario, recorder), messages: record.callerMessages };
  if (scenario.maxTurns !== undefined) options.maxTurns = scenario.maxTurns;
  if (scenario.toolExecution !== undefined) options.toolExecution = scenario.toolExecution;
  if (scenario.maxConcurrency !== undefined) options.maxConcurrency = scenario.maxConcurrency;
  if (scenario.toolTimeoutMs !== undefined) options.toolTimeoutMs = scenario.toolTimeoutMs;
  if (counted) options.signal = counted.signal;
  Object.assign(options, scenarioHooks(scenario, recorder));

  const self: Session = {
    record,
    ended: false,
    start(now, scheduleCancel, deferCheck) {
      let cancelTimer: (() => void) | undefined;
      let deadlineTimer: (() => void) | undefined;
      // The loop has ended (completed, errored, or unsubscribed). The checks wait until the call stack that
      // ended it has unwound: rxjs runs teardowns only once a completion has travelled all the way down, and
      // a consumer that unsubscribes while a provider or tool is still inside its own subscribe() can only be
      // honoured when that subscribe() returns.
      const endCheck = () => {
        if (self.ended) return;
        self.ended = true;
        timers?.markEnd();
        cancelTimer?.();
        deadlineTimer?.();
        for (const run of record.tools) run.unsettledAtEnd = !run.settled;
        deferCheck(afterEnd);
      };
      const afterEnd = () => {
        for (const call of record.providerCalls) {
          if (call.active) record.leaks.push(`the provider subscription of turn ${call.turn} is still open`);
        }
        for (const run of record.tools) {
          if (run.active) record.leaks.push(`tool call ${run.call.id} (${run.call.behaviour.kind}) is still subscribed`);
          if (run.unsettledAtEnd && !run.settled && run.signal !== undefined && !run.signal.aborted) {
            record.leaks.push(`tool call ${run.call.id} (${run.call.behaviour.kind}) did not finish and its signal is not aborted`);
          }
        }
        for (const run of record.hooks) {
          if (run.active) record.leaks.push(`${run.hook}${run.id === undefined ? ` of turn ${run.context.turn}` : ` of ${run.id}`} is still subscribed`);
        }
        if (timers && timers.leftBehind() > 0) record.leaks.push(`${timers.leftBehind()} rxjs timer(s) left behind`);
        if (counted && counted.listeners() > 0) record.leaks.push(`${counted.listeners()} listener(s) left on the caller's signal`);
        self.onEnd?.();
      };
      const doCancel = (how = cancel?.how) => {
        if (how === undefined || cancel?.at === 'before' || self.ended) return;
        if (how === 'unsubscribe') {
          if (record.unsubscribedAfter !== undefined) return;
          record.unsubscribedAfter = record.events.length;
          record.unsubscribedDuringSubscribe = subscribing;
          subscriber.unsubscribe();
        } else if (!controller.signal.aborted) {
          record.abortedAfter = record.events.length;
          controller.abort();
        }
      };
      const subscriber = new Subscriber<LoopEvent>({
        next: (event) => {
          if (record.events[record.events.length - 1]?.event.type === 'loop_end') return void record.afterLoopEnd.push(event);
          record.events.push({ at: now(), event });
          if (cancel !== undefined && cancel.at !== 'before' && 'event' in cancel.at && record.events.length === cancel.at.event + 1) doCancel();
        },
        error: (error: unknown) => {
          record.error = error;
        },
        complete: () => {
          record.completed = true;
        },
      });
      if (cancel !== undefined && cancel.at !== 'before') {
        const at = cancel.at;
        if ('time' in at) cancelTimer = scheduleCancel(() => doCancel(), at.time);
        if ('handler' in at) recorder.onHandler = (index) => index === at.handler && doCancel();
        if ('providerCall' in at) recorder.onProviderCall = (index) => index === at.providerCall && doCancel();
        if ('hook' in at) recorder.onHook = (index) => index === at.hook && doCancel();
      }
      if (deadline !== undefined) deadlineTimer = scheduleCancel(() => doCancel(deadline.how), deadline.time);
      let subscribing = true;
      runEventedToolLoop(loopOptions(options)).pipe(through, finalize(endCheck)).subscribe(subscriber);
      subscribing = false;
    },
  };
  return self;
}

/** Plays a virtual-time scenario: synchronous, inside `TestScheduler.run`; `through` sits between the loop and the consumer (O3). */
export function runVirtual(
  scenario: Scenario,
  loopOptions: (options: LoopOptions) => LoopOptions = (o) => o,
  through: MonoTypeOperatorFunction<LoopEvent> = identity,
): RunRecord {
  const scheduler = new TestScheduler(() => undefined);
  const notesBefore = rxjsNotes.length;
  const restoreHooks = installRxjsHooks();
  const timers = new TimerTracker();
  let s: Session | undefined;
  try {
    scheduler.run(() => {
      timers.install(); // run() resets the delegate when it ends
      scheduler.maxFrames = 100_000; // a runaway timer ends the flush instead of the test
      s = session(scenario, loopOptions, timers, through);
      s.start(
        () => scheduler.now(),
        (run, time) => {
          // straight on the TestScheduler, so the tracker does not count the harness's own timer
          const action = scheduler.schedule(run, time);
          return () => action.unsubscribe();
        },
        (check) => scheduler.schedule(check, 0),
      );
    });
  } finally {
    restoreHooks();
  }
  const record = s!.record;
  record.hung = !s!.ended;
  record.rxjsNotes = rxjsNotes.slice(notesBefore);
  return record;
}

/** Plays a real-time scenario: real timers and Promises. */
export async function runReal(scenario: Scenario, options: RunOptions = {}, loopOptions: (options: LoopOptions) => LoopOptions = (o) => o): Promise<RunRecord> {
  const notesBefore = rxjsNotes.length;
  const restoreHooks = installRxjsHooks();
  const restoreTimers = options.timers?.install();
  try {
    const s = session(scenario, loopOptions, options.timers);
    const t0 = performance.now();
    const ended = new Promise<void>((resolve) => (s.onEnd = resolve));
    s.start(
      () => performance.now() - t0,
      (run, time) => {
        const timer = setTimeout(run, time);
        return () => clearTimeout(timer);
      },
      (check) => setImmediate(check),
    );
    let guard: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([ended, new Promise<void>((resolve) => (guard = setTimeout(resolve, options.hangAfterMs ?? 5_000)))]);
    clearTimeout(guard);
    const record = s.record;
    record.hung = !s.ended;
    // a tool that reads its signal late: wait until it has looked
    await Promise.all(record.tools.map((run) => run.late?.done));
    for (const run of record.tools) {
      if (options.lateSignals !== false && run.late && run.unsettledAtEnd && !run.late.sawAbort) {
        record.leaks.push(`tool call ${run.call.id} was torn down, but when it read context.signal afterwards it was not aborted`);
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 0)); // rxjs reports unhandled errors on a timeout
    record.rxjsNotes = rxjsNotes.slice(notesBefore);
    return record;
  } finally {
    restoreTimers?.();
    restoreHooks();
  }
}

export function runScenario(scenario: Scenario, options: RunOptions = {}): Promise<RunRecord> {
  if (scenario.mode === 'virtual') return Promise.resolve(runVirtual(scenario));
  return runReal(scenario, { timers: new TimerTracker(), lateSignals: !KNOWN_DEFECTS.lateSignalNotAborted, ...options });
}
