/**
 * MCP under faults (M2–M4 exactly), against a Streamable HTTP server of the spec's own on 127.0.0.1 (the SDK's
 * low-level `Server`, one per session), which records every message it receives: a server that dies mid-call
 * (its sockets destroyed), a silent call under `maxTotalTimeoutMs`, `callTimeoutMs: 2 ** 31`, a -32001 of
 * the server's own, the reason of every cancellation, listings that are answered, and the hooks `mcpTools`
 * puts on a client. The same deadlines in virtual time, on their frames: mcp-call-timers.spec.ts.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  type JSONRPCMessage,
  ListToolsRequestSchema,
  McpError,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Subject, filter, firstValueFrom, lastValueFrom, take, tap, toArray } from 'rxjs';
import { type LoopEvent, type Tool, ToolRegistry, runEventedToolLoop, scriptedProvider } from 'rx-tool-loop';
import { MCP_CANCEL_REASON, type McpToolsOptions, mcpTools } from 'rx-tool-loop/mcp';
import { answerTurn, call, loopEndOf, only, toolTurn } from '../support/events';
import { type HttpMcpServer, newClient, startHttp } from './support/servers';
import { until } from '../support/until';

jest.setTimeout(20_000);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const TOOLS = ['wait', 'slow', 'gateway', 'beat', 'spare1', 'spare2'];

/** What the servers of one `startHttp` saw, shared by their sessions. */
function faultServers() {
  const seen = {
    /** The `notifications/cancelled` received, in order. */
    cancels: [] as { requestId: unknown; reason: unknown }[],
    /** The requests the server saw its signal abort for, and the reason. */
    aborts: [] as { name: string; reason: unknown }[],
    /** Listings begun (first pages). */
    listings: 0,
    hangListing: false,
    started: new Subject<string>(),
    servers: [] as Server[],
  };
  const untilAborted = (name: string, signal: AbortSignal, answer: unknown) =>
    new Promise<never>((resolve) =>
      signal.addEventListener('abort', () => {
        seen.aborts.push({ name, reason: signal.reason });
        resolve(answer as never);
      }),
    );
  const make = () => {
    const server = new Server({ name: 'faults', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
    server.setRequestHandler(ListToolsRequestSchema, async (request, extra) => {
      const from = Number(request.params?.cursor ?? 0);
      if (from === 0) seen.listings++;
      if (seen.hangListing) {
        seen.started.next('tools/list');
        return untilAborted('tools/list', extra.signal, { tools: [] });
      }
      const page = TOOLS.slice(from, from + 2).map((name) => ({ name, inputSchema: { type: 'object' as const } }));
      return { tools: page, ...(from + 2 < TOOLS.length ? { nextCursor: String(from + 2) } : {}) };
    });
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const { name } = request.params;
      seen.started.next(name);
      if (name === 'slow') {
        await sleep(50);
        return { content: [{ type: 'text', text: 'slow done' }] };
      }
      // a JSON-RPC error of the server's own that has the SDK's timeout code
      if (name === 'gateway') throw new McpError(-32001, 'upstream gateway timed out');
      // one progress notification (the response's event stream is open), then silence
      const token = request.params._meta?.progressToken;
      if (name === 'beat' && token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: 1 } });
      return untilAborted(name, extra.signal, { content: [{ type: 'text', text: 'too late' }] });
    });
    seen.servers.push(server);
    return server;
  };
  const received = (message: JSONRPCMessage) => {
    if ('method' in message && message.method === 'notifications/cancelled') {
      const params = message.params as { requestId: unknown; reason?: unknown };
      seen.cancels.push({ requestId: params.requestId, reason: params.reason });
    }
  };
  return { seen, make, received };
}

async function toolsOf(client: Client, options?: McpToolsOptions): Promise<ToolRegistry> {
  const registry = new ToolRegistry();
  for (const tool of await firstValueFrom(mcpTools(client, options))) registry.register(tool);
  return registry;
}

/** A loop whose scripted model calls `name` once and then answers `after`. */
function loopCalling(registry: ToolRegistry, name: string, extra: { signal?: AbortSignal; toolTimeoutMs?: number } = {}) {
  const provider = scriptedProvider([toolTurn(call(name, {}, 'c1')), answerTurn('after')]);
  return runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'go' }], ...extra });
}

