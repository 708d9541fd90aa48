/**
 * M2–M4 on a real SDK client and server, linked in memory: progress, content, isError, cancellation that
 * reaches the server (with the library's own reason), timeouts, JSON-RPC errors and a server that goes away.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { Subject, filter, firstValueFrom, lastValueFrom, take, tap, toArray } from 'rxjs';
import { type LoopEvent, type Tool, ToolRegistry, runEventedToolLoop, scriptedProvider } from 'rx-tool-loop';
import { MCP_CANCEL_REASON, mcpTools, type McpToolsOptions } from 'rx-tool-loop/mcp';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { answerTurn, call, loopEndOf, only, toolTurn } from '../support/events';
import { inMemory } from './support/servers';
import { until } from '../support/until';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The spec's server: what each call saw (its abort and the reason) and a gate the progress tool waits on. */
function unitServer() {
  const seen: { name: string; aborted: boolean; reason: unknown }[] = [];
  const started = new Subject<string>();
  const gate = { open: () => {}, wait: Promise.resolve() };
  const server = new Server({ name: 'unit', version: '1.0.0' }, { capabilities: { tools: {} } });
  const tool = (name: string) => ({ name, inputSchema: { type: 'object' as const } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: ['progress', 'mixed', 'structured', 'failing', 'jsonrpc', 'hang', 'die', 'ticking', 'forever'].map(tool),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name } = request.params;
    const token = request.params._meta?.progressToken;
    const progress = (progress: number, total?: number, message?: string) =>
      extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token!, progress, ...(total === undefined ? {} : { total }), ...(message === undefined ? {} : { message }) } });
    const record = () => seen.push({ name, aborted: extra.signal.aborted, reason: extra.signal.reason });
    started.next(name);
    switch (name) {
      case 'progress':
        await progress(1, 3);
        await gate.wait; // the test opens it once it has seen the first tool_update: progress comes at once
        await progress(2, 3, 'halfway there');
        await progress(3);
        return { content: [{ type: 'text', text: 'done' }] };
      case 'mixed':
        return {
          content: [
            { type: 'text', text: 'line one' },
            { type: 'image', mimeType: 'image/png', data: PNG },
            { type: 'audio', mimeType: 'audio/wav', data: 'UklGRg==' },
            { type: 'resource', resource: { uri: 'file:///notes.txt', mimeType: 'text/plain', text: 'notes' } },
            { type: 'resource_link', uri: 'file:///big.csv', name: 'big.csv' },
            { type: 'text', text: 'line two' },
          ],
        };
      case 'structured':
        return { content: [], structuredContent: { temperature: 21 } };
      case 'failing':
        return { content: [{ type: 'text', text: 'no such city' }], isError: true };
      case 'jsonrpc':
        throw new McpError(ErrorCode.InvalidParams, 'city must be a string');
      case 'die':
        setTimeout(() => void server.close(), 5);
        return new Promise(() => {});
      case 'ticking':
        for (let i = 1; i <= 5; i++) {
          await sleep(250);
          await progress(i, 5);
        }
        return { content: [{ type: 'text', text: 'ticked' }] };
      default: // hang, forever: until cancelled
        return new Promise((resolve) => {
          const timer = name === 'forever' ? setInterval(() => void progress(Date.now()).catch(() => {}), 20) : undefined;
          extra.signal.addEventListener('abort', () => {
            clearInterval(timer);
            record();
            resolve({ content: [{ type: 'text', text: 'too late' }] });
          });
        });
    }
  });
  const reset = () => {
    seen.length = 0;
    gate.wait = new Promise<void>((resolve) => (gate.open = resolve));
  };
  return { server, seen, started, gate, reset };
}

async function registryOf(client: Client, options?: McpToolsOptions): Promise<ToolRegistry> {
  const registry = new ToolRegistry();
  for (const tool of await firstValueFrom(mcpTools(client, options))) registry.register(tool);
  return registry;
}

/** A loop whose scripted model calls `name` once and then answers. */
function loopCalling(registry: ToolRegistry, name: string, extra: { signal?: AbortSignal; toolTimeoutMs?: number } = {}) {
  const provider = scriptedProvider([toolTurn(call(name, {}, 'c1')), answerTurn('ok')]);
  return { provider, run$: runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'go' }], ...extra }) };
}


