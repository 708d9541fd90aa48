import { Observable, Subscription } from 'rxjs';
import { toolProgress } from '../tools/tool-progress.js';
import type { ToolContext, ToolOutput, ToolProgressValue } from '../types.js';
import { onAbort } from '../util/abort-signal.js';
import { LazyAbort } from '../util/lazy-abort.js';
import { MAX_TIMER_MS, setLongTimeout } from '../util/long-timeout.js';
import { subscribeAnswer } from '../util/answer.js';
import { errorText } from '../util/values.js';
import type { McpCallResult, McpClient, McpProgress, McpRequestOptions } from './mcp-client.js';
import { chainHandler } from './client-hooks.js';
import { mcpOutput } from './mcp-content.js';
import { type CallInProgress, inCallContext } from './related-call.js';

/**
 * The reason of every cancellation this library sends (M3): the SDK puts it into `notifications/cancelled`,
 * so a server sees this text and never one of the loop's internal reasons.
 */
export const MCP_CANCEL_REASON = 'rx-tool-loop: the tool call was cancelled';

/**
 * The timeout the SDK is given: the longest a timer takes. The SDK's own timer (60 s by default) cancels with
 * a reason of its own, a larger value overflows into 1 ms, and its `maxTotalTimeout` is looked at only when
 * progress comes; so the library keeps every deadline itself, on the long-timeout helper, and the SDK's timer
 * (restarted by each progress notification) fires only after some 24.8 silent days.
 */
const SDK_TIMEOUT = MAX_TIMER_MS;

/** What the SDK's Streamable HTTP transport reports on `onerror` when a stream drops: it fails no request for it. */
const STREAM_LOST = /^SSE stream disconnected\b/;

/** How one server's calls are made. */
export interface McpCallSettings {
  /** SERVERNAME in `error: MCP SERVERNAME: MESSAGE` (M4). */
  server: string;
  /** Per call, reset by each progress notification; `Infinity`: none. */
  callTimeoutMs: number;
  /** Per call from its start, whatever the progress; `Infinity`: none. */
  maxTotalTimeoutMs: number;
}

/**
 * M2, M3, M4: one `tools/call` as a cold Observable, made when the loop subscribes it (at `tool_start`).
 * Each progress notification is a `toolProgress` value at once (`MESSAGE`, else `PROGRESS/TOTAL`) and
 * restarts `callTimeoutMs`; `maxTotalTimeoutMs` counts from the start. The result is the last value.
 * Unsubscribing, the handler's `signal` or a deadline aborts the SDK's request with {@link MCP_CANCEL_REASON},
 * and the SDK sends `notifications/cancelled`. A JSON-RPC error (the server's own -32001 too), a closed
 * connection or a dropped stream is an error `MCP SERVERNAME: MESSAGE`, which the loop makes a result (R9).
 * Never sent again.
 *
 * ```text
 * server:      --p--p-----r|        p = notifications/progress, r = the result
 * mcpCall:     --u--u-----(o|)      u = toolProgress('1/3' …), o = the ToolOutput
 * unsubscribe: --u--!               notifications/cancelled { reason: MCP_CANCEL_REASON }
 * deadline:    --u--u---T           T = (error: tool timed out after N ms), and notifications/cancelled
 * ```
 *
 * ```ts
 * mcpCall(client, 'read_file', { path: 'a.txt' }, context, { server: 'fs', callTimeoutMs: 5_000, maxTotalTimeoutMs: 60_000 });
 * ```
 */
