/**
 * M5: real MCP servers, each started and stopped here — `@modelcontextprotocol/server-everything` and
 * `@modelcontextprotocol/server-filesystem` over stdio (each in a process group of its own, killed as a
 * group) and a Streamable HTTP server of this spec's own on 127.0.0.1 — with a scripted model calling their
 * tools through the loop, end to end.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Subject, exhaustMap, filter, firstValueFrom, lastValueFrom, map, merge, of, take, takeWhile, toArray } from 'rxjs';
import { z } from 'zod';
import { type ConversationEvent, type LoopEvent, type ProviderInput, ToolRegistry, conversation, runEventedToolLoop, scriptedProvider } from 'rx-tool-loop';
import { MCP_CANCEL_REASON, mcpTools, syncTools } from 'rx-tool-loop/mcp';
import { answerTurn, call, loopEndOf, only, toolTurn } from '../support/events';
import { type HttpMcpServer, type StdioServer, spawnStdio, startHttp } from './support/servers';

jest.setTimeout(20_000);

const everythingBin = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const filesystemBin = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
const user = (content: string) => [{ role: 'user' as const, content }];

/** The spec's own server: a tool list that changes, and a tool that records its `extra.signal`. */
function ownServer(record: { aborted: boolean; reason: unknown }[], started: Subject<void>): McpServer {
  const server = new McpServer({ name: 'own', version: '1.0.0' });
  server.registerTool('add_tool', { description: 'adds the echo tool' }, () => {
    server.registerTool('echo', { description: 'echoes text', inputSchema: { text: z.string() } }, ({ text }) => ({ content: [{ type: 'text', text }] }));
    return { content: [{ type: 'text', text: 'added echo' }] };
  });
  server.registerTool('wait', { description: 'waits until cancelled' }, (extra) => {
    started.next();
    return new Promise((resolve) =>
      extra.signal.addEventListener('abort', () => {
        record.push({ aborted: extra.signal.aborted, reason: extra.signal.reason });
        resolve({ content: [{ type: 'text', text: 'too late' }] });
      }),
    );
  });
  return server;
}

