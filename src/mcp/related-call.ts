import type { Subscription } from 'rxjs';
import type { ToolCall, ToolProgressValue } from '../types.js';

/**
 * M7, M8: which tool call a server's request relates to. The MCP SDK's client tells a request handler nothing of
 * it: on Streamable HTTP the relation is the stream — a server sends a request that relates to a `tools/call`
 * (the SDK's `extra.sendRequest`, `relatedRequestId`) on that call's own event stream, and one that relates to
 * nothing on the standalone stream. Each call is made inside an async context of its own (Node's
 * `AsyncLocalStorage`); the SDK reads a call's stream in the context that sent the call, and so runs the handler
 * of a request read from that stream in it too. Where nothing carries a context (stdio, a runtime without
 * `AsyncLocalStorage`) a request relates to no call.
 */

/** A `tools/call` while it runs, as a server's request related to it sees it (M7, M8). */
export interface CallInProgress {
  /** The loop's call: id, name and input as the model sent them. */
  readonly call: ToolCall;
  /** Shows `value` as a `tool_update` of the call, while it runs. */
  show(value: ToolProgressValue): void;
  /** Closed when the call ends (answered, failed, unsubscribed or timed out): a teardown added then runs at once. */
  readonly ends: Pick<Subscription, 'add' | 'remove'>;
}

interface ContextStorage<T> {
  run<R>(store: T, callback: () => R): R;
  getStore(): T | undefined;
}

type AsyncHooks = { AsyncLocalStorage: new <T>() => ContextStorage<T> };

/** `node:async_hooks` where the runtime has it (Node ≥ 20.16, Deno, Bun), without a static import that a browser build would trip on. */
function asyncHooks(): AsyncHooks | undefined {
  const runtime = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  try {
    return runtime?.getBuiltinModule?.('node:async_hooks') as AsyncHooks | undefined;
  } catch {
    return undefined;
  }
}

/** The context a call runs in: a value the running code reads, not a table kept by the module (R34). */
const storage: ContextStorage<CallInProgress> | undefined = (() => {
  const hooks = asyncHooks();
  return hooks === undefined ? undefined : new hooks.AsyncLocalStorage<CallInProgress>();
})();

/** Runs `send` (the synchronous part of sending a call) in `call`'s context. */
export function inCallContext<R>(call: CallInProgress, send: () => R): R {
  return storage === undefined ? send() : storage.run(call, send);
}

/** The call whose context the running code is in: only {@link inCallContext} writes this storage. */
export function relatedCall(): CallInProgress | undefined {
  return storage?.getStore();
}
