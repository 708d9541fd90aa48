import type { AgentMessage, AssistantMessage, ConversationEvent } from '../types.js';
import { attachmentLines } from './attachments.js';
import { kindOf } from './values.js';

/**
 * The one short, stable line of an event (T2): what `describeEvent` of rx-tool-loop/testing prints, and
 * what an agent tool's update says of an inner event without text (A1). Here, not in the testing entry,
 * so that the main entry shares the one implementation without importing the kit. It expects an event
 * (describeEvent checks its argument first) and throws on one without its fields.
 */
export function eventLine(event: ConversationEvent): string {
  // a prompt a conversation's abort$ dropped (version 2, left open a): the text, so a test can see it is not lost
  const loose = event as { type: string; message?: { content?: unknown } };
  if (loose.type === 'prompt_dropped' && typeof loose.message?.content === 'string') return `prompt_dropped ${loose.message.content}`;
  switch (event.type) {
    case 'turn_start':
      // J5: a turn that asks for the typed answer says so
      return event.answer === true ? `turn_start ${event.turn} answer` : `turn_start ${event.turn}`;
    case 'message_start':
      return 'message_start';
    case 'text_delta':
      return `text_delta ${event.text}`;
    case 'tool_call':
      return `tool_call ${event.call.name}${inputText(event.call)}`;
    case 'tool_start':
      // the input the tool runs on: a hook's edit (H2) shows here, the model's own on the tool_call
      return `tool_start ${event.call.name}${inputText(event.call)}`;
    case 'tool_approval':
      // H8: the call waits for a person, on the input it would run on
      return `tool_approval ${event.call.name}${inputText(event.call)}`;
    case 'tool_call_delta':
      return `tool_call_delta ${event.name ?? `#${event.index}`}: ${event.argumentsDelta}`;
    case 'reasoning_delta':
      return `reasoning_delta ${event.text}`;
    case 'message_end':
      return `message_end ${event.stopReason}`;
    case 'tool_update':
      // A4: an agent tool's update names the inner event it forwards, at any depth
      return `tool_update ${event.toolName}: ${event.event === undefined ? event.content : eventLine(event.event)}`;
    case 'tool_result':
      // F4: each attachment as its line, `[image image/png, 1234 bytes]`: never its bytes
      return `tool_result ${event.message.toolName}: ${payload(event.message.content)}${attachmentLines(event.message.attachments)}${event.message.isError ? ' (isError)' : ''}`;
    case 'turn_end':
      return `turn_end ${event.turn} (${why(event.assistant)}): ${event.messages.map(brief).join(', ')}`;
    case 'loop_end':
      // J5: the typed answer, when there is one, as JSON
      return 'output' in event ? `loop_end ${event.reason} ${outputText(event.output)}` : `loop_end ${event.reason}`;
    case 'user_message':
      return `user_message ${event.message.content}${attachmentLines(event.message.attachments)}`;
    case 'prompt_dropped':
      return `prompt_dropped ${event.message.content}`;
    default:
      // `as never`: an event type added to ConversationEvent later still compiles here, and reads as unknown
      return unknownEvent(event as never);
  }
}

/**
 * A call's input after its name (R32): ` {"q":"rx"}` as JSON, nothing for `{}`, so that `call('slow')` still
 * reads `tool_call slow`; what JSON cannot write (a cycle, a BigInt, a getter that throws) reads as its kind,
 * ` (an object)`: a line never fails on a hostile model's input (R17).
 */
function inputText(call: { readonly input?: unknown }): string {
  let input: unknown;
  let json: string | undefined;
  try {
    input = call.input;
    json = JSON.stringify(input);
  } catch {
    json = undefined;
  }
  if (json === '{}') return '';
  return ` ${json === undefined ? `(${kindOf(input)})` : payload(json)}`;
}

/** A typed answer as a line shows it (J5): its JSON, shortened as a payload is; what JSON cannot write, its kind. */
function outputText(output: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(output);
  } catch {
    json = undefined;
  }
  return json === undefined ? `(${kindOf(output)})` : payload(json);
}

/** Past this many characters a payload is shortened. */
const PAYLOAD_MAX = 60;

/**
 * A payload as a line shows it: whole up to {@link PAYLOAD_MAX} characters; longer, its first 48, `…` and a
 * hash of the whole text (`#` and 8 hex digits, FNV-1a), so an edit anywhere in it still changes the line.
 */
function payload(text: string): string {
  if (text.length <= PAYLOAD_MAX) return text;
  // never cut a surrogate pair in two
  const cut = /[\uD800-\uDBFF]/.test(text.charAt(47)) ? 47 : 48;
  return `${text.slice(0, cut)}… #${fnv1a(text)}`;
}

/** The 32-bit FNV-1a hash of the text's UTF-16 code units, as 8 hex digits: stable across runs and platforms. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, '0');
}

function why({ stopReason, errorMessage }: AssistantMessage): string {
  return errorMessage === undefined ? stopReason : `${stopReason}: ${errorMessage}`;
}

/** `system`, `user`, `assistant "text"[tool,tool]`, `toolResult tool`: the shape of the history. */
function brief(message: AgentMessage): string {
  switch (message.role) {
    case 'system':
      return 'system';
    case 'user':
      return 'user';
    case 'assistant': {
      const content = message.content === '' ? '' : ` "${message.content}"`;
      const calls = message.toolCalls === undefined ? '' : `[${message.toolCalls.map((c) => c.name).join(',')}]`;
      return `assistant${content}${calls}`;
    }
    case 'toolResult':
      return `toolResult ${message.toolName}`;
  }
}

function unknownEvent(event: never): string {
  return `unknown event ${JSON.stringify((event as { type?: unknown }).type)}`;
}