describe('MCP under faults (Streamable HTTP on 127.0.0.1)', () => {
  const { seen, make, received } = faultServers();
  let http: HttpMcpServer;
  let client: Client;
  let registry: ToolRegistry;

  beforeAll(async () => {
    http = await startHttp(make, received);
    client = await http.connect();
    registry = await toolsOf(client);
  });
  afterAll(() => http?.close());
  beforeEach(() => {
    seen.cancels.length = 0;
    seen.aborts.length = 0;
  });

  it('M4 (1): a Streamable HTTP server that dies mid-call (its sockets destroyed) ends the call at once, without toolTimeoutMs: error: MCP NAME: MESSAGE, and the loop goes on', async () => {
    const dying = faultServers();
    const server = await startHttp(dying.make, dying.received);
    try {
      const tools = await toolsOf(await server.connect());
      // it dies once its progress has come: the call's event stream is open and drops
      const events: LoopEvent[] = await lastValueFrom(loopCalling(tools, 'beat').pipe(tap((event) => event.type === 'tool_update' && server.die()), toArray()));
      const [result] = only(events, 'tool_result');
      expect(result!.message.content).toMatch(/^error: MCP faults: SSE stream disconnected: \S/);
      expect(result!.message.isError).toBe(true);
      expect(loopEndOf(events)).toMatchObject({ reason: 'stop', assistant: { content: 'after' } });
    } finally {
      await server.close();
    }
  });

  it('M2 (2): maxTotalTimeoutMs ends a silent call (no progress at all) with R16\'s text, and the server sees notifications/cancelled', async () => {
    const capped = await toolsOf(client, { maxTotalTimeoutMs: 150 });
    const result = await firstValueFrom(capped.run({ id: 'c1', name: 'wait', input: {} }));
    expect(result).toMatchObject({ content: 'error: tool timed out after 150 ms', isError: true });
    await until(() => seen.aborts.length === 1);
    expect(seen.aborts).toEqual([{ name: 'wait', reason: MCP_CANCEL_REASON }]);
    expect(seen.cancels.map((cancel) => cancel.reason)).toEqual([MCP_CANCEL_REASON]);
  });

  it('M3 (3): callTimeoutMs: 2 ** 31 is a long timeout, not an instant one: the call gets its answer, and no timer overflows', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      for (const ms of [2 ** 31, 2 ** 40]) {
        const long = await toolsOf(client, { callTimeoutMs: ms });
        const result = await firstValueFrom(long.run({ id: 'c1', name: 'slow', input: {} }));
        expect(result).toMatchObject({ content: 'slow done', isError: false });
      }
      await sleep(10); // process warnings are emitted on a later tick
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).not.toContain('TimeoutOverflowWarning');
    expect(seen.cancels).toEqual([]);
  });

  it('M4 (4): a server\'s own JSON-RPC error with code -32001 is the server\'s: error: MCP NAME: upstream gateway timed out', async () => {
    const events = await lastValueFrom(loopCalling(registry, 'gateway').pipe(toArray()));
    expect(only(events, 'tool_result')[0]!.message).toMatchObject({ content: 'error: MCP faults: upstream gateway timed out', isError: true });
    expect(loopEndOf(events).reason).toBe('stop');
    const timed = await toolsOf(client, { callTimeoutMs: 5_000, maxTotalTimeoutMs: 10_000 });
    expect(await firstValueFrom(timed.run({ id: 'c2', name: 'gateway', input: {} }))).toMatchObject({ content: 'error: MCP faults: upstream gateway timed out' });
  });

  it('M3 (5): every cancellation the library sends carries MCP_CANCEL_REASON, timeouts included', async () => {
    const waitStarted = () => firstValueFrom(seen.started.pipe(filter((name) => name === 'wait')));
    // unsubscribing
    let started = waitStarted();
    const subscription = loopCalling(registry, 'wait').subscribe();
    await started;
    subscription.unsubscribe();
    // options.signal
    const controller = new AbortController();
    started = waitStarted();
    const aborted = lastValueFrom(loopCalling(registry, 'wait', { signal: controller.signal }));
    await started;
    controller.abort(new Error('the application\'s own reason'));
    await aborted;
    // the loop's toolTimeoutMs, callTimeoutMs, maxTotalTimeoutMs
    await lastValueFrom(loopCalling(registry, 'wait', { toolTimeoutMs: 50 }));
    await firstValueFrom((await toolsOf(client, { callTimeoutMs: 50 })).run({ id: 'c1', name: 'wait', input: {} }));
    await firstValueFrom((await toolsOf(client, { maxTotalTimeoutMs: 50 })).run({ id: 'c1', name: 'wait', input: {} }));
    // a listing given up on
    seen.hangListing = true;
    try {
      const listing = firstValueFrom(seen.started.pipe(filter((name) => name === 'tools/list')));
      const lists = mcpTools(client).subscribe();
      await listing;
      lists.unsubscribe();
      await until(() => seen.cancels.length === 6);
    } finally {
      seen.hangListing = false;
    }
    expect(seen.cancels.map((cancel) => cancel.reason)).toEqual(Array(6).fill(MCP_CANCEL_REASON));
    await until(() => seen.aborts.length === 6);
    expect(seen.aborts.map((abort) => abort.name).sort()).toEqual(['tools/list', 'wait', 'wait', 'wait', 'wait', 'wait']);
  });

  it('M1 (6): no notifications/cancelled follows a listing that was answered (every page of it)', async () => {
    const listings = seen.listings;
    const tools = await firstValueFrom(mcpTools(client)); // three pages, then unsubscribed
    expect(tools.map((tool: Tool) => tool.name)).toEqual(TOOLS);
    await lastValueFrom(mcpTools(client, { filter: (tool) => tool.name === 'slow' }).pipe(take(1)));
    // a round trip after them: a cancellation sent before it has arrived by now
    await firstValueFrom(registry.run({ id: 'c1', name: 'slow', input: {} }));
    await sleep(50);
    expect(seen.listings - listings).toBe(2);
    expect(seen.cancels).toEqual([]);
  });

  it('M1 (7): mcpTools is cold: it installs nothing until subscribed, chains to the application\'s own list_changed handler and onclose, and takes its hooks off', async () => {
    const own = newClient();
    let heard = 0;
    let closes = 0;
    own.setNotificationHandler(ToolListChangedNotificationSchema, () => void heard++);
    const onclose = () => void closes++;
    own.onclose = onclose;
    await http.connect(own);
    const server = seen.servers.at(-1)!;
    const handler = () => (own as unknown as { _notificationHandlers: Map<string, unknown> })._notificationHandlers.get('notifications/tools/list_changed');
    const installed = handler();
    /** Sends list_changed until the client has heard one more (the notification stream opens after connect). */
    const notify = async () => {
      const before = heard;
      while (heard === before) {
        await server.sendToolListChanged();
        await sleep(20);
      }
    };

    const listings = seen.listings;
    const tools$ = mcpTools(own);
    await notify();
    expect([own.onclose, handler(), seen.listings - listings]).toEqual([onclose, installed, 0]); // nothing installed, nothing listed

    const one: string[][] = [];
    const two: string[][] = [];
    const first = tools$.subscribe((tools) => one.push(tools.map((tool) => tool.name)));
    const second = mcpTools(own, { prefix: 'b_' }).subscribe((tools) => two.push(tools.map((tool) => tool.name)));
    await until(() => one.length === 1 && two.length === 1);
    await notify(); // the application's handler hears it, and both subscriptions list again
    await until(() => one.length === 2 && two.length === 2);
    first.unsubscribe(); // its hook sits under the second's: it passes through from now on
    await notify();
    await until(() => two.length === 3);
    expect(one.length).toBe(2);
    second.unsubscribe();
    expect([own.onclose, handler()]).toEqual([onclose, installed]); // all hooks off: the application's own are back

    const listed: unknown[] = [];
    const closing = lastValueFrom(mcpTools(own).pipe(tap((tools) => listed.push(tools)), toArray()));
    await until(() => listed.length === 1);
    await own.close();
    expect((await closing).length).toBe(1); // completed when the client closed
    expect(closes).toBe(1);
    expect(own.onclose).toBe(onclose);
  });
});

