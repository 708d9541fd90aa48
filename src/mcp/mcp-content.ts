import type { Attachment, ToolOutput } from '../types.js';
import { attachmentsProblem, base64Bytes, contentAttachment } from '../util/attachments.js';
import type { McpCallResult } from './mcp-client.js';

/**
 * M2, F3: a `tools/call` result as the loop's `ToolOutput`. The text contents, and the text of embedded text
 * resources, joined with `\n`, are what the model reads; `image` and `audio` contents and embedded `resource`
 * blobs become the result's `attachments` (a blob's type from its MIME type: `image/*`, `audio/*`, else `file`;
 * its name the last part of its URI), which each provider sends as its API takes them (F2). Anything else is a
 * line that says what it was — `[resource_link file:///big.csv]`, or `[image image/png, 3 bytes]` for an image
 * whose data is no valid attachment (kind, MIME type when given, size or URI). All the content as the server sent
 * it, with `structuredContent`, goes into `details` for the application. A result with no content at all shows
 * its `structuredContent` as JSON. `isError: true` from the server is kept.
 *
 * ```ts
 * mcpOutput({ content: [{ type: 'text', text: 'hi' }, { type: 'image', mimeType: 'image/png', data: 'iVBORw==' }] });
 * // { content: 'hi', isError: false, attachments: [{ type: 'image', mimeType: 'image/png', data: 'iVBORw==' }], details: { content: [...] } }
 * ```
 */
export function mcpOutput(result: McpCallResult): ToolOutput {
  const content: unknown[] = Array.isArray(result.content) ? result.content : [];
  const lines: string[] = [];
  const attachments: Attachment[] = [];
  for (const item of content) {
    const block = (typeof item === 'object' && item !== null ? item : {}) as Block;
    const attachment = attachmentOf(block);
    if (attachment !== undefined) attachments.push(attachment);
    else lines.push(line(block));
  }
  let text = lines.join('\n');
  if (content.length === 0 && result.structuredContent !== undefined) text = JSON.stringify(result.structuredContent) ?? '';
  const details: { content: unknown[]; structuredContent?: unknown } = { content };
  if (result.structuredContent !== undefined) details.structuredContent = result.structuredContent;
  const output: ToolOutput = { content: text, isError: result.isError === true, details };
  if (attachments.length > 0) output.attachments = attachments;
  return output;
}

type Block = { type?: unknown; text?: unknown; mimeType?: unknown; data?: unknown; blob?: unknown; uri?: unknown; resource?: Block };

/** F3: an image, an audio or an embedded blob as an attachment, named by the last part of its URI; `undefined` for anything else, or one that is not valid (F1). */
function attachmentOf(block: Block): Attachment | undefined {
  const attachment = contentAttachment(block, (uri) => uri.slice(uri.lastIndexOf('/') + 1));
  // a server's bad data stays a line: the result is never lost to it
  return attachment !== undefined && attachmentsProblem([attachment]) === undefined ? attachment : undefined;
}

function line(block: Block): string {
  const kind = typeof block.type === 'string' ? block.type : 'content';
  if (kind === 'text' && typeof block.text === 'string') return block.text;
  // an embedded resource carries its URI and MIME type inside `resource`; a text resource joins the text (F3)
  const described = kind === 'resource' && typeof block.resource === 'object' && block.resource !== null ? block.resource : block;
  if (kind === 'resource' && typeof described.text === 'string') return described.text;
  const mime = typeof described.mimeType === 'string' ? ` ${described.mimeType}` : '';
  const size = typeof block.data === 'string' ? `${base64Bytes(block.data)} bytes` : typeof described.uri === 'string' ? described.uri : '';
  return `[${kind}${mime}${size === '' ? '' : `${mime === '' ? ' ' : ', '}${size}`}]`;
}
