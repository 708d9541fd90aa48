import { Observable, OperatorFunction, Subscriber, TeardownLogic, isObservable, tap } from 'rxjs';
import { HeldSubscriber } from '../util/held-subscriber.js';
import { setLongTimeout } from '../util/long-timeout.js';
import { ToolCallContext } from './tool-call-context.js';
import { fromAnswer, subscribeAnswer } from '../util/answer.js';
import { isPromiseLike } from '../util/values.js';
import { type InputCheck, type PendingInputCheck, checkInput } from './check-input.js';
import { toToolOutput, toolErrorMessage } from './tool-result.js';
import { type ToolProgress, type ToolSettled, type ToolUpdate, ToolTimeout, failed, resultOf, settled } from './tool-outcome.js';
import type { LoopEvent, TokenLedger, Tool, ToolCall, ToolOutput, ToolReturn } from '../types.js';
import { isToolProgress } from './tool-progress.js';

export type { ToolAwaiting, ToolProgress, ToolSettled, ToolStart, ToolUpdate } from './tool-outcome.js';

/**
 * What runs a known, valid call between its hooks (H1–H5, src/hooks/): given the call and its run (on the
 * checked input as asked, or on `input`, checked again), the call's progress. The loop composes it
 * (runTools), so that tools/ knows nothing of hooks.
 */
export type Between = (call: ToolCall, run: (input?: Record<string, unknown>) => Observable<ToolProgress>) => Observable<ToolProgress>;

/**
 * Runs one call of `tool` (`undefined`: the model asked for a tool nobody registered). Cold: on subscribe
 * the input is checked (R9, R17, R24) and, if the handler may run, `tool_start` comes first (R23), then the
 * handler runs; unsubscribing tears it down and aborts its `signal`. It never errors: every failure becomes a
 * `ToolSettled` with `isError: true` (R9), so it ends with exactly one `ToolSettled`.
 *
 * ```text
 * handler (Observable):  --a--b--c|
 * executeTool:          S-----u--u--(d|)     S = tool_start; u = tool_update(a), tool_update(b); d = settled(c)
 * handler throws:        #
 * executeTool:          (Sd|)                d = settled('error: …', isError)
 * unknown tool:         (d|)                 no tool_start: no handler ran
 * ```
 */
export function executeTool(
  tool: Tool | undefined,
  call: ToolCall,
  timeoutMs = Infinity,
  between?: Between,
  budget?: TokenLedger,
): Observable<ToolProgress> {
  return new Observable<ToolProgress>((subscriber) => startTool(tool, call, timeoutMs, between, subscriber, budget));
}

/**
 * executeTool's subscription, into a subscriber of the caller's: what the loop's runTools calls for each
 * call, without an Observable between (bench W1: most tools answer inside their start). Returns the run's
 * teardown, for `subscriber` to hold.
 */
export function startTool(
  tool: Tool | undefined,
  call: ToolCall,
  timeoutMs: number,
  between: Between | undefined,
  subscriber: Subscriber<ToolProgress>,
  budget?: TokenLedger,
): TeardownLogic {
  if (tool === undefined) return finish(subscriber, settled(toolErrorMessage(call, `unknown tool: ${call.name}`)));
  let checked: InputCheck | PendingInputCheck;
  try {
    checked = checkInput(tool, call.input);
  } catch (error) {
    // R20: a tool (or an input) whose fields throw when read — a `schema` getter, say — fails as the tool would
    return finish(subscriber, failed(call, error));
  }
  // the common case, without hooks and with a synchronous check: straight to the handler
  if (between === undefined && checked.kind !== 'pending') return run(tool, call, checked, timeoutMs, subscriber, budget);
  // H2: the hooks see only known, valid calls; an invalid one is answered as without hooks
  const go = (checked: InputCheck): TeardownLogic =>
    between === undefined || checked.kind !== 'valid'
      ? run(tool, call, checked, timeoutMs, subscriber, budget)
      : between(call, (input) =>
          input === undefined
            ? new Observable<ToolProgress>((runner) => run(tool, call, checked, timeoutMs, runner, budget))
            : executeTool(tool, { ...call, input }, timeoutMs, undefined, budget), // rewritten: checked again, and what tool_start carries
        ).subscribe(subscriber);
  if (checked.kind !== 'pending') return go(checked);
  // an asynchronous validator (R24): the handler starts, and its timeout with it, once it has answered
  checked.check.then((verdict) => {
    if (!subscriber.closed) subscriber.add(go(verdict));
  });
  return undefined;
}

