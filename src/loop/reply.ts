import type { AssistantMessage, ProviderEvent, StopReason, ToolCall, Usage } from '../types.js';
import { TextBuffer } from './text-buffer.js';

/**
 * The model's reply as it streams in: its text so far and, once it ended, how — its `message_end`, or a
 * failure (R10). streamReply writes it, reading each event once, where a read that throws is the
 * provider's failure (R20); draftTurn reads it to make the assistant message.
 */
export class Reply {
  readonly text = new TextBuffer();
  stopReason: StopReason = 'error';
  errorMessage: string | undefined;
  usage: Usage | undefined;
  reasoning: unknown[] | undefined;
  /** Its message_end came, or it failed. */
  ended = false;

  /** Takes one event that the event-order check let through. */
  record(event: ProviderEvent): void {
    switch (event.type) {
      case 'text_delta':
        this.text.append(event.text);
        break;
      case 'message_end':
        this.ended = true;
        this.stopReason = event.stopReason;
        this.errorMessage = event.errorMessage;
        this.usage = event.usage;
        this.reasoning = event.reasoning;
        break;
    }
  }

  /** R10: the provider failed (or, H6, prepareTurn did, or the registry), as `errorMessage` says; what arrived before stays. */
  fail(errorMessage: string): void {
    this.ended = true;
    this.stopReason = 'error';
    this.errorMessage = errorMessage;
  }
}

/**
 * The assistant message a reply that ended makes, as the loop's history holds it: its text, its calls (when it
 * made any), its stop reason, and its error and reasoning when there are some. draftTurn makes it at the turn's
 * end; the view model (R29 widened) at the reply's `message_end`, from the events.
 */
export function assistantMessage(
  content: string,
  stopReason: StopReason,
  calls: ToolCall[],
  errorMessage: string | undefined,
  reasoning: unknown[] | undefined,
): AssistantMessage {
  const message: AssistantMessage = { role: 'assistant', content, stopReason };
  if (calls.length > 0) message.toolCalls = calls;
  if (errorMessage !== undefined) message.errorMessage = errorMessage;
  if (Array.isArray(reasoning) && reasoning.length > 0) message.reasoning = reasoning;
  return message;
}
