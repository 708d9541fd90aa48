/**
 * `rx-tool-loop/restate`: durable conversations on Restate (D1–D6). `durableLoop` runs the same loop with each
 * provider call and each tool call journaled as one step, so that a crash or a restart repeats nothing that had
 * finished; `conversationObject` is a virtual object per conversation (`ask`, `history`, `approve`). The only
 * entry of the package that uses `@restatedev/restate-sdk` (an optional peer dependency); the journaling itself
 * is written against `Journal` (`run(name, fn)`), so another engine's steps fit the same wrappers.
 */
export { durableLoop } from './durable-loop.js';
export type { DurableLoopOptions } from './durable-loop.js';
export { conversationObject } from './conversation-object.js';
export type { ApproveRequest } from './conversation-object.js';
export type { AskResult, ConversationSetup } from './ask.js';
export { approvalHook } from './approval.js';
export type { ApprovalOptions, ApprovalWaiting } from './approval.js';
export type { ApprovalDecision } from '../types.js';
export { journaledProvider } from './journaled-provider.js';
export type { ProviderStep } from './journaled-provider.js';
export { journaledTools } from './journaled-tools.js';
export type { ToolStep } from './journaled-tools.js';
export { mergeText } from './merge-text.js';
export { restateJournal } from './restate-journal.js';
export type { Awakeables, Journal } from './journal.js';
