import type { Attributes } from '@opentelemetry/api';
import type { AgentMessage, Attachment, ToolCall } from '../types.js';

/**
 * O2 revised: the content of a run as the GenAI conventions' attributes (`gen_ai.input.messages`,
 * `gen_ai.output.messages`, `gen_ai.system_instructions`, in their JSON schemas of roles and parts), each a
 * JSON string: an attribute of the OpenTelemetry API holds no nested objects, and the conventions allow the
 * string form there.
 */

type Part =
  | { type: 'text'; content: string }
  | { type: 'reasoning'; content: string }
  | { type: 'tool_call'; id: string; name: string; arguments: unknown }
  | { type: 'tool_call_response'; id: string; response: string }
  /** F4: an attachment, its bytes (only ever with `recordContent`) or its web URL. */
  | { type: 'blob'; modality: string; mime_type: string; content: string }
  | { type: 'uri'; modality: string; mime_type: string; uri: string };

interface ChatMessage {
  role: 'user' | 'assistant' | 'tool';
  parts: Part[];
}

/**
 * The history sent to a model as the conventions' input messages; its system messages, which the providers
 * send as the API's system instruction, as `gen_ai.system_instructions` (none: left out).
 */
export function inputAttributes(history: readonly AgentMessage[]): Attributes {
  const messages: ChatMessage[] = [];
  const instructions: Part[] = [];
  for (const message of history) {
    switch (message.role) {
      case 'system':
        instructions.push({ type: 'text', content: message.content });
        break;
      case 'user':
        messages.push({ role: 'user', parts: [{ type: 'text', content: message.content }, ...attachmentParts(message.attachments)] });
        break;
      case 'assistant':
        messages.push({ role: 'assistant', parts: replyParts('', message.content, message.toolCalls ?? []) });
        break;
      case 'toolResult':
        messages.push({ role: 'tool', parts: [{ type: 'tool_call_response', id: message.toolCallId, response: message.content }, ...attachmentParts(message.attachments)] });
        break;
    }
  }
  const attributes: Attributes = { 'gen_ai.input.messages': json(messages) };
  if (instructions.length > 0) attributes['gen_ai.system_instructions'] = json(instructions);
  return attributes;
}

/** One reply (a model's output message): its reasoning, its text, its calls, and why it ended. */
export function outputAttributes(reasoning: string, text: string, calls: readonly ToolCall[], finishReason: string): Attributes {
  return { 'gen_ai.output.messages': json([{ role: 'assistant', parts: replyParts(reasoning, text, calls), finish_reason: finishReason }]) };
}

function replyParts(reasoning: string, text: string, calls: readonly ToolCall[]): Part[] {
  const parts: Part[] = [];
  if (reasoning !== '') parts.push({ type: 'reasoning', content: reasoning });
  if (text !== '') parts.push({ type: 'text', content: text });
  for (const call of calls) parts.push({ type: 'tool_call', id: call.id, name: call.name, arguments: call.input });
  return parts;
}

/** F4: attachments as the conventions' `blob` parts (base64 `content`) and `uri` parts; `modality` is the attachment's type. */
function attachmentParts(attachments: readonly Attachment[] | undefined): Part[] {
  if (attachments === undefined) return [];
  return attachments.map((a) =>
    a.data !== undefined
      ? { type: 'blob', modality: a.type, mime_type: a.mimeType, content: a.data }
      : { type: 'uri', modality: a.type, mime_type: a.mimeType, uri: a.url ?? '' },
  );
}

/** Content for an attribute: JSON (histories and inputs are JSON, R21, C5); what will not serialise, as text. */
export function json(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
