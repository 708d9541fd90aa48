import type { ContentBlock } from '@agentclientprotocol/sdk';
import type { Attachment, UserMessage } from '../types.js';
import { contentAttachment } from '../util/attachments.js';

/**
 * E1: an ACP prompt's content blocks as the user message of one turn. Text blocks are the message's text, one
 * after another on lines of their own; an image or an audio block is an attachment (F1) with its bytes; an
 * embedded resource (`embeddedContext`) is its text in a fenced block under its URI, or, as bytes, an attachment
 * named by its URI, its type from its MIME type as an MCP blob's (F3: `image/*`, `audio/*`, else `file`); a
 * resource link is a line with its name and URI as a Markdown link — the agent is not given its content (it may
 * read it with a tool). An image given only by `uri` is a line too: attachments take `http(s):`/`data:` URLs and
 * a bare `file:` URI means nothing to a model API. The bytes are not checked here: `serveAcp` refuses a prompt
 * whose attachments are not valid (F1).
 *
 * ```ts
 * acpPrompt([{ type: 'text', text: 'What is this?' }, { type: 'image', mimeType: 'image/png', data: 'iVBORw0K' }]);
 * // { role: 'user', content: 'What is this?', attachments: [{ type: 'image', mimeType: 'image/png', data: 'iVBORw0K' }] }
 * ```
 */
export function acpPrompt(blocks: readonly ContentBlock[]): UserMessage {
  const lines: string[] = [];
  const attachments: Attachment[] = [];
  // a blob is named by its whole URI: where it is in the editor's project tells the model what it is
  const attach = (block: ContentBlock) => {
    const attachment = contentAttachment(block, (uri) => uri);
    if (attachment !== undefined) attachments.push(attachment);
  };
  for (const block of blocks) {
    switch (block.type) {
      case 'text':
        lines.push(block.text);
        break;
      case 'image':
      case 'audio':
        if (block.data !== '') attach(block);
        else if (block.type === 'image' && typeof block.uri === 'string') lines.push(`[image](${block.uri})`);
        break;
      case 'resource': {
        const { resource } = block;
        if ('text' in resource) lines.push(`${resource.uri}\n\`\`\`\n${resource.text}\n\`\`\``);
        else attach(block);
        break;
      }
      case 'resource_link':
        lines.push(`[${block.name}](${block.uri})`);
        break;
    }
  }
  const message: UserMessage = { role: 'user', content: lines.join('\n') };
  if (attachments.length > 0) message.attachments = attachments;
  return message;
}
