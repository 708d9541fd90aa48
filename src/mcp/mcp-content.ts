import type { ToolOutput } from '../types.js';
import type { McpCallResult } from './mcp-client.js';

/**
 * M2: a `tools/call` result as the loop's `ToolOutput`. The text contents, joined with `\n`, are what the
 * model reads; any other content is a line that says what it was — `[image image/png, 1234 bytes]`,
 * `[resource text/plain, file:///notes.txt]`, `[resource_link file:///big.csv]` (kind, MIME type when given,
 * size or URI) — and all the content as the server sent it, with `structuredContent`, goes into `details`
 * for the application. A result with no content at all shows its `structuredContent` as JSON. `isError: true`
 * from the server is kept.
 *
 * ```ts
 * mcpOutput({ content: [{ type: 'text', text: 'hi' }, { type: 'image', mimeType: 'image/png', data: 'iVBO' }] });
 * // { content: 'hi\n[image image/png, 3 bytes]', isError: false, details: { content: [...] } }
 * ```
 */
export function mcpOutput(result: McpCallResult): ToolOutput {
  const content: unknown[] = Array.isArray(result.content) ? result.content : [];
  const lines = content.map(line);
  let text = lines.join('\n');
  if (content.length === 0 && result.structuredContent !== undefined) text = JSON.stringify(result.structuredContent) ?? '';
  const details: { content: unknown[]; structuredContent?: unknown } = { content };
  if (result.structuredContent !== undefined) details.structuredContent = result.structuredContent;
  return { content: text, isError: result.isError === true, details };
}

type Block = { type?: unknown; text?: unknown; mimeType?: unknown; data?: unknown; uri?: unknown; resource?: Block };

function line(item: unknown): string {
  const block = (typeof item === 'object' && item !== null ? item : {}) as Block;
  const kind = typeof block.type === 'string' ? block.type : 'content';
  if (kind === 'text' && typeof block.text === 'string') return block.text;
  // an embedded resource carries its URI and MIME type inside `resource`
  const described = kind === 'resource' && typeof block.resource === 'object' && block.resource !== null ? block.resource : block;
  const mime = typeof described.mimeType === 'string' ? ` ${described.mimeType}` : '';
  const size = typeof block.data === 'string' ? `${base64Bytes(block.data)} bytes` : typeof described.uri === 'string' ? described.uri : '';
  return `[${kind}${mime}${size === '' ? '' : `${mime === '' ? ' ' : ', '}${size}`}]`;
}

/** How many bytes a base64 text decodes to, without decoding it. */
function base64Bytes(data: string): number {
  const length = data.replace(/\s/g, '').length;
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((length * 3) / 4) - padding);
}
