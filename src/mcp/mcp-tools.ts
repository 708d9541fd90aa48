import { Observable, Subject, concat, debounceTime, map, of, switchMap, takeUntil } from 'rxjs';
import { subscribeAnswer } from '../util/answer.js';
import { isCountOrInfinity, shown } from '../util/values.js';
import type { Tool } from '../types.js';
import type { McpClient, McpToolInfo } from './mcp-client.js';
import { chainHandler, chainListChanged } from './client-hooks.js';
import { MCP_CANCEL_REASON, mcpCall, type McpCallSettings } from './mcp-call.js';
import type { McpElicitHandler } from './mcp-elicit.js';
import { toolNames } from './mcp-names.js';
import type { McpSampling } from './mcp-sampling.js';
import { answerServerRequests } from './server-requests.js';

export interface McpToolsOptions {
  /** Prepended to every name (two servers, one registry). */
  prefix?: string;
  /** Which of the server's tools to offer, as listed. */
  filter?: (tool: McpToolInfo) => boolean;
  /** Per call, reset by each progress notification; default none (the loop's `toolTimeoutMs` still applies). */
  callTimeoutMs?: number;
  /** Per call, whatever the progress: caps a call that sends progress forever; default none. */
  maxTotalTimeoutMs?: number;
  /**
   * M7: answers the server's `elicitation/create` (a form to fill, or a page to open); a request made during a call
   * is first a `tool_update` of it with `details: { elicitation: { message, requestedSchema } }`. Without it, the
   * client's own handler answers, else `decline`. Needs a client created with the `elicitation` capability.
   */
  onElicit?: McpElicitHandler;
  /** M8: the model that answers the server's `sampling/createMessage`. Needs a client created with the `sampling` capability. */
  sampling?: McpSampling;
}

/** `list_changed` notifications that come together are one relisting. */
const LIST_CHANGED_DEBOUNCE_MS = 20;

/**
 * The tools of an MCP server as the loop's `Tool`s (M1). Cold: on subscribe it chains onto the client's
 * `list_changed` handler and `onclose` (the application's own still run; both come off when the subscription
 * ends), lists the tools (every page), emits them, and lists and emits again after each
 * `notifications/tools/list_changed` (a burst is one listing; the old list stands until the new one is in);
 * it completes when the client closes and errors only when a listing fails. Each tool's call is an Observable (M2): progress is `tool_update` at once, cancelling
 * sends `notifications/cancelled` (M3), and failures are results (M4). While subscribed, `onElicit` answers the
 * server's questions to the user (M7: a question asked during a call is first a `tool_update` of it) and
 * `sampling` its requests for a completion (M8), each ended with the call it came with.
 *
 * ```text
 * server:    ^-----c-----c-c--|     c = list_changed, | = the connection closes
 * mcpTools:  --a------b-------c|    a, b, c = Tool[] (c: one listing for the burst)
 * ```
 *
 * ```ts
 * const registry = new ToolRegistry();
 * const run$ = syncTools(registry, mcpTools(client)).pipe(
 *   exhaustMap(() => runEventedToolLoop({ provider, registry, messages })), // starts once the tools are in
 *   takeWhile((event) => event.type !== 'loop_end', true),
 * );
 * ```
 */