describe('MCP calls through the loop', () => {
  const unit = unitServer();
  let client: Client;
  let registry: ToolRegistry;

  beforeAll(async () => {
    client = await inMemory(unit.server);
    registry = await registryOf(client);
  });
  afterAll(() => client.close());
  beforeEach(() => unit.reset());

  it('M2: each progress notification is a tool_update at once (MESSAGE, else PROGRESS/TOTAL, details { progress, total })', async () => {
    const { run$ } = loopCalling(registry, 'progress');
    const events: LoopEvent[] = [];
    const done = lastValueFrom(run$.pipe(tap((event) => {
      events.push(event);
      if (event.type === 'tool_update' && event.content === '1/3') unit.gate.open(); // the call is still running on the server
    })));
    await done;
    const updates = only(events, 'tool_update');
    expect(updates.map(({ content, details, toolName }) => ({ content, details, toolName }))).toEqual([
      { content: '1/3', details: { progress: 1, total: 3 }, toolName: 'progress' },
      { content: 'halfway there', details: { progress: 2, total: 3 }, toolName: 'progress' },
      { content: '3', details: { progress: 3 }, toolName: 'progress' },
    ]);
    expect(only(events, 'tool_result')[0]!.message.content).toBe('done');
  });

  it('M2, F3: text contents and text resources join with \\n; image and audio are attachments; a resource_link is a line; all content goes into details as sent', async () => {
    const result = await firstValueFrom(registry.run({ id: 'c1', name: 'mixed', input: {} }));
    expect(result.content).toBe(['line one', 'notes', '[resource_link file:///big.csv]', 'line two'].join('\n'));
    expect(result.attachments).toEqual([
      { type: 'image', mimeType: 'image/png', data: PNG },
      { type: 'audio', mimeType: 'audio/wav', data: 'UklGRg==' },
    ]);
    expect(result.isError).toBe(false);
    const details = result.details as { content: unknown[] };
    expect(details.content).toHaveLength(6);
    expect(details.content[1]).toEqual({ type: 'image', mimeType: 'image/png', data: PNG });
    expect(JSON.parse(JSON.stringify(result))).toEqual(result); // R25: plain JSON, saveable
  });

  it('M2: structuredContent goes into details (and is the content when there is no other)', async () => {
    const result = await firstValueFrom(registry.run({ id: 'c1', name: 'structured', input: {} }));
    expect(result).toMatchObject({ content: '{"temperature":21}', isError: false, details: { content: [], structuredContent: { temperature: 21 } } });
  });

  it('M2: isError: true from the server is isError: true in the result', async () => {
    const result = await firstValueFrom(registry.run({ id: 'c1', name: 'failing', input: {} }));
    expect(result).toMatchObject({ content: 'no such city', isError: true });
  });

  it('M4: a JSON-RPC error is the result `error: MCP SERVERNAME: MESSAGE` (isError), and the loop goes on', async () => {
    const { run$, provider } = loopCalling(registry, 'jsonrpc');
    const end = loopEndOf(await lastValueFrom(run$.pipe(toArray())));
    expect(end.reason).toBe('stop');
    expect(end.messages[2]).toMatchObject({ role: 'toolResult', content: 'error: MCP unit: city must be a string', isError: true });
    expect(provider.inputs[1]!.messages[2]!.content).toBe('error: MCP unit: city must be a string'); // the model saw it
  });

  it('M3: unsubscribing sends notifications/cancelled with the library\'s own reason; the server sees its signal abort', async () => {
    const { run$ } = loopCalling(registry, 'hang');
    const subscription = run$.subscribe();
    await firstValueFrom(unit.started.pipe(filter((name) => name === 'hang')));
    subscription.unsubscribe();
    await until(() => unit.seen.length === 1);
    expect(unit.seen).toEqual([{ name: 'hang', aborted: true, reason: MCP_CANCEL_REASON }]);
  });

  it('M3: options.signal cancels the call on the server; the result is error: aborted and the history stays valid', async () => {
    const controller = new AbortController();
    const { run$ } = loopCalling(registry, 'hang', { signal: controller.signal });
    const events = lastValueFrom(run$.pipe(toArray()));
    await firstValueFrom(unit.started.pipe(filter((name) => name === 'hang')));
    controller.abort(new Error('the loop\'s own reason'));
    const end = loopEndOf(await events);
    expect(end.reason).toBe('aborted');
    expect(end.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult']);
    expect(end.messages[2]).toMatchObject({ content: 'error: aborted', isError: true });
    await until(() => unit.seen.length === 1);
    expect(unit.seen).toEqual([{ name: 'hang', aborted: true, reason: MCP_CANCEL_REASON }]); // never the loop's reason
  });

  it('M3: toolTimeoutMs cancels the call on the server and the result is R16\'s timeout', async () => {
    const { run$ } = loopCalling(registry, 'hang', { toolTimeoutMs: 50 });
    const end = loopEndOf(await lastValueFrom(run$.pipe(toArray())));
    expect(end.messages[2]).toMatchObject({ content: 'error: tool timed out after 50 ms', isError: true });
    expect(end.reason).toBe('stop'); // the loop went on
    await until(() => unit.seen.length === 1);
    expect(unit.seen[0]).toEqual({ name: 'hang', aborted: true, reason: MCP_CANCEL_REASON });
  });

  it('M3: callTimeoutMs cancels a silent call on the server: error: tool timed out after N ms', async () => {
    const timed = await registryOf(client, { callTimeoutMs: 50 });
    const result = await firstValueFrom(timed.run({ id: 'c1', name: 'hang', input: {} }));
    expect(result).toMatchObject({ content: 'error: tool timed out after 50 ms', isError: true });
    await until(() => unit.seen.length === 1);
    expect(unit.seen[0]!.aborted).toBe(true);
  });

  it('M2: each progress notification resets callTimeoutMs; maxTotalTimeoutMs caps a call that sends progress forever', async () => {
    const reset = await registryOf(client, { callTimeoutMs: 800 });
    const ticked = await firstValueFrom(reset.run({ id: 'c1', name: 'ticking', input: {} })); // 1,250 ms in all, progress every 250
    expect(ticked).toMatchObject({ content: 'ticked', isError: false });
    const capped = await registryOf(client, { callTimeoutMs: 800, maxTotalTimeoutMs: 300 });
    const forever = await firstValueFrom(capped.run({ id: 'c2', name: 'forever', input: {} })); // progress every 20 ms
    expect(forever).toMatchObject({ content: 'error: tool timed out after 300 ms', isError: true });
    await until(() => unit.seen.length === 1);
    expect(unit.seen[0]!.name).toBe('forever');
  });

  it('M3: the SDK\'s -32001 that our own abort causes is read as aborted, not as a timeout', async () => {
    const [tool] = (await firstValueFrom(mcpTools(client, { filter: (info) => info.name === 'hang' }))) as [Tool];
    const controller = new AbortController();
    const values: unknown[] = [];
    const done = new Promise<void>((resolve) => {
      const call$ = tool.handler({}, { call: { id: 'c1', name: 'hang', input: {} }, signal: controller.signal });
      (call$ as import('rxjs').Observable<unknown>).subscribe({ next: (value) => values.push(value), complete: resolve });
    });
    await firstValueFrom(unit.started.pipe(filter((name) => name === 'hang')));
    controller.abort(new Error('someone else\'s reason'));
    await done;
    expect(values).toEqual([{ content: 'error: aborted', isError: true }]);
    await until(() => unit.seen.length === 1);
    expect(unit.seen[0]!.reason).toBe(MCP_CANCEL_REASON);
  });

  it('M4: a server that goes away mid-call gives error: MCP SERVERNAME: MESSAGE, the loop goes on, and mcpTools completes', async () => {
    const other = unitServer();
    const dying = await inMemory(other.server);
    const lists = lastValueFrom(mcpTools(dying).pipe(toArray()));
    const tools = new ToolRegistry();
    for (const tool of await firstValueFrom(mcpTools(dying))) tools.register(tool);
    const { run$ } = loopCalling(tools, 'die');
    const end = loopEndOf(await lastValueFrom(run$.pipe(toArray())));
    expect(end.reason).toBe('stop');
    expect(end.messages[2]).toMatchObject({ content: 'error: MCP unit: Connection closed', isError: true });
    expect((await lists).length).toBe(1); // completed when the client closed
    // M2: never sent again: a later call fails at once, without a retry
    const later = await firstValueFrom(tools.run({ id: 'c9', name: 'mixed', input: {} }));
    expect(later).toMatchObject({ content: 'error: MCP unit: Not connected', isError: true });
  });

  it('M3: a call whose signal has already aborted is never sent', async () => {
    const [tool] = (await firstValueFrom(mcpTools(client, { filter: (info) => info.name === 'hang' }))) as [Tool];
    const controller = new AbortController();
    controller.abort();
    const values = await lastValueFrom(
      (tool.handler({}, { call: { id: 'c1', name: 'hang', input: {} }, signal: controller.signal }) as import('rxjs').Observable<unknown>).pipe(toArray()),
    );
    expect(values).toEqual([{ content: 'error: aborted', isError: true }]);
    const startedNow: string[] = [];
    unit.started.pipe(take(1)).subscribe((name) => startedNow.push(name));
    await sleep(20);
    expect(startedNow).toEqual([]);
  });
});
