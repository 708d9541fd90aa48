import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { HookAnswer, ToolCall } from '../types.js';
import { isPlainObject } from '../util/values.js';

/** What a server asks in `elicitation/create`: a `message` and a `requestedSchema` (form mode), or a `url` (URL mode). */
export type McpElicitRequest = ElicitRequest['params'];

/** The second argument of `onElicit` (M7). */
export interface McpElicitContext {
  /** The tool call the server asked during (id, name, input as the model sent them); none when the request relates to no call of ours. */
  call?: ToolCall;
  /** Aborts when the answer is no longer wanted: the call ended (unsubscribed, timed out, answered), the server cancelled the request, or `mcpTools` was unsubscribed. */
  signal: AbortSignal;
}

/**
 * M7: answers a server's `elicitation/create` — a value, a Promise or an Observable (its first value) of the
 * SDK's `ElicitResult`: `{ action: 'accept', content }`, `{ action: 'decline' }` or `{ action: 'cancel' }`.
 */
export type McpElicitHandler = (request: McpElicitRequest, context: McpElicitContext) => HookAnswer<ElicitResult>;

/** What a `tool_update` of the call carries in `details` while the server asks: `{ elicitation: McpElicitation }`. */
export interface McpElicitation {
  message: string;
  /** Form mode: the JSON Schema of the answer (flat: strings, numbers, booleans, enums). */
  requestedSchema?: Record<string, unknown>;
  /** URL mode: the page the user opens. */
  url?: string;
}

/** The request as a `tool_update`'s `details.elicitation` shows it: what a UI needs to ask. */
export function shownElicitation(request: McpElicitRequest): McpElicitation {
  if ('url' in request && typeof request.url === 'string') return { message: request.message, url: request.url };
  const { requestedSchema } = request as { requestedSchema?: Record<string, unknown> };
  return requestedSchema === undefined ? { message: request.message } : { message: request.message, requestedSchema };
}

/**
 * SEP-1034: an accepted answer with each field of `requestedSchema` that it omits and that has a `default`
 * filled in with that default (a new object; the answer given is left as it is). Any other answer as it is.
 */
export function withSchemaDefaults(request: McpElicitRequest, result: ElicitResult): ElicitResult {
  const properties = (request as { requestedSchema?: { properties?: unknown } }).requestedSchema?.properties;
  if (result?.action !== 'accept' || !isPlainObject(properties)) return result;
  const content: Record<string, unknown> = { ...(isPlainObject(result.content) ? result.content : {}) };
  for (const [key, field] of Object.entries(properties)) {
    if (content[key] === undefined && isPlainObject(field) && Object.prototype.hasOwnProperty.call(field, 'default')) content[key] = field.default;
  }
  return { ...result, content: content as ElicitResult['content'] };
}
