import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { McpClient, McpRequestExtra, McpServerRequestResult, McpServerRequestSchema } from './mcp-client.js';

/**
 * M1, M4: how the adapter listens to a client it does not own. The SDK keeps one `onclose`, one `onerror` and
 * one handler per notification, so a hook is chained onto what is there — the application's own handler
 * still runs, first — and taken off when its subscription ends. A hook that ends while another was chained
 * on top of it stays in the chain as a pass-through, and the next chaining skips it, so the chain never holds
 * more of them than hooks are live at once. Nothing is kept outside the client.
 */

/** The mark of a hook of ours: what it chains to and whether it still listens. */
const LINK = Symbol('rx-tool-loop/mcp hook');

interface Link {
  previous: Handler | undefined;
  live: boolean;
}

type Handler = ((...args: unknown[]) => unknown) & { [LINK]?: Link };

/** `handler`, or what it passes through to while it is a hook of ours that no longer listens. */
function live(handler: Handler | undefined): Handler | undefined {
  let current = handler;
  while (current?.[LINK] !== undefined && !current[LINK].live) current = current[LINK].previous;
  return current;
}

function hookOn(previous: Handler | undefined, listener: (...args: unknown[]) => void): { hook: Handler; link: Link } {
  const link: Link = { previous: live(previous), live: true };
  const hook: Handler = function (this: unknown, ...args: unknown[]) {
    try {
      return link.previous?.apply(this, args);
    } finally {
      if (link.live) listener(...args);
    }
  };
  hook[LINK] = link;
  return { hook, link };
}

/** Chains `listener` onto `client.onclose` or `client.onerror`; returns what takes it off. */
export function chainHandler(client: McpClient, key: 'onclose' | 'onerror', listener: (...args: unknown[]) => void): () => void {
  const slots = client as unknown as Record<typeof key, Handler | undefined>;
  const { hook, link } = hookOn(slots[key], listener);
  slots[key] = hook;
  return () => {
    link.live = false;
    if (slots[key] === hook) slots[key] = live(link.previous);
  };
}

/** The SDK client's table of notification or request handlers (a private field: the SDK has no getter for a handler). */
function handlerTable(client: McpClient, field: '_notificationHandlers' | '_requestHandlers' = '_notificationHandlers'): Map<string, Handler> | undefined {
  const table = (client as unknown as Record<typeof field, unknown>)[field];
  return table instanceof Map ? (table as Map<string, Handler>) : undefined;
}

const LIST_CHANGED = 'notifications/tools/list_changed';

/**
 * Chains `listener` onto the client's `notifications/tools/list_changed` handler (M1: the application's own
 * handler, or the one the SDK's `listChanged` option installed, still runs). A client that is not the SDK's
 * shows no handler to chain to: there, `listener` is installed as the handler while subscribed.
 */
export function chainListChanged(client: McpClient, listener: () => void): () => void {
  const table = handlerTable(client);
  const { hook, link } = hookOn(table?.get(LIST_CHANGED), () => listener());
  client.setNotificationHandler(ToolListChangedNotificationSchema, (notification) => hook(notification));
  // the SDK stores a wrapper of its own: mark it, so that a later hook sees through it once it ends
  const installed = table?.get(LIST_CHANGED);
  if (installed !== undefined) installed[LINK] = link;
  return () => unhook(table, LIST_CHANGED, installed, link);
}

/** A request handler of the SDK's table: the request (checked by its schema) and the SDK's `extra`. */
export type RequestHandler = (request: unknown, extra: McpRequestExtra) => Promise<McpServerRequestResult>;

/**
 * M7, M8: installs `answer` as the client's handler of `method`'s requests (checked by `schema`) while subscribed,
 * given the handler it replaced (the application's own, or the SDK's), to pass on what is not its to answer. Taken off, the handler
 * under it is back. A request has one answer, so unlike a notification it is answered by one handler only.
 */
export function chainRequestHandler(
  client: McpClient,
  method: 'elicitation/create' | 'sampling/createMessage',
  schema: McpServerRequestSchema,
  answer: (request: unknown, extra: McpRequestExtra, previous: RequestHandler | undefined) => Promise<McpServerRequestResult>,
): () => void {
  const table = handlerTable(client, '_requestHandlers');
  const link: Link = { previous: live(table?.get(method)), live: true };
  client.setRequestHandler?.(schema, (request: unknown, extra: McpRequestExtra) => {
    const previous = live(link.previous) as RequestHandler | undefined;
    if (link.live) return answer(request, extra, previous);
    // a client of another make keeps the handler after the subscription: it passes on, as a hook that ended does
    return previous === undefined ? Promise.reject(new Error(`rx-tool-loop: no handler of ${method} is listening`)) : previous(request, extra);
  });
  const installed = table?.get(method);
  if (installed !== undefined) installed[LINK] = link;
  return () => unhook(table, method, installed, link);
}

/**
 * Takes a hook off: it ends (a later hook sees through it), and when it is still the table's handler of `key`, the
 * live handler under it is put back (none: the key is taken out).
 */
function unhook(table: Map<string, Handler> | undefined, key: string, installed: Handler | undefined, link: Link): void {
  link.live = false;
  if (table === undefined || table.get(key) !== installed) return;
  const previous = live(link.previous);
  if (previous === undefined) table.delete(key);
  else table.set(key, previous);
}
