import type { ContentPart, Message, ToolCall as AgUiToolCall } from '@ag-ui/core';
import type {
  AgentMessage,
  AssistantMessage,
  Attachment,
  StopReason,
  ToolCall,
  ToolResultMessage,
} from '../types.js';
import { isPlainObject, shown } from '../util/values.js';

/**
 * The key under which the library keeps, in an AG-UI message's (or call's) `metadata`, what AG-UI has no field
 * for: an assistant message's `stopReason` and `errorMessage`, a result's `toolName`, `isError` and `details`, a
 * call's parsed `input` when its streamed arguments say otherwise. `toAgUi` puts it there (the client merges event
 * metadata into its messages), `fromAgUiMessages` reads it back, so a client's messages give the loop's history.
 */
export const AG_UI_METADATA_KEY = 'rx-tool-loop';

/** What {@link AG_UI_METADATA_KEY} holds on an assistant message, a tool message or a call. */
export interface AgUiMessageNotes {
  stopReason?: StopReason;
  errorMessage?: string;
  toolName?: string;
  isError?: boolean;
  details?: unknown;
  /** On an assistant message: its calls' ids in the history's order, when the client holds them in another. */
  callOrder?: string[];
  /** On a call: its input as the loop parsed it, when the streamed arguments do not parse to it. */
  input?: Record<string, unknown>;
  /** On a call: it never completed (the reply was cut): it is not part of the history. */
  incomplete?: true;
}

/** An attachment as an AG-UI content part (F4): an image, audio, or a document part, its bytes inline or by URL. */
export function agUiPart(attachment: Attachment): ContentPart {
  const source =
    attachment.data !== undefined
      ? { type: 'data' as const, value: attachment.data, mimeType: attachment.mimeType }
      : { type: 'url' as const, value: attachment.url ?? '', mimeType: attachment.mimeType };
  const type = attachment.type === 'file' ? 'document' : attachment.type;
  return attachment.name === undefined ? { type, source } : { type, source, metadata: { name: attachment.name } };
}

/** A message's text and its attachments as AG-UI content: the text alone, or a text part and one part each. */
export function agUiContent(content: string, attachments: readonly Attachment[] | undefined): string | ContentPart[] {
  if (attachments === undefined || attachments.length === 0) return content;
  return [{ type: 'text', text: content }, ...attachments.map(agUiPart)];
}

function notesOf(metadata: unknown): AgUiMessageNotes {
  const notes = isPlainObject(metadata) ? metadata[AG_UI_METADATA_KEY] : undefined;
  return isPlainObject(notes) ? (notes as AgUiMessageNotes) : {};
}

/**
 * The history as AG-UI messages: what a client holds after `toAgUi` streamed it (ids aside: `id` names each
 * message; by default its index). Seed an `HttpAgent`'s `initialMessages` with a saved history, or answer a
 * reconnect with a `MESSAGES_SNAPSHOT` of it.
 *
 * ```ts
 * const agent = new HttpAgent({ url, initialMessages: toAgUiMessages(saved) });
 * ```
 */
export function toAgUiMessages(
  messages: readonly AgentMessage[],
  id: (message: AgentMessage, index: number) => string = (_, index) => String(index),
): Message[] {
  return messages.map((message, index): Message => {
    switch (message.role) {
      case 'system':
        return { id: id(message, index), role: 'system', content: message.content };
      case 'user':
        return { id: id(message, index), role: 'user', content: agUiContent(message.content, message.attachments) };
      case 'assistant': {
        const notes: AgUiMessageNotes = { stopReason: message.stopReason };
        if (message.errorMessage !== undefined) notes.errorMessage = message.errorMessage;
        return {
          id: id(message, index),
          role: 'assistant',
          content: message.content,
          ...(message.toolCalls?.length
            ? {
                toolCalls: message.toolCalls.map((call) => ({
                  id: call.id,
                  type: 'function' as const,
                  function: { name: call.name, arguments: JSON.stringify(call.input) },
                })),
              }
            : {}),
          ...(message.reasoning !== undefined ? { encryptedValue: JSON.stringify(message.reasoning) } : {}),
          metadata: { [AG_UI_METADATA_KEY]: notes },
        };
      }
      case 'toolResult':
        return {
          id: id(message, index),
          role: 'tool',
          toolCallId: message.toolCallId,
          content: agUiContent(message.content, message.attachments),
          metadata: { [AG_UI_METADATA_KEY]: resultNotes(message) },
        };
    }
  });
}

/** What `toAgUi` and `toAgUiMessages` keep of a result that AG-UI has no field for. */
export function resultNotes(message: ToolResultMessage): AgUiMessageNotes {
  const notes: AgUiMessageNotes = { toolName: message.toolName, isError: message.isError };
  if (message.details !== undefined) notes.details = message.details;
  return notes;
}

function partAttachment(part: ContentPart, where: string): Attachment {
  if (part.type === 'text') throw new TypeError(`${where} is a text part`);
  const type = part.type === 'document' ? 'file' : part.type === 'video' ? 'file' : part.type;
  const source = part.source;
  if (source.type === 'file') throw new TypeError(`${where}: a provider's file handle cannot be sent to the loop's providers`);
  const name = isPlainObject(part.metadata) && typeof part.metadata.name === 'string' ? part.metadata.name : undefined;
  const attachment: Attachment =
    source.type === 'data'
      ? { type, mimeType: source.mimeType, data: source.value }
      : { type, mimeType: source.mimeType ?? 'application/octet-stream', url: source.value };
  if (name !== undefined) attachment.name = name;
  return attachment;
}

