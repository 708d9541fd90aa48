import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Subject, type Subscription, firstValueFrom } from 'rxjs';
import { type Tool, ToolRegistry } from 'rx-tool-loop';
import { type McpToolsOptions, mcpTools } from 'rx-tool-loop/mcp';

/** `mcpTools(client, options)` subscribed, its first list in a registry: the subscription is the server's hooks (M7, M8). */
export async function subscribed(client: Client, options: McpToolsOptions): Promise<{ tools: ToolRegistry; subscription: Subscription }> {
  const tools = new ToolRegistry();
  const listed = new Subject<Tool[]>();
  const subscription = mcpTools(client, options).subscribe(listed);
  for (const tool of await firstValueFrom(listed)) tools.register(tool);
  return { tools, subscription };
}
