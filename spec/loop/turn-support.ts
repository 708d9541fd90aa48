import type { LoopSettings } from '../../src/loop/loop-options.js';
import { ToolRegistry } from '../../src/index.js';
import type { AgentMessage } from '../../src/index.js';
import type { TurnPart, TurnRequest } from '../../src/loop/turn-parts.js';
import { NO_USAGE } from '../../src/loop/usage.js';

/** Checked loop settings for a phase under test: no cap, no timeout, no hooks, unless given. */
export function settings(options: Partial<LoopSettings> = {}): LoopSettings {
  return {
    provider: () => {
      throw new Error('no provider in this spec');
    },
    registry: new ToolRegistry(),
    messages: [],
    maxTurns: 8,
    concurrency: Infinity,
    toolTimeoutMs: Infinity,
    maxToolOutputChars: Infinity,
    signal: undefined,
    ...options,
  };
}

export function request(turn = 1, history: AgentMessage[] = [{ role: 'user', content: 'hi' }]): TurnRequest {
  return { turn, history, usage: NO_USAGE };
}

/** A phase's part as one short word for a marble's values. */
export function partLine(part: TurnPart): string {
  switch (part.type) {
    case 'begin':
      return `begin ${part.request.turn}`;
    case 'call':
      return `call ${part.index} ${part.call.id}${part.duplicateOf === undefined ? '' : ` (dup of ${part.duplicateOf})`}`;
    case 'settled':
      return `settled ${part.index}: ${part.message.content}`;
    case 'tool_start':
      return `tool_start ${part.call.id}`;
    case 'tool_update':
      return `tool_update ${part.toolCallId}: ${part.content}`;
    case 'text_delta':
      return `text ${part.text}`;
    case 'message_end':
      return `message_end ${part.stopReason}`;
    default:
      return part.type;
  }
}
