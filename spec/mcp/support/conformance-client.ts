/**
 * A client for the official MCP conformance suite (`@modelcontextprotocol/conformance`), built on `mcpTools` (M9):
 * the suite starts a server for one client scenario and runs this file with the server's URL as the last
 * argument and the scenario's name in `MCP_CONFORMANCE_SCENARIO`. A scripted model calls the scenario's tool
 * through the loop; `onElicit` accepts every elicitation as it is, so that the schema's defaults fill it (M7).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { exhaustMap, lastValueFrom, takeWhile } from 'rxjs';
import { type ProviderEvent, type ProviderInput, ToolRegistry, runEventedToolLoop, scriptedProvider } from '../../../src/index.js';
import { mcpTools, syncTools } from '../../../src/mcp/index.js';

/** The tool each scenario's server offers, and its arguments; `initialize` offers none. */
const CALLS: Record<string, { name: string; input: Record<string, unknown> } | undefined> = {
  initialize: undefined,
  tools_call: { name: 'add_numbers', input: { a: 2, b: 3 } },
  'elicitation-sep1034-client-defaults': { name: 'test_client_elicitation_defaults', input: {} },
  'sse-retry': { name: 'test_reconnection', input: {} },
};

async function main(): Promise<void> {
  const url = new URL(process.argv[process.argv.length - 1]!);
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? 'tools_call';
  if (!(scenario in CALLS)) throw new Error(`conformance client: no script for the scenario ${scenario}`);
  const wanted = CALLS[scenario];
  const client = new Client({ name: 'rx-tool-loop-conformance', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
  await client.connect(new StreamableHTTPClientTransport(url));
  const registry = new ToolRegistry();
  const answer = (input: ProviderInput): ProviderEvent[] => [{ type: 'message_start' }, { type: 'text_delta', text: input.messages.at(-1)!.content }, { type: 'message_end', stopReason: 'stop' }];
  const provider = scriptedProvider(
    wanted === undefined
      ? [answer]
      : [[{ type: 'message_start' }, { type: 'tool_call', call: { id: 'c1', ...wanted } }, { type: 'message_end', stopReason: 'toolUse' }], answer],
  );
  const tools$ = mcpTools(client, { onElicit: () => ({ action: 'accept', content: {} }) });
  const end = await lastValueFrom(
    syncTools(registry, tools$).pipe(
      exhaustMap(() => runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: `run ${scenario}` }] })),
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