function fromContent(content: unknown, where: string): { content: string; attachments?: Attachment[] } {
  if (typeof content === 'string') return { content };
  if (content === undefined || content === null) return { content: '' };
  if (!Array.isArray(content)) throw new TypeError(`${where}.content must be a string or an array of parts, got ${shown(content)}`);
  let text = '';
  const attachments: Attachment[] = [];
  content.forEach((part: ContentPart, i) => {
    if (part.type === 'text') text += part.text;
    else attachments.push(partAttachment(part, `${where}.content[${i}]`));
  });
  return attachments.length > 0 ? { content: text, attachments } : { content: text };
}

function callInput(call: { id: string; function: { arguments: string } }, notes: AgUiMessageNotes, where: string) {
  if (notes.input !== undefined) return notes.input;
  const text = call.function.arguments;
  if (text.trim() === '') return {};
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch {
    throw new TypeError(`${where}.function.arguments is not JSON: ${shown(text)}`);
  }
  if (!isPlainObject(input)) throw new TypeError(`${where}.function.arguments is not a JSON object: ${shown(text)}`);
  return input;
}

/**
 * AG-UI messages (a client's, a `RunAgentInput`'s) as the loop's history: `developer` and `system` messages as
 * system messages, content parts as attachments, the library's notes in `metadata` read back (a message a client
 * wrote itself gets the defaults: `stop`, or `toolUse` with calls; a result is an error when it has `error`); the
 * results that follow an assistant message put in its calls' order (a client adds them as they come); `reasoning`
 * and `activity` messages left out (an assistant message's `encryptedValue` is its reasoning, P10). A message
 * the loop cannot take is refused with an error naming it.
 *
 * ```ts
 * const history = fromAgUiMessages(agent.messages); // equals the loop's loop_end.messages
 * ```
 */
export function fromAgUiMessages(messages: readonly Message[]): AgentMessage[] {
  if (!Array.isArray(messages)) throw new TypeError(`fromAgUiMessages: messages must be an array, got ${shown(messages)}`);
  const history: AgentMessage[] = [];
  let calls: readonly ToolCall[] = [];
  let resultsFrom = -1;
  const sortResults = () => {
    if (resultsFrom < 0) return;
    const order = new Map(calls.map((call, i) => [call.id, i]));
    const results = (history.slice(resultsFrom) as ToolResultMessage[]).sort(
      (a, b) => (order.get(a.toolCallId) ?? Infinity) - (order.get(b.toolCallId) ?? Infinity),
    );
    history.splice(resultsFrom, results.length, ...results);
    resultsFrom = -1;
  };
  messages.forEach((message, index) => {
    const where = `messages[${index}]`;
    if (message === null || typeof message !== 'object') throw new TypeError(`fromAgUiMessages: ${where} must be an object, got ${shown(message)}`);
    // a client keeps its activity and reasoning messages where they came: they do not end a turn's results
    if (message.role !== 'tool' && message.role !== 'activity' && message.role !== 'reasoning') sortResults();
    switch (message.role) {
      case 'developer':
      case 'system':
        history.push({ role: 'system', content: String(message.content) });
        return;
      case 'user':
        history.push({ role: 'user', ...fromContent(message.content, where) });
        return;
      case 'assistant': {
        const notes = notesOf(message.metadata);
        calls = ((message.toolCalls ?? []) as AgUiToolCall[])
          .filter((call) => notesOf(call.metadata).incomplete !== true)
          .map((call, i) => ({
            id: call.id,
            name: call.function.name,
            input: callInput(call, notesOf(call.metadata), `fromAgUiMessages: ${where}.toolCalls[${i}]`),
          }));
        if (notes.callOrder !== undefined) {
          const order = notes.callOrder;
          calls = [...calls].sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id));
        }
        const assistant: AssistantMessage = {
          role: 'assistant',
          content: message.content ?? '',
          stopReason: notes.stopReason ?? (calls.length > 0 ? 'toolUse' : 'stop'),
        };
        if (calls.length > 0) assistant.toolCalls = [...calls];
        if (notes.errorMessage !== undefined) assistant.errorMessage = notes.errorMessage;
        const reasoning = reasoningOf(message.encryptedValue);
        if (reasoning !== undefined) assistant.reasoning = reasoning;
        history.push(assistant);
        return;
      }
      case 'tool': {
        const notes = notesOf(message.metadata);
        const result: ToolResultMessage = {
          role: 'toolResult',
          toolCallId: message.toolCallId,
          toolName: notes.toolName ?? calls.find((call) => call.id === message.toolCallId)?.name ?? '',
          isError: notes.isError ?? message.error !== undefined,
          ...fromContent(message.content, where),
        };
        if (notes.details !== undefined) result.details = notes.details;
        if (resultsFrom < 0) resultsFrom = history.length;
        history.push(result);
        return;
      }
      case 'reasoning':
      case 'activity':
        return;
      default:
        throw new TypeError(`fromAgUiMessages: ${where} has role ${JSON.stringify((message as { role: unknown }).role)}, which the loop does not take`);
    }
  });
  sortResults();
  return history;
}

// P10: the reasoning blocks travel as the message's opaque `encryptedValue`; one the library did not write is not sent back
function reasoningOf(encrypted: string | undefined): unknown[] | undefined {
  if (encrypted === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(encrypted);
    return Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
