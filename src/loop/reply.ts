import type { ProviderEvent, StopReason, Usage } from '../types.js';
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
