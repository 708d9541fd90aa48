/**
 * A client for the official MCP conformance suite (`@modelcontextprotocol/conformance`, scenario
 * `tools_call`), built on `mcpTools`: the suite starts its server and runs this file with the server's URL
 * as the last argument; a scripted model calls `add_numbers` through the loop.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { exhaustMap, lastValueFrom, takeWhile } from 'rxjs';
import { type ProviderInput, ToolRegistry, runEventedToolLoop, scriptedProvider } from '../../../src/index.js';
import { mcpTools, syncTools } from '../../../src/mcp/index.js';

async function main(): Promise<void> {
  const url = new URL(process.argv[process.argv.length - 1]!);
  const client = new Client({ name: 'rx-tool-loop-conformance', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url));
  const registry = new ToolRegistry();
  const provider = scriptedProvider([
    [{ type: 'message_start' }, { type: 'tool_call', call: { id: 'c1', name: 'add_numbers', input: { a: 2, b: 3 } } }, { type: 'message_end', stopReason: 'toolUse' }],
    (input: ProviderInput) => [{ type: 'message_start' }, { type: 'text_delta', text: input.messages.at(-1)!.content }, { type: 'message_end', stopReason: 'stop' }],
  ]);
  const end = await lastValueFrom(
    syncTools(registry, mcpTools(client)).pipe(
      exhaustMap(() => runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'add 2 and 3' }] })),
      takeWhile((event) => event.type !== 'loop_end', true),
    ),
  );
  console.log(end.type === 'loop_end' ? end.assistant.content : end.type);
  await client.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
