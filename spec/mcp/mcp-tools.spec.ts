/** M1: listing a server's tools (pages, names, prefix, filter), relisting on list_changed, completion on close. */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { firstValueFrom, lastValueFrom, take, toArray } from 'rxjs';
import { ToolRegistry } from 'rx-tool-loop';
import { mcpTools } from 'rx-tool-loop/mcp';
import { inMemory } from './support/servers';
import { until } from '../support/until';

const schema = { type: 'object' as const, properties: { q: { type: 'string' } }, required: ['q'] };

/** A low-level SDK server whose tool list is `tools` (paged `pageSize` at a time) and that counts its listings. */
function lister(tools: McpTool[], pageSize = Infinity) {
  const server = new Server({ name: 'lister', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
  const state = { tools, listings: 0, pages: 0 };
  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    state.pages++;
    const from = Number(request.params?.cursor ?? 0);
    if (from === 0) state.listings++;
    const to = Math.min(state.tools.length, from + pageSize);
    return { tools: state.tools.slice(from, to), ...(to < state.tools.length ? { nextCursor: String(to) } : {}) };
  });
  server.setRequestHandler(CallToolRequestSchema, (request) => ({ content: [{ type: 'text', text: `called ${request.params.name}` }] }));
  return { server, state };
}

describe('mcpTools', () => {
  it('M1: lists every page (nextCursor) on subscribe and emits the tools with the server\'s description and JSON Schema as it is', async () => {
    const tools: McpTool[] = Array.from({ length: 5 }, (_, i) => ({ name: `t${i}`, description: `tool ${i}`, inputSchema: schema }));
    const { server, state } = lister(tools, 2);
    const client = await inMemory(server);
    const listed = await firstValueFrom(mcpTools(client));
    expect(listed.map((tool) => tool.name)).toEqual(['t0', 't1', 't2', 't3', 't4']);
    expect(state.pages).toBe(3);
    expect(listed[3]!.description).toBe('tool 3');
    expect(listed[3]!.inputSchema).toEqual(schema);
    await client.close();
  });

  it('M1: nothing is listed before subscribe (cold)', async () => {
    const { server, state } = lister([{ name: 'a', inputSchema: schema }]);
    const client = await inMemory(server);
    const tools$ = mcpTools(client);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(state.listings).toBe(0);
    await firstValueFrom(tools$);
    expect(state.listings).toBe(1);
    await client.close();
  });

  it('M1: names are sanitised to [a-zA-Z0-9_-], cut to 64 and deduplicated with _2, _3; the prefix comes first; calls use the server\'s names', async () => {
    const long = 'x'.repeat(70);
    const names = ['read file', 'read_file', 'read.file', 'get/weather', long, `${long}y`, 'ok-name'];
    const { server } = lister(names.map((name) => ({ name, inputSchema: { type: 'object' } })));
    const client = await inMemory(server);
    const listed = await firstValueFrom(mcpTools(client));
    expect(listed.map((tool) => tool.name)).toEqual(['read_file', 'read_file_2', 'read_file_3', 'get_weather', 'x'.repeat(64), `${'x'.repeat(62)}_2`, 'ok-name']);
    const prefixed = await firstValueFrom(mcpTools(client, { prefix: 'fs.' }));
    expect(prefixed.map((tool) => tool.name).slice(0, 2)).toEqual(['fs_read_file', 'fs_read_file_2']);

    const registry = new ToolRegistry();
    for (const tool of listed) registry.register(tool); // R21: every name is one the APIs accept
    const results = await Promise.all(
      ['read_file', 'read_file_2', 'read_file_3', 'get_weather'].map((name, i) => firstValueFrom(registry.run({ id: `c${i}`, name, input: {} }))),
    );
    expect(results.map((result) => result.content)).toEqual(['called read file', 'called read_file', 'called read.file', 'called get/weather']);
    await client.close();
  });

  it('M1: description falls back to the title, then the name; filter sees the tool as listed, annotations included', async () => {
    const { server } = lister([
      { name: 'a', title: 'Tool A', inputSchema: schema },
      { name: 'b', inputSchema: schema, annotations: { destructiveHint: true } },
      { name: 'c', description: 'C', inputSchema: schema, annotations: { readOnlyHint: true } },
    ]);
    const client = await inMemory(server);
    const all = await firstValueFrom(mcpTools(client));
    expect(all.map((tool) => tool.description)).toEqual(['Tool A', 'b', 'C']);
    const safe = await firstValueFrom(mcpTools(client, { filter: (tool) => tool.annotations?.destructiveHint !== true }));
    expect(safe.map((tool) => tool.name)).toEqual(['a', 'c']);
    await client.close();
  });

  it('M1: lists again on notifications/tools/list_changed, one listing for a burst; completes when the client closes', async () => {
    const { server, state } = lister([{ name: 'a', inputSchema: schema }]);
    const client = await inMemory(server);
    const lists: string[][] = [];
    let completed = false;
    const first = new Promise<void>((resolve) =>
      mcpTools(client).subscribe({
        next: (tools) => {
          lists.push(tools.map((tool) => tool.name));
          resolve();
        },
        complete: () => (completed = true),
      }),
    );
    await first;
    state.tools = [{ name: 'a', inputSchema: schema }, { name: 'b', inputSchema: schema }];
    await Promise.all([server.sendToolListChanged(), server.sendToolListChanged(), server.sendToolListChanged()]);
    await until(() => lists.length === 2);
    expect(lists).toEqual([['a'], ['a', 'b']]);
    expect(state.listings).toBe(2);
    await client.close();
    expect(completed).toBe(true);
  });

  it('M1: two subscriptions on one client both hear list_changed, and the client\'s own onclose still runs', async () => {
    const { server, state } = lister([{ name: 'a', inputSchema: schema }]);
    const client = await inMemory(server);
    let ownClose = 0;
    client.onclose = () => ownClose++;
    const one = lastValueFrom(mcpTools(client).pipe(take(2), toArray()));
    const two = lastValueFrom(mcpTools(client).pipe(take(2), toArray()));
    await until(() => state.listings === 2);
    state.tools = [{ name: 'b', inputSchema: schema }];
    await server.sendToolListChanged();
    expect((await one).map((tools) => tools.map((tool) => tool.name))).toEqual([['a'], ['b']]);
    expect((await two).map((tools) => tools.map((tool) => tool.name))).toEqual([['a'], ['b']]);
    await client.close();
    expect(ownClose).toBeGreaterThan(0); // (the SDK's in-memory transport reports its close twice)
  });

  it('M4: mcpTools errors only for the listing itself', async () => {
    const server = new Server({ name: 'broken', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => {
      throw new Error('cannot list');
    });
    const client = await inMemory(server);
    await expect(firstValueFrom(mcpTools(client))).rejects.toThrow('cannot list');
    await client.close();
  });

  it('M1: bad arguments are refused at call time with a clear error', async () => {
    const { server } = lister([]);
    const client = await inMemory(server);
    expect(() => mcpTools({} as never)).toThrow(new TypeError('mcpTools: client must be an MCP client with listTools() (got {}, an object)'));
    expect(() => mcpTools(client, { prefix: 3 as never })).toThrow(new TypeError('mcpTools: prefix must be a string (got 3, a number)'));
    expect(() => mcpTools(client, { filter: 'x' as never })).toThrow(TypeError);
    expect(() => mcpTools(client, { callTimeoutMs: 0 })).toThrow(new RangeError('mcpTools: callTimeoutMs must be an integer >= 1 or Infinity (got 0, a number)'));
    expect(() => mcpTools(client, { maxTotalTimeoutMs: 1.5 })).toThrow(RangeError);
    await client.close();
  });
});

