import type {
  JSONSchema7,
  LanguageModelV3FilePart,
  LanguageModelV3Message,
  LanguageModelV3ToolResultOutput,
  LanguageModelV4FilePart,
  LanguageModelV4Message,
  LanguageModelV4ToolResultOutput,
} from '@ai-sdk/provider';
import type { AgentMessage, AssistantMessage, Attachment, ToolResultMessage, UserMessage } from '../types.js';
import type { SpecificationVersion } from './language-model.js';
import { isReplyPart } from './reply-parts.js';
import { inlineData } from '../util/attachments.js';

type Message = LanguageModelV3Message | LanguageModelV4Message;
type AssistantPart = Extract<LanguageModelV4Message, { role: 'assistant' }>['content'][number];
type ToolResultPart = Extract<LanguageModelV4Message, { role: 'tool' }>['content'][number];

/**
 * P18: the history as an AI SDK prompt. `system` (the option) comes first, then each message where it stands:
 * a `SystemMessage` as a `system` message; a user's text and attachments as `text` and `file` parts; an
 * assistant's reply as its parts (P10: reasoning and metadata kept from its `reasoning`, see `assistantParts`)
 * and its calls as `tool-call` parts; a turn's results as the `tool-result` parts of one `tool` message
 * (`error-text` for an `isError` result, `content` with `file` parts when it has attachments). An assistant turn
 * that failed before it said or asked anything is left out: no API takes an empty reply.
 *
 * ```ts
 * aiSdkPrompt([{ role: 'user', content: 'Hi' }], 'Be brief.', 'v4');
 * // [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: [{ type: 'text', text: 'Hi' }] }]
 * ```
 */
export function aiSdkPrompt(messages: readonly AgentMessage[], system: string | undefined, version: SpecificationVersion): Message[] {
  const prompt: Message[] = system ? [{ role: 'system', content: system }] : [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        if (message.content !== '') prompt.push({ role: 'system', content: message.content });
        break;
      case 'user':
        prompt.push(userPromptMessage(message, version));
        break;
      case 'assistant': {
        const content = assistantParts(message);
        if (content.some((part) => part.type !== 'reasoning')) prompt.push({ role: 'assistant', content });
        break;
      }
      case 'toolResult': {
        const last = prompt[prompt.length - 1];
        const part = toolResultPart(message, version) as ToolResultPart;
        // a turn's results are one tool message, as the AI SDK writes them
        if (last?.role === 'tool') (last.content as ToolResultPart[]).push(part);
        else prompt.push({ role: 'tool', content: [part] } as Message);
        break;
      }
    }
  }
  return prompt;
}

function userPromptMessage(message: UserMessage, version: SpecificationVersion): Message {
  const attachments = message.attachments ?? [];
  const text = message.content === '' && attachments.length > 0 ? [] : [{ type: 'text' as const, text: message.content }];
  return { role: 'user', content: [...text, ...attachments.map((attachment) => filePart(attachment, version))] } as Message;
}

/**
 * P10: an assistant message's parts. The parts this entry kept in `reasoning` go back in the order they came,
 * each with its provider metadata as `providerOptions` (a Gemini thought signature, an OpenAI reasoning item);
 * the kept text parts only when they still spell the message's `content` (else the content is one text part,
 * before the calls); each call with its input as the history holds it. Reasoning of another API is not sent.
 */
export function assistantParts(message: AssistantMessage): AssistantPart[] {
  const kept = (message.reasoning ?? []).filter(isReplyPart);
  const calls = new Map((message.toolCalls ?? []).map((call) => [call.id, call]));
  const texts = kept.flatMap((part) => (part.type === 'ai-sdk.text' ? [part.text] : []));
  const faithful = texts.length > 0 && texts.join('') === message.content;
  const parts: AssistantPart[] = [];
  let textSent = faithful;
  const sendText = () => {
    if (!textSent && message.content !== '') parts.push({ type: 'text', text: message.content });
    textSent = true;
  };
  for (const part of kept) {
    const options = part.providerOptions === undefined ? {} : { providerOptions: part.providerOptions as never };
    if (part.type === 'ai-sdk.reasoning') parts.push({ type: 'reasoning', text: part.text, ...options });
    else if (part.type === 'ai-sdk.text') {
      if (faithful && part.text !== '') parts.push({ type: 'text', text: part.text, ...options });
    } else {
      const call = calls.get(part.toolCallId);
      if (call === undefined) continue;
      sendText();
      parts.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: call.input, ...options });
      calls.delete(call.id);
    }
  }
  sendText();
  for (const call of calls.values()) parts.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: call.input });
  return parts;
}

function toolResultPart(message: ToolResultMessage, version: SpecificationVersion) {
  const attachments = message.attachments ?? [];
  let output: LanguageModelV3ToolResultOutput | LanguageModelV4ToolResultOutput;
  // an error is the model's to read as text (R9); what a failed tool attached is not sent
  if (message.isError) output = { type: 'error-text', value: message.content };
  else if (attachments.length === 0) output = { type: 'text', value: message.content };
  else if (version === 'v4') {
    const files = attachments.map((attachment) => {
      const { data, mediaType, filename } = filePart(attachment, 'v4') as LanguageModelV4FilePart;
      return { type: 'file' as const, data, mediaType, ...(filename !== undefined && { filename }) };
    });
    output = { type: 'content', value: [{ type: 'text', text: message.content }, ...files] };
  } else {
    output = { type: 'content', value: [{ type: 'text', text: message.content }, ...attachments.map(v3ContentPart)] };
  }
  return { type: 'tool-result' as const, toolCallId: message.toolCallId, toolName: message.toolName, output };
}

type V3ContentPart = Extract<LanguageModelV3ToolResultOutput, { type: 'content' }>['value'][number];

function v3ContentPart(attachment: Attachment): V3ContentPart {
  const { base64, url } = source(attachment);
  const image = attachment.type === 'image';
  if (base64 !== undefined) {
    return image
      ? { type: 'image-data', data: base64, mediaType: attachment.mimeType }
      : { type: 'file-data', data: base64, mediaType: attachment.mimeType, ...(attachment.name !== undefined && { filename: attachment.name }) };
  }
  return image ? { type: 'image-url', url: url!.href } : { type: 'file-url', url: url!.href };
}

/** F2: an attachment as a `file` part: base64 data (a `data:` URL's too) as data, any other URL as a URL. */
export function filePart(attachment: Attachment, version: SpecificationVersion): LanguageModelV3FilePart | LanguageModelV4FilePart {
  const { base64, url } = source(attachment);
  const named = attachment.name !== undefined ? { filename: attachment.name } : {};
  if (version === 'v3') return { type: 'file', data: base64 ?? url!, mediaType: attachment.mimeType, ...named };
  const data = base64 !== undefined ? { type: 'data' as const, data: base64 } : { type: 'url' as const, url: url! };
  return { type: 'file', data, mediaType: attachment.mimeType, ...named };
}

function source(attachment: Attachment): { base64?: string; url?: URL } {
  const base64 = inlineData(attachment);
  return base64 !== undefined ? { base64 } : { url: new URL(attachment.url ?? '') };
}

/** A tool's JSON Schema as the AI SDK types it (the same object: P2 sends it as it is). */
export function jsonSchema7(schema: object): JSONSchema7 {
  return schema as JSONSchema7;
}
