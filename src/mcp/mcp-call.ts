import { Observable } from 'rxjs';
import { toolProgress } from '../tools/tool-progress.js';
import type { ToolContext, ToolOutput, ToolProgressValue } from '../types.js';
import { LazyAbort } from '../util/lazy-abort.js';
import { errorText } from '../util/values.js';
import type { McpCallResult, McpClient, McpProgress, McpRequestOptions } from './mcp-client.js';
import { mcpOutput } from './mcp-content.js';

/**
 * The reason of every cancellation this library sends (M3): the SDK puts it into `notifications/cancelled`,
 * so a server sees this text and never one of the loop's internal reasons.
 */
export const MCP_CANCEL_REASON = 'rx-tool-loop: the tool call was cancelled';

/** The SDK's `RequestTimeout` code: its own timeouts, and also what it makes of an aborted request. */
const REQUEST_TIMEOUT = -32001;
/** The longest delay `setTimeout` takes: "no timeout" for the SDK, whose default is 60 s (M2: default none). */
const NO_TIMEOUT = 2 ** 31 - 1;

/** How one server's calls are made. */
export interface McpCallSettings {
  /** SERVERNAME in `error: MCP SERVERNAME: MESSAGE` (M4). */
  server: string;
  /** Per call, reset by each progress notification; `Infinity`: none. */
  callTimeoutMs: number;
  /** Per call, whatever the progress; `Infinity`: none. */
  maxTotalTimeoutMs: number;
}

/**
 * M2, M3, M4: one `tools/call` as a cold Observable, made when the loop subscribes it (at `tool_start`).
 * Each progress notification is a `toolProgress` value at once (`MESSAGE`, else `PROGRESS/TOTAL`); the
 * result is the last value. Unsubscribing, or the handler's `signal`, aborts the SDK's request with
 * {@link MCP_CANCEL_REASON}, and the SDK sends `notifications/cancelled`. A JSON-RPC error or a closed
 * connection is an error `MCP SERVERNAME: MESSAGE`, which the loop makes a result (R9). Never sent again.
 *
 * ```text
 * server:      --p--p-----r|        p = notifications/progress, r = the result
 * mcpCall:     --u--u-----(o|)      u = toolProgress('1/3' …), o = the ToolOutput
 * unsubscribe: --u--!               notifications/cancelled { reason: MCP_CANCEL_REASON }
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
    const cancel = () => controller.abort(MCP_CANCEL_REASON);
    signal?.addEventListener('abort', cancel);
    let done = false;
    const options: McpRequestOptions = {
      signal: controller.signal,
      onprogress: (progress) => subscriber.next(toolProgress(progressText(progress), progressDetails(progress))),
      resetTimeoutOnProgress: true,
      timeout: settings.callTimeoutMs === Infinity ? NO_TIMEOUT : settings.callTimeoutMs,
    };
    if (settings.maxTotalTimeoutMs !== Infinity) options.maxTotalTimeout = settings.maxTotalTimeoutMs;
    const answer = (value: ToolOutput) => {
      done = true;
      subscriber.next(value);
      subscriber.complete();
    };
    let sent: Promise<McpCallResult>;
    try {
      sent = client.callTool({ name, arguments: input }, undefined, options);
    } catch (error) {
      sent = Promise.reject(error);
    }
    Promise.resolve(sent).then(
      (result: McpCallResult | null | undefined) => answer(mcpOutput(typeof result === 'object' && result !== null ? result : {})),
      (error: unknown) => {
        // M3: the SDK rejects our own abort as -32001 too: it is an abort, not a timeout
        if (controller.signal.aborted) return answer(aborted());
        const timeout = timeoutOf(error, settings);
        if (timeout !== undefined) return answer({ content: `error: tool timed out after ${timeout} ms`, isError: true });
        done = true;
        subscriber.error(new Error(`MCP ${settings.server}: ${messageOf(error)}`));
      },
    );
    return () => {
      signal?.removeEventListener('abort', cancel);
      if (!done) cancel();
    };
  });
}

function aborted(): ToolOutput {
  return { content: 'error: aborted', isError: true };
}

function progressText({ progress, total, message }: McpProgress): string {
  if (typeof message === 'string' && message !== '') return message;
  return total === undefined ? `${progress}` : `${progress}/${total}`;
}

function progressDetails({ progress, total }: McpProgress): { progress: number; total?: number } {
  return total === undefined ? { progress } : { progress, total };
}

/** The deadline that an SDK timeout (`-32001` while we did not abort) stands for: `maxTotalTimeout` or `callTimeoutMs`. */
function timeoutOf(error: unknown, settings: McpCallSettings): number | undefined {
  const { code, data } = (typeof error === 'object' && error !== null ? error : {}) as { code?: unknown; data?: unknown };
  if (code !== REQUEST_TIMEOUT) return undefined;
  const total = typeof data === 'object' && data !== null && 'maxTotalTimeout' in data;
  return total ? settings.maxTotalTimeoutMs : settings.callTimeoutMs;
}

/** The server's own words: the SDK's `McpError` prefixes its message with `MCP error CODE: ` (twice when a server built on the SDK threw one). */
function messageOf(error: unknown): string {
  return errorText(error).replace(/^(?:MCP error -?\d+: )+/, '');
}
