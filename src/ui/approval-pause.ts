import { addUsage, NO_USAGE } from '../loop/usage.js';
import type { ConversationEvent, ToolCall, Usage } from '../types.js';

/**
 * H8's two requests (U1, U2), decided once for both front-end protocols: a run stops when a call of its turn waits
 * for a person, the turn's reply is over, and no tool of the turn runs (none between its `tool_start` and its
 * result). The turn's calls without a result — those waiting, and those behind `maxConcurrency` or an unanswered
 * `beforeToolCall` — are then the next request's, whose turn 0 runs them (R22). It decides; the operator emits.
 * It also keeps the loop's usage so far, which the run's last event carries at a pause as at a `loop_end` (U1, U2).
 *
 * ```text
 * events:  s-c-d-e-W-x-R       s message_start, c/d calls, e message_end, W tool_approval (c), x tool_start (d), R d's result
 * see():   f-f-f-f-f-f-t       true at R: c waits, the reply is over, nothing runs
 * ```
 */
export class ApprovalPause {
  /** The turn's calls that wait for a person, in the order they asked. */
  readonly waiting = new Map<string, ToolCall>();
  private readonly running = new Set<string>();
  private replyOpen = false;
  private loopUsage: Usage = NO_USAGE; // the loop's totals at its last turn_end
  private replyUsage: Usage | undefined; // the turn's reply's, until its turn_end counts it

  /** The loop's token counts so far (R27): its last `turn_end`'s, plus the current reply's (`message_end`). */
  get usage(): Usage {
    return addUsage(this.loopUsage, this.replyUsage);
  }

  /** Reads one event (every event of the loop, in order); true when the run is to stop after it. */
  see(event: ConversationEvent): boolean {
    switch (event.type) {
      case 'turn_start':
        this.waiting.clear();
        this.running.clear();
        this.replyOpen = false; // turn 0 asks no model (R22): its calls come with no reply
        this.replyUsage = undefined;
        return false;
      case 'message_start':
        this.replyOpen = true;
        return false;
      case 'tool_start':
        this.running.add(event.call.id);
        return false;
      case 'message_end':
        this.replyOpen = false;
        this.replyUsage = event.usage;
        break;
      case 'tool_approval':
        this.waiting.set(event.call.id, event.call);
        break;
      case 'tool_result':
        this.waiting.delete(event.message.toolCallId);
        this.running.delete(event.message.toolCallId);
        break;
      case 'turn_end':
        this.loopUsage = event.usage;
        this.replyUsage = undefined;
        return false;
      case 'loop_end':
        // a conversation's next loop counts from nothing
        this.loopUsage = NO_USAGE;
        this.replyUsage = undefined;
        return false;
      default:
        return false;
    }
    return this.waiting.size > 0 && !this.replyOpen && this.running.size === 0;
  }
}
