import {
  Observable,
  OperatorFunction,
  Subscriber,
  catchError,
  from,
  identity,
  isObservable,
  map,
  of,
  tap,
  timer,
} from 'rxjs';
import { ToolCallContext } from './tool-call-context.js';
import { type InputCheck, type PendingInputCheck, checkInput, runWhenChecked } from './check-input.js';
import { describeFailure, toToolOutput, toolErrorMessage, toolResultMessage } from './tool-result.js';
import type { Tool, ToolCall, ToolOutput, ToolResultMessage, ToolReturn } from '../types.js';

/** Progress of a running tool: every value of an Observable tool but its last (R14). */
export interface ToolUpdate {
  type: 'tool_update';
  toolCallId: string;
  content: string;
}

/**
 * How a call ended: its result message. Not a loop event (the loop emits the message as `tool_result`);
 * `terminate` stays inside the loop, the model never sees it.
 */
export interface ToolSettled {
  type: 'settled';
  message: ToolResultMessage;
  terminate: boolean;
}

export type ToolProgress = ToolUpdate | ToolSettled;

/**
 * Runs one call of `tool` (`undefined`: the model asked for a tool nobody registered). Cold: the
 * handler runs on subscribe; unsubscribing tears it down and aborts its `signal`. It never errors:
 * every failure becomes a `ToolSettled` with `isError: true` (R9), so it ends with exactly one `ToolSettled`.
 *
 * ```text
 * handler (Observable): --a--b--c|
 * executeTool:          -----u--u--(d|)      u = tool_update(a), tool_update(b); d = tool_done(c)
 * handler throws:       #
 * executeTool:          (d|)                 d = tool_done('error: …', isError)
 * ```
 */
export function executeTool(tool: Tool | undefined, call: ToolCall, timeoutMs = Infinity): Observable<ToolProgress> {
  return new Observable<ToolProgress>((subscriber) => {
    const checked: InputCheck | PendingInputCheck =
      tool === undefined ? { kind: 'rejected', content: `unknown tool: ${call.name}` } : checkInput(tool, call.input);
    if (checked.kind === 'rejected') return finish(subscriber, done(toolErrorMessage(call, checked.content)));
    if (checked.kind === 'failed') return finish(subscriber, failed(call, checked.error));

    const context = new ToolCallContext(call);
    let value: ToolReturn;
    try {
      // R24: the handler gets the validator's output; an asynchronous validator makes the tool an Observable
      value =
        checked.kind === 'valid'
          ? tool!.handler(checked.input, context)
          : runWhenChecked(checked, (input) => tool!.handler(input, context));
    } catch (error) {
      return finish(subscriber, failed(call, error));
    }
    // a plain value: the result, without any stream machinery (most tools are synchronous)
    if (!isObservable(value) && !isPromiseLike(value)) return finish(subscriber, resultOf(call, value));
    // a Promise without a deadline: straight into the subscriber, no stream layers while it runs
    if (!isObservable(value) && timeoutMs === Infinity) return settle(value, call, context, subscriber);

    return (isObservable(value) ? value : from(value))
      .pipe(
        // torn down before it finished (unsubscribe, abort, timeout): tell the handler
        tap({ unsubscribe: () => context.abort() }),
        timeoutMs === Infinity ? identity : failAfter(timeoutMs),
        map(toToolOutput),
        progressThenResult(call),
        catchError((error: unknown) => of(failed(call, error))),
      )
      .subscribe(subscriber);
  });
}

/** A Promise tool: its value or its rejection is the result; unsubscribing before either aborts its signal. */
function settle(promise: PromiseLike<unknown>, call: ToolCall, context: ToolCallContext, subscriber: Subscriber<ToolProgress>) {
  let settled = false;
  try {
    promise.then(
      (value) => {
        settled = true;
        finish(subscriber, resultOf(call, value));
      },
      (error: unknown) => {
        settled = true;
        finish(subscriber, failed(call, error));
      },
    );
  } catch (error) {
    // a thenable whose `then` throws
    settled = true;
    finish(subscriber, failed(call, error));
  }
  return () => {
    if (!settled) context.abort();
  };
}

function finish(subscriber: Subscriber<ToolProgress>, last: ToolSettled): void {
  subscriber.next(last);
  subscriber.complete();
}

function resultOf(call: ToolCall, value: unknown): ToolSettled {
  try {
    const output = toToolOutput(value);
    return done(toolResultMessage(call, output), output.terminate === true);
  } catch (error) {
    return failed(call, error);
  }
}

function failed(call: ToolCall, error: unknown): ToolSettled {
  return done(toolErrorMessage(call, describeFailure(error)));
}

function done(message: ToolResultMessage, terminate = false): ToolSettled {
  return { type: 'settled', message, terminate };
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

/**
 * R16: errors with `tool timed out after N ms` unless the source has finished by then. The source is
 * subscribed before the clock, so a tool that answers at the very deadline keeps its answer.
 */
function failAfter<T>(ms: number): OperatorFunction<T, T> {
  return (source) =>
    new Observable<T>((subscriber) => {
      const tool = source.subscribe(subscriber);
      if (subscriber.closed) return tool;
      const clock = timer(ms).subscribe(() => subscriber.error(new Error(`tool timed out after ${ms} ms`)));
      return () => {
        clock.unsubscribe();
        tool.unsubscribe();
      };
    });
}

/**
 * Every value but the last becomes a `tool_update`; the last, the result. Holding one value back is
 * the only way to know which one is last; if the tool then fails, the held value is progress too.
 */
function progressThenResult(call: ToolCall): OperatorFunction<ToolOutput, ToolProgress> {
  return (source) =>
    new Observable<ToolProgress>((subscriber) => {
      let last: ToolOutput | undefined;
      return source.subscribe({
        next(output) {
          if (last !== undefined) subscriber.next({ type: 'tool_update', toolCallId: call.id, content: last.content });
          last = output;
        },
        error(error: unknown) {
          // the value held back was progress after all: show it before the failure
          if (last !== undefined) subscriber.next({ type: 'tool_update', toolCallId: call.id, content: last.content });
          subscriber.error(error);
        },
        complete() {
          const result = last === undefined ? done(toolErrorMessage(call, 'error: tool produced no result')) : resultOf(call, last);
          finish(subscriber, result);
        },
      });
    });
}