export function mcpCall(
  client: McpClient,
  name: string,
  input: Record<string, unknown>,
  context: ToolContext,
  settings: McpCallSettings,
): Observable<ToolOutput | ToolProgressValue> {
  return new Observable<ToolOutput | ToolProgressValue>((subscriber) => {
    // The loop's own context aborts only when the loop unsubscribes this Observable, which cancels the
    // call anyway; its signal is made on first read, and an AbortSignal costs more than an in-memory
    // round trip (bench/mcp.js), so only a caller's own context is listened to.
    const signal = context instanceof LazyAbort ? undefined : context.signal;
    // the caller gave up before the call was made: nothing is sent
    if (signal?.aborted === true) {
      subscriber.next(aborted());
      subscriber.complete();
      return undefined;
    }
    const controller = new AbortController();
    /** What the call holds while it runs (timers, listeners, its server's requests): closed once it has ended. */
    const running = new Subscription();
    const end = () => running.unsubscribe();
    // the SDK sends notifications/cancelled on this abort, with this reason: never one of the SDK's or the loop's
    const cancel = () => controller.abort(MCP_CANCEL_REASON);
    const answer = (value: ToolOutput) => {
      if (running.closed) return;
      end();
      subscriber.next(value);
      subscriber.complete();
    };
    const fail = (message: string) => {
      if (running.closed) return;
      end();
      subscriber.error(new Error(`MCP ${settings.server}: ${message}`));
    };
    const giveUp = (outcome: () => void) => () => {
      if (running.closed) return;
      cancel();
      outcome();
    };

    if (signal !== undefined) running.add(onAbort(signal, giveUp(() => answer(aborted()))));
    const { callTimeoutMs, maxTotalTimeoutMs } = settings;
    let idle: (() => void) | undefined;
    const restartIdle = () => {
      idle?.();
      idle = setLongTimeout(giveUp(() => answer(timedOut(callTimeoutMs))), callTimeoutMs);
    };
    if (callTimeoutMs !== Infinity) {
      restartIdle();
      running.add(() => idle?.());
    }
    if (maxTotalTimeoutMs !== Infinity) running.add(setLongTimeout(giveUp(() => answer(timedOut(maxTotalTimeoutMs))), maxTotalTimeoutMs));
    const onprogress = (progress: McpProgress) => {
      if (running.closed) return;
      if (callTimeoutMs !== Infinity) restartIdle();
      subscriber.next(toolProgress(progressText(progress), progressDetails(progress)));
    };
    let token: unknown;
    running.add(
      chainHandler(client, 'onerror', (error) => {
        const message = errorText(error);
        // M4: a Streamable HTTP stream that drops fails no request in the SDK: the call would run forever
        if (STREAM_LOST.test(message)) return giveUp(() => fail(message))();
        // the SDK dropped this call's progress, which came in the same read as its response (upstream): it is still ours
        const late = token === undefined ? undefined : droppedProgress(message, token);
        if (late !== undefined) onprogress(late);
      }),
    );

    const options: McpRequestOptions = { signal: controller.signal, onprogress, resetTimeoutOnProgress: true, timeout: SDK_TIMEOUT };
    // M7, M8: a server's request read from this call's stream is answered in this context, and ends with the call
    const inProgress: CallInProgress = {
      call: context.call,
      show: (value) => {
        if (!running.closed) subscriber.next(value);
      },
      ends: running,
    };
    let sent: Promise<McpCallResult>;
    try {
      ({ sent, token } = sentWithToken(client, () => inCallContext(inProgress, () => client.callTool({ name, arguments: input }, undefined, options))));
    } catch (error) {
      sent = Promise.reject(error);
    }
    // `answer` and `fail` take the first outcome only: the teardown below needs nothing of this subscription
    subscribeAnswer<McpCallResult | null | undefined>(sent, {
      next: (result) => answer(mcpOutput(typeof result === 'object' && result !== null ? result : {})),
      // M3: the SDK rejects our own abort as -32001 too: it is an abort, not a timeout; any other -32001 is the server's (M4)
      error: (error: unknown) => (controller.signal.aborted ? answer(aborted()) : fail(serverMessage(error))),
      complete: () => undefined,
    });
    return () => {
      if (!running.closed) giveUp(end)();
    };
  });
}

function aborted(): ToolOutput {
  return { content: 'error: aborted', isError: true };
}

/** R16's text, for `callTimeoutMs` and `maxTotalTimeoutMs` as for the loop's `toolTimeoutMs`. */
function timedOut(ms: number): ToolOutput {
  return { content: `error: tool timed out after ${ms} ms`, isError: true };
}

function progressText({ progress, total, message }: McpProgress): string {
  if (typeof message === 'string' && message !== '') return message;
  return total === undefined ? `${progress}` : `${progress}/${total}`;
}

function progressDetails({ progress, total }: McpProgress): { progress: number; total?: number } {
  return total === undefined ? { progress } : { progress, total };
}

/** What the SDK reports on `onerror` for a progress notification whose call it no longer waits for (1.32). */
const DROPPED_PROGRESS = /^Received a progress notification for an unknown token: (\{.*\})$/s;

/** The progress of the call whose progress token is `token`, if `message` is the SDK's report that it dropped it. */
function droppedProgress(message: string, token: unknown): McpProgress | undefined {
  const json = DROPPED_PROGRESS.exec(message)?.[1];
  if (json === undefined) return undefined;
  let params: { progressToken?: unknown; progress?: unknown; total?: unknown; message?: unknown } | undefined;
  try {
    params = (JSON.parse(json) as { params?: typeof params }).params;
  } catch {
    return undefined;
  }
  if (params === undefined || params.progressToken !== token || typeof params.progress !== 'number') return undefined;
  return {
    progress: params.progress,
    ...(typeof params.total === 'number' ? { total: params.total } : {}),
    ...(typeof params.message === 'string' ? { message: params.message } : {}),
  };
}

/**
 * Makes the call and reads the progress token the SDK gave its `tools/call` request: the SDK's client sends the
 * request through its `transport` before `callTool` returns, and the token is that request's own id, known
 * nowhere else. A client that shows no transport gives no token (a progress the SDK drops then stays dropped).
 */
function sentWithToken(client: McpClient, call: () => Promise<McpCallResult>): { sent: Promise<McpCallResult>; token: unknown } {
  const transport = (client as unknown as { transport?: unknown }).transport as { send?: unknown } | null | undefined;
  if (typeof transport !== 'object' || transport === null || typeof transport.send !== 'function') return { sent: call(), token: undefined };
  const target = transport as { send: (message: unknown, ...rest: unknown[]) => unknown };
  const own = Object.prototype.hasOwnProperty.call(target, 'send');
  const send = target.send;
  let token: unknown;
  target.send = function (this: unknown, message: unknown, ...rest: unknown[]) {
    const request = message as { method?: unknown; params?: { _meta?: { progressToken?: unknown } } } | null;
    if (token === undefined && request?.method === 'tools/call') token = request.params?._meta?.progressToken;
    return send.call(this, message, ...rest);
  };
  try {
    const sent = call();
    return { sent, token };
  } finally {
    // only for the synchronous moment of the call: the transport is left as it was
    if (own) target.send = send;
    else delete (target as { send?: unknown }).send;
  }
}

/** The server's own words: the SDK's `McpError` prefixes its message with `MCP error CODE: ` (twice when a server built on the SDK threw one). */
function serverMessage(error: unknown): string {
  return errorText(error).replace(/^(?:MCP error -?\d+: )+/, '');
}