export function mcpTools(client: McpClient, options: McpToolsOptions = {}): Observable<Tool[]> {
  for (const method of ['listTools', 'callTool', 'setNotificationHandler'] as const) {
    if (typeof client?.[method] !== 'function') throw new TypeError(`mcpTools: client must be an MCP client with ${method}() (got ${shown(client)})`);
  }
  const { prefix = '', filter, callTimeoutMs = Infinity, maxTotalTimeoutMs = Infinity } = options ?? {};
  if (typeof prefix !== 'string') throw new TypeError(`mcpTools: prefix must be a string (got ${shown(prefix)})`);
  if (filter !== undefined && typeof filter !== 'function') throw new TypeError(`mcpTools: filter must be a function (got ${shown(filter)})`);
  checkMs('callTimeoutMs', callTimeoutMs);
  checkMs('maxTotalTimeoutMs', maxTotalTimeoutMs);
  const { onElicit, sampling } = options ?? {};
  if (onElicit !== undefined && typeof onElicit !== 'function') throw new TypeError(`mcpTools: onElicit must be a function (got ${shown(onElicit)})`);
  if (sampling !== undefined && typeof sampling !== 'function' && typeof (sampling as { provider?: unknown })?.provider !== 'function') {
    throw new TypeError(`mcpTools: sampling must be a Provider or { provider(request) } (got ${shown(sampling)})`);
  }

  return new Observable<Tool[]>((subscriber) => {
    const settings: McpCallSettings = { server: client.getServerVersion?.()?.name ?? 'server', callTimeoutMs, maxTotalTimeoutMs };
    const changed = new Subject<void>();
    const closed = new Subject<void>();
    // M1 (7): hooked only while subscribed, chained onto (never replacing) the application's own
    const unhook = [chainListChanged(client, () => changed.next()), chainHandler(client, 'onclose', () => closed.next())];
    subscriber.add(() => {
      for (const off of unhook) off();
    });
    // M7, M8: a request that relates to no call is given up on when this subscription ends. A client without
    // the capability throws: RxJS makes it this subscription's error, and the hooks above come off
    unhook.push(answerServerRequests(client, { onElicit, sampling, ends: subscriber }));
    const lists = concat(of(undefined), changed.pipe(debounceTime(LIST_CHANGED_DEBOUNCE_MS)))
      .pipe(
        // a newer notification abandons a listing still running
        switchMap(() => listAll(client)),
        map((listed) => {
          const offered = filter === undefined ? listed : listed.filter((tool) => filter(tool));
          const names = toolNames(offered.map((tool) => tool.name), prefix);
          return offered.map((info, index) => toTool(client, info, names[index]!, settings));
        }),
        takeUntil(closed),
      )
      .subscribe(subscriber);
    subscriber.add(lists);
  });
}

function checkMs(option: string, value: unknown): void {
  if (!isCountOrInfinity(value)) {
    throw new RangeError(`mcpTools: ${option} must be an integer >= 1 or Infinity (got ${shown(value)})`);
  }
}

function toTool(client: McpClient, info: McpToolInfo, name: string, settings: McpCallSettings): Tool {
  const description = [info.description, info.title, info.name].find((text) => typeof text === 'string' && text !== '') ?? info.name;
  return {
    name,
    description,
    // R24: only its `required` keys are checked here; the server validates the rest
    inputSchema: info.inputSchema,
    handler: (input: Record<string, unknown>, context) => mcpCall(client, info.name, input, context, settings),
  };
}

/**
 * Every page of `tools/list`, as one array. Unsubscribed while a page is asked for, that request is cancelled
 * (`notifications/cancelled` with {@link MCP_CANCEL_REASON}); a page already answered is never cancelled (M1 (6)).
 */
function listAll(client: McpClient): Observable<McpToolInfo[]> {
  return new Observable<McpToolInfo[]>((subscriber) => {
    // one controller a page: the SDK cancels every request still listening to a signal that aborts
    let asking: AbortController | undefined;
    const page = async (cursor: string | undefined) => {
      asking = new AbortController();
      try {
        return await client.listTools(cursor === undefined ? undefined : { cursor }, { signal: asking.signal });
      } finally {
        asking = undefined;
      }
    };
    const pages = async () => {
      const tools: McpToolInfo[] = [];
      const seen = new Set<string>();
      let cursor: string | undefined;
      do {
        const listed = await page(cursor);
        if (subscriber.closed) return tools;
        tools.push(...listed.tools);
        cursor = listed.nextCursor;
        if (cursor !== undefined && seen.has(cursor)) throw new Error(`mcpTools: the server sent the cursor ${JSON.stringify(cursor)} twice`);
        if (cursor !== undefined) seen.add(cursor);
      } while (cursor !== undefined);
      return tools;
    };
    const listing = subscribeAnswer(pages(), subscriber);
    return () => {
      listing?.unsubscribe();
      asking?.abort(MCP_CANCEL_REASON);
    };
  });
}
