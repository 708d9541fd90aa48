import type { ToolCall as AcpToolCall, ContentBlock, SessionUpdate, ToolCallContent, ToolKind } from '@agentclientprotocol/sdk';
import type { AgentMessage, Attachment, ConversationEvent, ToolCall, ToolResultMessage } from '../types.js';

/** E1: what kind of tool a call is, for the editor's icon; default {@link guessToolKind}. */
export type ToolKindOf = (call: ToolCall) => ToolKind;

/** The first word of a tool's name that says what it does, and the ACP kind that word means. */
const KIND_WORDS: readonly [RegExp, ToolKind][] = [
  [/(?:^|[_\-.\s])(?:read|get|list|ls|cat|open|view|show|load)(?:$|[_\-.\s])/i, 'read'],
  [/(?:^|[_\-.\s])(?:search|find|grep|glob|lookup|query)(?:$|[_\-.\s])/i, 'search'],
  [/(?:^|[_\-.\s])(?:delete|remove|rm|unlink)(?:$|[_\-.\s])/i, 'delete'],
  [/(?:^|[_\-.\s])(?:move|mv|rename)(?:$|[_\-.\s])/i, 'move'],
  [/(?:^|[_\-.\s])(?:edit|write|patch|update|create|replace|insert|save)(?:$|[_\-.\s])/i, 'edit'],
  [/(?:^|[_\-.\s])(?:fetch|http|download|browse|web|url|curl)(?:$|[_\-.\s])/i, 'fetch'],
  [/(?:^|[_\-.\s])(?:run|exec|execute|shell|bash|command|terminal|deploy)(?:$|[_\-.\s])/i, 'execute'],
  [/(?:^|[_\-.\s])(?:think|plan|reason)(?:$|[_\-.\s])/i, 'think'],
];

/**
 * A tool's ACP kind guessed from the words of its name (`read_text_file` → `read`, `run_tests` → `execute`,
 * `deleteBranch` → `delete`); `other` when no word says. The first word that names a kind decides.
 *
 * ```ts
 * guessToolKind({ id: 'c1', name: 'search_files', input: {} }); // 'search'
 * ```
 */
export function guessToolKind(call: ToolCall): ToolKind {
  // camelCase splits as snake_case does
  const name = call.name.replace(/([a-z0-9])([A-Z])/g, '$1_$2');
  let best: { at: number; kind: ToolKind } | undefined;
  for (const [word, kind] of KIND_WORDS) {
    const at = name.search(word);
    if (at >= 0 && (best === undefined || at < best.at)) best = { at, kind };
  }
  return best?.kind ?? 'other';
}

const acpText = (value: string): ContentBlock => ({ type: 'text', text: value });
const asContent = (value: string): ToolCallContent[] => (value === '' ? [] : [{ type: 'content', content: acpText(value) }]);

/** A result's content for the editor: its text, then each attachment it carries as an image (with bytes) or a link. */
function resultContent(result: ToolResultMessage): ToolCallContent[] {
  const content = asContent(result.content);
  for (const block of attachmentBlocks(result.attachments)) content.push({ type: 'content', content: block });
  return content;
}

/** Attachments as ACP content: images with their bytes as images, anything else as a link to its URL. */
function attachmentBlocks(attachments: readonly Attachment[] | undefined): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  for (const attachment of attachments ?? []) {
    if (attachment.type === 'image' && attachment.data !== undefined) blocks.push({ type: 'image', mimeType: attachment.mimeType, data: attachment.data });
    else if (attachment.type === 'audio' && attachment.data !== undefined) blocks.push({ type: 'audio', mimeType: attachment.mimeType, data: attachment.data });
    else if (attachment.url !== undefined) blocks.push({ type: 'resource_link', name: attachment.name ?? attachment.type, uri: attachment.url, mimeType: attachment.mimeType });
  }
  return blocks;
}

const rawOutput = (result: ToolResultMessage) => (result.details === undefined ? { content: result.content } : { content: result.content, details: result.details });