describe('real MCP servers', () => {
  let everything: StdioServer;
  let filesystem: StdioServer;
  let http: HttpMcpServer;
  let folder: string;
  const record: { aborted: boolean; reason: unknown }[] = [];
  const started = new Subject<void>();

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'rx-tool-loop-mcp-'));
    mkdirSync(join(folder, 'docs'));
    writeFileSync(join(folder, 'notes.txt'), 'buy milk\n');
    [everything, filesystem, http] = await Promise.all([
      spawnStdio(everythingBin, ['stdio']),
      spawnStdio(filesystemBin, [folder]),
      startHttp(() => ownServer(record, started)),
    ]);
  });

  afterAll(async () => {
    await Promise.all([everything?.kill(), filesystem?.kill(), http?.close()]);
    rmSync(folder, { recursive: true, force: true });
    expect([everything.alive(), filesystem.alive()]).toEqual([false, false]); // nothing left running
  });

  describe('server-everything over stdio', () => {
    let registry: ToolRegistry;
    beforeAll(async () => {
      registry = new ToolRegistry();
      for (const tool of await firstValueFrom(mcpTools(everything.client))) registry.register(tool);
    });

    it('M5: progress of trigger-long-running-operation arrives as tool_update while it runs, then its result', async () => {
      const provider = scriptedProvider([toolTurn(call('trigger-long-running-operation', { duration: 0.3, steps: 3 }, 'c1')), answerTurn('done')]);
      const events = await lastValueFrom(runEventedToolLoop({ provider, registry, messages: user('run it') }).pipe(toArray()));
      // the server sends its last progress right before its result, often in the same read, which the SDK (1.32)
      // drops (it runs notification handlers a microtask after responses): the adapter keeps it (M2 (8))
      const updates = only(events, 'tool_update').map((e) => [e.content, e.details]);
      expect(updates).toEqual([
        ['1/3', { progress: 1, total: 3 }],
        ['2/3', { progress: 2, total: 3 }],
        ['3/3', { progress: 3, total: 3 }],
      ]);
      const types = events.map((e) => e.type);
      expect(types.indexOf('tool_update')).toBeGreaterThan(types.indexOf('tool_start'));
      expect(types.lastIndexOf('tool_update')).toBeLessThan(types.indexOf('tool_result'));
      expect(only(events, 'tool_result')[0]!.message.content).toBe('Long running operation completed. Duration: 0.3 seconds, Steps: 3.');
      expect(loopEndOf(events).reason).toBe('stop');
    });

    it('M5: cancelling trigger-long-running-operation (toolTimeoutMs) ends it at once, the history stays valid and the server still answers', async () => {
      const provider = scriptedProvider([
        toolTurn(call('trigger-long-running-operation', { duration: 10, steps: 10 }, 'c1')),
        toolTurn(call('echo', { message: 'still here' }, 'c2')),
        answerTurn('done'),
      ]);
      const events = await lastValueFrom(runEventedToolLoop({ provider, registry, messages: user('run it'), toolTimeoutMs: 200 }).pipe(toArray()));
      const results = only(events, 'tool_result').map((e) => e.message);
      expect(results.map((r) => r.content)).toEqual(['error: tool timed out after 200 ms', 'Echo: still here']);
      expect(loopEndOf(events).messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant', 'toolResult', 'assistant']);
    });

    it('M5, F3: structured content (get-structured-content) and an image (get-tiny-image) are mapped as M2 and F3 say', async () => {
      const weather = await firstValueFrom(registry.run({ id: 'c1', name: 'get-structured-content', input: { location: 'Chicago' } }));
      expect(weather.details).toEqual({
        content: [{ type: 'text', text: JSON.stringify({ temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 }) }],
        structuredContent: { temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 },
      });
      const image = await firstValueFrom(registry.run({ id: 'c2', name: 'get-tiny-image', input: {} }));
      const sent = (image.details as { content: { data?: string }[] }).content[1]!.data!;
      expect(image.content).toBe(`Here's the image you requested:\nThe image above is the MCP logo.`);
      expect(image.attachments).toEqual([{ type: 'image', mimeType: 'image/png', data: sent }]);
    });

    it('M4: a server process that dies mid-call gives error: MCP SERVERNAME: MESSAGE and the loop goes on', async () => {
      const doomed = await spawnStdio(everythingBin, ['stdio']);
      try {
        const tools = new ToolRegistry();
        for (const tool of await firstValueFrom(mcpTools(doomed.client))) tools.register(tool);
        const provider = scriptedProvider([toolTurn(call('trigger-long-running-operation', { duration: 10, steps: 100 }, 'c1')), answerTurn('it died')]);
        const run = runEventedToolLoop({ provider, registry: tools, messages: user('run it') });
        const events: LoopEvent[] = [];
        await new Promise<void>((resolve) =>
          run.subscribe({
            next: (event) => {
              events.push(event);
              if (event.type === 'tool_update' && event.content === '1/100') void doomed.kill();
            },
            complete: resolve,
          }),
        );
        expect(only(events, 'tool_result')[0]!.message).toMatchObject({ content: 'error: MCP mcp-servers/everything: Connection closed', isError: true });
        expect(loopEndOf(events)).toMatchObject({ reason: 'stop', assistant: { content: 'it died' } });
      } finally {
        await doomed.kill();
      }
      expect(doomed.alive()).toBe(false);
    });
  });

  it('M5: server-filesystem on a temporary folder: the scripted model lists the folder and reads a file', async () => {
    const registry = new ToolRegistry();
    const provider = scriptedProvider([
      toolTurn(call('fs_list_directory', { path: folder }, 'c1')),
      toolTurn(call('fs_read_text_file', { path: join(folder, 'notes.txt') }, 'c2')),
      (input: ProviderInput) => answerTurn(`you need to ${input.messages.at(-1)!.content.trim()}`),
    ]);
    const run$ = syncTools(registry, mcpTools(filesystem.client, { prefix: 'fs_' })).pipe(
      exhaustMap(() => runEventedToolLoop({ provider, registry, messages: user('what is in my notes?') })),
      takeWhile((event) => event.type !== 'loop_end', true),
    );
    const events = await lastValueFrom(run$.pipe(toArray()));
    expect(only(events, 'tool_result').map((e) => e.message.content)).toEqual(['[DIR] docs\n[FILE] notes.txt', 'buy milk\n']);
    expect(loopEndOf(events).assistant.content).toBe('you need to buy milk');
    expect(registry.getSpecs()).toEqual([]); // syncTools removed them when the run ended
  });

  describe('a Streamable HTTP server of our own', () => {
    it('M5: its tool list changes mid-conversation and the next turn sees it (syncTools)', async () => {
      const client = await http.connect();
      const registry = new ToolRegistry();
      const synced = syncTools(registry, mcpTools(client));
      const provider = scriptedProvider([
        toolTurn(call('add_tool', {}, 'c1')),
        answerTurn('added'),
        toolTurn(call('echo', { text: 'hello' }, 'c2')),
        answerTurn('echoed'),
      ]);
      const lists = new Subject<string[]>();
      const sync = synced.pipe(map((tools) => tools.map((tool) => tool.name))).subscribe(lists);
      await firstValueFrom(lists);
      // the second prompt comes once the new list is in, as a person types after seeing the tool added
      const prompts = merge(of('add a tool'), lists.pipe(filter((names) => names.includes('echo')), take(1), map(() => 'now echo')));
      const events: ConversationEvent[] = await lastValueFrom(
        prompts.pipe(take(2), conversation({ provider, registry }), toArray()),
      );
      sync.unsubscribe();
      expect(provider.inputs[0]!.tools.map((tool) => tool.name)).toEqual(['add_tool', 'wait']);
      expect(provider.inputs[2]!.tools.map((tool) => tool.name)).toEqual(['add_tool', 'wait', 'echo']);
      expect(only(events, 'tool_result').map((e) => e.message.content)).toEqual(['added echo', 'hello']);
      expect(registry.getSpecs()).toEqual([]);
    });

    it('M5: cancelling a call sends notifications/cancelled: the server\'s extra.signal aborts with the library\'s reason', async () => {
      const client = await http.connect();
      const registry = new ToolRegistry();
      for (const tool of await firstValueFrom(mcpTools(client))) registry.register(tool);
      const provider = scriptedProvider([toolTurn(call('wait', {}, 'c1')), answerTurn('never')]);
      const controller = new AbortController();
      const run = lastValueFrom(runEventedToolLoop({ provider, registry, messages: user('wait'), signal: controller.signal }).pipe(toArray()));
      await firstValueFrom(started);
      controller.abort();
      const end = loopEndOf(await run);
      expect(end.messages[2]).toMatchObject({ content: 'error: aborted', isError: true });
      while (record.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(record).toEqual([{ aborted: true, reason: MCP_CANCEL_REASON }]);
    });
  });
});
