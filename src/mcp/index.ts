/**
 * `rx-tool-loop/mcp`: tools from MCP servers, as Observables (M1–M6); servers that ask the user (M7) and the model (M8). The only entry that imports
 * `@modelcontextprotocol/sdk` (an optional peer dependency): the main entry never does.
 */
export { mcpTools } from './mcp-tools.js';
export type { McpToolsOptions } from './mcp-tools.js';
export { syncTools } from './sync-tools.js';
export { MCP_CANCEL_REASON } from './mcp-call.js';
export { mcpOutput } from './mcp-content.js';
export type {
  McpCallResult,
  McpClient,
  McpProgress,
  McpRequestExtra,
  McpRequestOptions,
  McpServerRequestResult,
  McpServerRequestSchema,
  McpToolInfo,
} from './mcp-client.js';
export type { McpElicitContext, McpElicitHandler, McpElicitRequest, McpElicitation } from './mcp-elicit.js';
export type { McpSampling, McpSamplingRequest } from './mcp-sampling.js';