/** The handler's run once the input check has spoken: `tool_start`, then its values, then the result. */
function run(
  tool: Tool,
  call: ToolCall,
  checked: InputCheck,
  timeoutMs: number,
  subscriber: Subscriber<ToolProgress>,
  budget: TokenLedger | undefined,
): TeardownLogic {
  if (checked.kind === 'rejected') return finish(subscriber, settled(toolErrorMessage(call, checked.content)));
  if (checked.kind === 'failed') return finish(subscriber, failed(call, checked.error));

  subscriber.next({ type: 'tool_start', call });
  // the consumer left, or the turn stopped its tools, on hearing of it: the handler never runs (R23)
  if (subscriber.closed) return undefined;
  const context = new ToolCallContext(call, budget);
  let value: ToolReturn;
  try {
    // R24: the handler gets the validator's output
    value = tool.handler(checked.input, context);
  } catch (error) {
    return finish(subscriber, failed(call, error));
  }
  // a plain value (most tools are synchronous): its result at once, as subscribeAnswer would give it but without its
  // observer, which costs 3.0% of W1 (bench/machinery.js, instructions a turn: 66,375 through it, 64,390 without)
  if (!isObservable(value) && !isPromiseLike(value)) return finish(subscriber, resultOf(call, value));
  // a Promise without a deadline: straight into the subscriber, no stream layers while it runs
  if (!isObservable(value) && timeoutMs === Infinity) return settle(value, call, context, subscriber);

  const source = fromAnswer<unknown>(value);
  // no deadline: the handler's Observable straight into one relay, no operator layers per call (bench/mcp.js)
  if (timeoutMs === Infinity) return relay(source, call, context, subscriber);
  return relay(
    source.pipe(
      // torn down before it finished (unsubscribe, abort, timeout): tell the handler
      tap({ unsubscribe: () => context.abort() }),
      failAfter(timeoutMs),
    ),
    call,
    undefined,
    subscriber,
  );
}

/**
 * R14: an Observable tool's values as progress, then its result. A `toolProgress` value is a `tool_update`
 * at once. Of the other values the last is the result, and each earlier one becomes a `tool_update` when
 * the next one shows it was not the last; if the tool then fails, the value held back is progress too. A
 * value that is no result is a failure, and its source is torn down. Torn down before the source finished
 * (unsubscribe, abort), `context` is aborted, to tell the handler.
 */
function relay(source: Observable<unknown>, call: ToolCall, context: ToolCallContext | undefined, subscriber: Subscriber<ToolProgress>): TeardownLogic {
  let last: ToolOutput | undefined;
  let ended = false; // the source finished by itself: nothing to abort
  const flush = () => {
    if (last !== undefined) subscriber.next(update(call, last.content, last.details));
    last = undefined;
  };
  const fail = (error: unknown) => {
    flush();
    finish(subscriber, failed(call, error));
  };
  // held before it subscribes, so that a bad value closes a source still inside its synchronous start
  const held = new HeldSubscriber<unknown>({
    next(value) {
      if (isToolProgress(value)) return subscriber.next(update(call, value.content, value.details, value.event));
      let output: ToolOutput;
      try {
        output = toToolOutput(value);
      } catch (error) {
        fail(error);
        held.unsubscribe();
        context?.abort();
        return;
      }
      flush();
      last = output;
    },
    error(error: unknown) {
      ended = true;
      fail(error);
    },
    complete() {
      ended = true;
      finish(subscriber, last === undefined ? settled(toolErrorMessage(call, 'error: tool produced no result')) : resultOf(call, last));
    },
  });
  source.subscribe(held);
  return () => {
    held.unsubscribe();
    if (!ended) context?.abort();
  };
}

/** A Promise tool: its value or its rejection is the result; unsubscribing before it settled aborts its signal. */
function settle(promise: PromiseLike<unknown>, call: ToolCall, context: ToolCallContext, subscriber: Subscriber<ToolProgress>): TeardownLogic {
  let done = false;
  const waiting = subscribeAnswer(promise, {
    next: (value) => {
      done = true;
      finish(subscriber, resultOf(call, value));
    },
    error: (error: unknown) => {
      done = true;
      finish(subscriber, failed(call, error));
    },
    complete: () => undefined,
  });
  return () => {
    waiting?.unsubscribe();
    if (!done) context.abort();
  };
}

/** A call's answer: its one `ToolSettled`, then its end. */
export function finish(subscriber: Subscriber<ToolProgress>, last: ToolSettled): void {
  subscriber.next(last);
  subscriber.complete();
}

/**
 * R16: errors with `tool timed out after N ms` unless the source has finished by then — N as given, also
 * past 2^31 ms. The source is subscribed before the clock, so a tool that answers at the very deadline keeps its answer.
 */
function failAfter<T>(ms: number): OperatorFunction<T, T> {
  return (source) =>
    new Observable<T>((subscriber) => {
      const tool = source.subscribe(subscriber);
      if (subscriber.closed) return tool;
      // past 2^31 ms a plain timer would fire at once: the wait is chained (R16)
      const cancelClock = setLongTimeout(() => subscriber.error(new ToolTimeout(`tool timed out after ${ms} ms`)), ms);
      return () => {
        cancelClock();
        tool.unsubscribe();
      };
    });
}

function update(call: ToolCall, content: string, details: unknown, forwarded?: LoopEvent): ToolUpdate {
  const event: ToolUpdate = { type: 'tool_update', toolCallId: call.id, toolName: call.name, content };
  if (details !== undefined) event.details = details;
  if (forwarded !== undefined) event.event = forwarded; // A1: an agent tool's inner event
  return event;
}
