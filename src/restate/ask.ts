import { filter, lastValueFrom } from 'rxjs';
import type { LoopOptions } from '../loop/loop-options.js';
import type { AgentMessage, AssistantMessage, LoopEndReason, LoopEventOf, Usage, UserMessage } from '../types.js';
import { isPlainObject, shown } from '../util/values.js';
import type { ApprovalOptions } from './approval.js';
import { durableLoop } from './durable-loop.js';
import type { Awakeables, Journal } from './journal.js';

/** D2: what a conversation object's `setup(key)` gives each `ask`: the loop's options (not `messages`), approvals. */
export type ConversationSetup = Omit<LoopOptions, 'messages' | 'approvals'> & ApprovalOptions;

/** D2: what `ask` answers: how the loop ended, its last assistant message, and what it cost. */
export interface AskResult {
  reason: LoopEndReason;
  assistant: AssistantMessage;
  usage: Usage;
}

/** D2: the one state key of a conversation object: its history. */
export const HISTORY = 'messages';

/** What `ask` needs of a Restate `ObjectContext`: its key, its state, its steps and awakeables. */
export interface ConversationContext extends Journal, Awakeables {
  key: string;
  get<T>(name: string): PromiseLike<T | null>;
  set<T>(name: string, value: T): void;
}

/** Why a prompt was refused: an `Error` that the object turns into Restate's `TerminalError` (no retry). */
export class BadPrompt extends TypeError {
  override name = 'BadPrompt';
}

/**
 * D2: one `ask` of a conversation: the history from the object's state, the prompt appended, one durable loop
 * (D1), and the history written back once, at its `loop_end` — never at every `turn_end` (that would journal the
 * whole history every turn, growing the journal quadratically). Restate runs a key's `ask`s one at a time, in
 * arrival order (C2's `queue`).
 *
 * ```ts
 * const ask = (ctx: restate.ObjectContext, prompt: string) => askConversation(ctx, setup, prompt);
 * ```
 */
export async function askConversation(ctx: ConversationContext, setup: (key: string) => ConversationSetup, prompt: unknown): Promise<AskResult> {
  const message = promptMessage(prompt);
  const history = (await ctx.get<AgentMessage[]>(HISTORY)) ?? [];
  const end = await lastValueFrom(
    durableLoop(ctx, { ...setup(ctx.key), messages: [...history, message] }).pipe(filter((event): event is LoopEventOf<'loop_end'> => event.type === 'loop_end')),
  );
  ctx.set(HISTORY, end.messages);
  return { reason: end.reason, assistant: end.assistant, usage: end.usage };
}

/** A prompt is a string or a `UserMessage`, copied (`{ role, content }`) as a conversation copies it. */
function promptMessage(prompt: unknown): UserMessage {
  if (typeof prompt === 'string') return { role: 'user', content: prompt };
  if (isPlainObject(prompt) && prompt.role === 'user' && typeof prompt.content === 'string') return { role: 'user', content: prompt.content };
  throw new BadPrompt(`ask: the prompt must be a string or { role: 'user', content: string } (got ${shown(prompt)})`);
}
