/**
 * What `rx-tool-loop/mcp` needs of an MCP client: a small structural interface that the SDK's `Client`
 * (`@modelcontextprotocol/sdk/client/index.js`, ^1.x) satisfies as it is, so that the adapter does not
 * depend on the SDK's classes (M2).
 */
import type { CreateMessageRequestSchema, CreateMessageResult, ElicitRequestSchema, ElicitResult, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

/** A server's tool as `tools/list` gives it (M1). */
export interface McpToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema: { type: 'object'; properties?: Record<string, unknown>; required?: string[]; [keyword: string]: unknown };
  annotations?: {
    title?: string;
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  };
}

/** One progress notification of a call (`notifications/progress`). */
export interface McpProgress {
  progress: number;
  total?: number;
  message?: string;
}

/** The request options the adapter passes to `listTools` and `callTool` (the SDK's `RequestOptions`). */
export interface McpRequestOptions {
  signal?: AbortSignal;
  onprogress?: (progress: McpProgress) => void;
  timeout?: number;
  resetTimeoutOnProgress?: boolean;
  maxTotalTimeout?: number;
}

/** What `tools/call` answers; read defensively, since a server may send anything. */
export interface McpCallResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: unknown;
  [key: string]: unknown;
}

/** The requests a server sends a client that `mcpTools` answers: `elicitation/create` (M7) and `sampling/createMessage` (M8). */
export type McpServerRequestSchema = typeof ElicitRequestSchema | typeof CreateMessageRequestSchema;

/** What `elicitation/create` and `sampling/createMessage` answer (the SDK's `ElicitResult`, `CreateMessageResult`). */
export type McpServerRequestResult = ElicitResult | CreateMessageResult;

/** What the SDK gives a request handler besides the request: `signal` aborts when the server cancels the request. */
export interface McpRequestExtra {
  signal: AbortSignal;
}

/** The client `mcpTools` takes: the SDK's `Client` fits. */
export interface McpClient {
  listTools(params?: { cursor?: string }, options?: McpRequestOptions): Promise<{ tools: McpToolInfo[]; nextCursor?: string }>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }, resultSchema?: undefined, options?: McpRequestOptions): Promise<McpCallResult>;
  setNotificationHandler(schema: typeof ToolListChangedNotificationSchema, handler: (notification: unknown) => void): void;
  /**
   * M7, M8: how `onElicit` and `sampling` answer the server. The SDK's `Client` throws here unless it was created
   * with the capability (`elicitation`, `sampling`): a client declares its capabilities before it connects.
   */
  setRequestHandler?(schema: McpServerRequestSchema, handler: (request: unknown, extra: McpRequestExtra) => Promise<McpServerRequestResult>): void;
  /** The server's `serverInfo` after `initialize`: its `name` is SERVERNAME in `error: MCP SERVERNAME: MESSAGE` (M4). */
  getServerVersion?(): { name: string } | undefined;
  /** Called when the connection closes; `mcpTools` chains onto it while subscribed and then completes (M1). */
  onclose?: (() => void) | undefined;
  /** Called with what the transport could not deliver; a running call chains onto it to learn that its stream dropped (M4). */
  onerror?: ((error: Error) => void) | undefined;
}
