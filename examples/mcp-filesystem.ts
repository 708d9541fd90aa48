/**
 * Tools from an MCP server (M6): `@modelcontextprotocol/server-filesystem` on a folder of notes, its tools
 * given to the loop by `mcpTools` and kept in the registry by `syncTools`. The scripted model lists the folder,
 * reads the file it found and answers from it:
 *
 *   npm run mcp
 *
 * The same with a real model (the s04 flags; the key comes from OPENAI_API_KEY / ANTHROPIC_API_KEY):
 *
 *   npm run mcp -- --provider openai --model gpt-4o-mini
 *   npm run mcp -- --provider anthropic --model claude-sonnet-4-5
 *
 * The server runs as a child process over stdio; outside this repository it is `npx -y
 * @modelcontextprotocol/server-filesystem FOLDER`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { defer, exhaustMap, finalize, switchMap, takeWhile } from 'rxjs';
import { type LoopEvent, type ProviderInput, ToolRegistry, runEventedToolLoop, scriptedProvider } from '../src/index.js';
import { mcpTools, syncTools } from '../src/mcp/index.js';
import { describeCommon, lastToolResult, runSeriesDemo } from './series-demo.js';

const folder = mkdtempSync(join(tmpdir(), 'notes-'));
writeFileSync(join(folder, 'shopping.txt'), 'milk, bread, coffee\n');

/** The scripted model: list the folder, read the first file it lists, answer with what it says. */
const scripted = scriptedProvider([
  [{ type: 'message_start' }, { type: 'tool_call', call: { id: 'call_1', name: 'list_directory', input: { path: folder } } }, { type: 'message_end', stopReason: 'toolUse' }],
  (input: ProviderInput) => {
    const file = /\[FILE\] (.+)/.exec(lastToolResult(input))?.[1] ?? 'missing';
    return [
      { type: 'message_start' },
      { type: 'tool_call', call: { id: 'call_2', name: 'read_text_file', input: { path: join(folder, file) } } },
      { type: 'message_end', stopReason: 'toolUse' },
    ];
  },
  (input: ProviderInput) => [
    { type: 'message_start' },
    { type: 'text_delta', text: `Your shopping list: ${lastToolResult(input).trim()}.` },
    { type: 'message_end', stopReason: 'stop' },
  ],
]);

function describe(event: LoopEvent): string | undefined {
  switch (event.type) {
    case 'tool_call':
      return `tool_call: ${event.call.name} ${JSON.stringify(event.call.input)}`;
    case 'tool_result':
      return `tool_result: ${JSON.stringify(event.message.content)}`;
    default:
      return describeCommon(event);
  }
}

runSeriesDemo({
  name: 'mcp',
  title: 'Tools from an MCP server',
  question: `What is on my shopping list? My notes are in ${folder}.`,
  scripted,
  run: (provider, messages) =>
    defer(async () => {
      const client = new Client({ name: 'rx-tool-loop-example', version: '1.0.0' });
      const server = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
      await client.connect(new StdioClientTransport({ command: process.execPath, args: [server, folder], stderr: 'ignore' }));
      return client;
    }).pipe(
      switchMap((client) => {
        const registry = new ToolRegistry();
        // the loop starts once the server's tools are in; they stay in sync while it runs
        return syncTools(registry, mcpTools(client)).pipe(
          exhaustMap(() => runEventedToolLoop({ provider, registry, messages })),
          takeWhile((event) => event.type !== 'loop_end', true),
          finalize(() => void client.close()),
        );
      }),
      finalize(() => rmSync(folder, { recursive: true, force: true })),
    ),
  describe,
});