/**
 * A server on the other end of a transport that answers each request in one read: for `tools/call`, its progress
 * notifications and its response arrive together, as a fast server's often do (and a stale progress of another
 * request with them).
 */
class OneReadTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!('method' in message) || !('id' in message)) return;
    const answer = (result: Record<string, unknown>): JSONRPCMessage => ({ jsonrpc: '2.0', id: message.id, result });
    const progress = (progressToken: unknown, progress: number, total: number): JSONRPCMessage => ({
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params: { progressToken: progressToken as string, progress, total },
    });
    let read: JSONRPCMessage[] = [];
    if (message.method === 'initialize') {
      read = [answer({ protocolVersion: (message.params as { protocolVersion: string }).protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'one-read', version: '1.0.0' } })];
    } else if (message.method === 'tools/list') {
      read = [answer({ tools: [{ name: 'quick', inputSchema: { type: 'object' } }] })];
    } else if (message.method === 'tools/call') {
      const token = (message.params as { _meta?: { progressToken?: unknown } })._meta?.progressToken;
      read = [progress(token, 1, 2), progress(9999, 1, 1), progress(token, 2, 2), answer({ content: [{ type: 'text', text: 'done' }] })];
    }
    setImmediate(() => {
      for (const each of read) this.onmessage?.(each);
    });
  }
}

describe('a progress notification in the same read as its response (MCP SDK 1.32, upstream)', () => {
  it('M2 (8): the SDK drops it and reports it on onerror; the adapter keeps it: a tool_update before the result, the application still hears the report', async () => {
    const client = newClient();
    const reports: string[] = [];
    client.onerror = (error) => void reports.push(error.message);
    await client.connect(new OneReadTransport());
    try {
      const registry = await toolsOf(client);
      const events = await lastValueFrom(loopCalling(registry, 'quick').pipe(toArray()));
      const types = events.map((event) => event.type);
      expect(only(events, 'tool_update').map((event) => event.content)).toEqual(['1/2', '2/2']); // not the other request's
      expect(types.lastIndexOf('tool_update')).toBeLessThan(types.indexOf('tool_result'));
      expect(only(events, 'tool_result')[0]!.message.content).toBe('done');
      expect(reports.filter((report) => report.startsWith('Received a progress notification for an unknown token'))).toHaveLength(3);
    } finally {
      await client.close();
    }
  });
});