/** A call as the editor first sees it — its title, kind and input, `pending` — in a `tool_call` update and a permission request. */
export function pendingToolCall(call: ToolCall, kindOf: ToolKindOf): AcpToolCall {
  return { toolCallId: call.id, title: call.name, kind: kindOf(call), status: 'pending', rawInput: call.input };
}

/** The first `tool_call` update of a call: its title, kind and input, `pending` until it starts. */
function toolCallUpdate(call: ToolCall, kindOf: ToolKindOf): SessionUpdate {
  return { sessionUpdate: 'tool_call', ...pendingToolCall(call, kindOf) };
}

/** The last update of a call: `completed`, or `failed` for an error result (R9), with its content and output. */
function resultUpdate(result: ToolResultMessage): SessionUpdate {
  return {
    sessionUpdate: 'tool_call_update',
    toolCallId: result.toolCallId,
    status: result.isError ? 'failed' : 'completed',
    content: resultContent(result),
    rawOutput: rawOutput(result),
  };
}

/**
 * E1: the `session/update`s one event of a conversation stands for — a projection, with no state of its own:
 * a text delta is an `agent_message_chunk`, a reasoning delta an `agent_thought_chunk`, the model's `tool_call` a
 * `tool_call` (`pending`, with its `rawInput` and a kind), `tool_start` a `tool_call_update` to `in_progress`, a
 * `tool_update` one with the progress as content, and `tool_result` the last one (`completed`, or `failed` for an
 * error result, with its content and `rawOutput`). Every other event stands for nothing: the editor shows the
 * prompt itself, and the stop reason answers `session/prompt`.
 *
 * ```text
 * events:   s-t-c-e-S-u-R-…      t = text_delta, c = tool_call, S = tool_start, u = tool_update, R = tool_result
 * updates:  --m-p---i-u-d-…      m = agent_message_chunk, p = tool_call (pending), i/u/d = tool_call_update
 * ```
 *
 * ```ts
 * events$.pipe(concatMap((event) => acpUpdates(event))).subscribe((update) => send({ sessionId, update }));
 * ```
 */
export function acpUpdates(event: ConversationEvent, kindOf: ToolKindOf = guessToolKind): SessionUpdate[] {
  switch (event.type) {
    case 'text_delta':
      return event.text === '' ? [] : [{ sessionUpdate: 'agent_message_chunk', content: acpText(event.text) }];
    case 'reasoning_delta':
      return event.text === '' ? [] : [{ sessionUpdate: 'agent_thought_chunk', content: acpText(event.text) }];
    case 'tool_call':
      return [toolCallUpdate(event.call, kindOf)];
    case 'tool_start':
      return [{ sessionUpdate: 'tool_call_update', toolCallId: event.call.id, status: 'in_progress' }];
    case 'tool_update':
      return [{ sessionUpdate: 'tool_call_update', toolCallId: event.toolCallId, content: asContent(event.content) }];
    case 'tool_result':
      return [resultUpdate(event.message)];
    default:
      return [];
  }
}

/**
 * E1: a saved history as the `session/update`s `session/load` replays: each user message as a
 * `user_message_chunk` (its attachments as images or links), each assistant message's text as an
 * `agent_message_chunk` and each of its calls as a `tool_call`, each result as the call's last
 * `tool_call_update`. System messages are the agent's, not the conversation's: not shown.
 */
export function historyUpdates(messages: readonly AgentMessage[], kindOf: ToolKindOf = guessToolKind): SessionUpdate[] {
  const updates: SessionUpdate[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'user':
        if (message.content !== '') updates.push({ sessionUpdate: 'user_message_chunk', content: acpText(message.content) });
        for (const content of attachmentBlocks(message.attachments)) updates.push({ sessionUpdate: 'user_message_chunk', content });
        break;
      case 'assistant':
        if (message.content !== '') updates.push({ sessionUpdate: 'agent_message_chunk', content: acpText(message.content) });
        for (const call of message.toolCalls ?? []) updates.push(toolCallUpdate(call, kindOf));
        break;
      case 'toolResult':
        updates.push(resultUpdate(message));
        break;
    }
  }
  return updates;
}
