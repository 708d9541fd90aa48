import * as restate from '@restatedev/restate-sdk';
import type { AgentMessage, ApprovalDecision, UserMessage } from '../types.js';
import { isPlainObject, shown } from '../util/values.js';
import { type AskResult, BadPrompt, type ConversationSetup, HISTORY, askConversation } from './ask.js';

/** D3: what `approve` takes: the awakeable id from the waiting event, and the decision. */
export interface ApproveRequest {
  id: string;
  decision: ApprovalDecision;
}

/**
 * D2: a Restate virtual object keyed by conversation id, one writer per conversation. Its handlers:
 * `ask(prompt)` (exclusive: Restate queues a key's calls, C2's `queue`) runs one durable loop (D1) and answers
 * `{ reason, assistant, usage }`; `history()` (shared, read-only) is the history in the object's state;
 * `approve({ id, decision })` (shared, so it runs while `ask` waits) resolves a waiting approval (D3).
 * `setup(key)` gives each `ask` the loop's options; it runs again on a replay, so it builds, it does not act.
 *
 * ```ts
 * const chat = conversationObject('chat', () => ({ provider, registry, needsApproval: (call) => call.name === 'pay' }));
 * http2.createServer(restate.createEndpointHandler({ services: [chat] })).listen(9080, '127.0.0.1');
 * // POST {ingress}/chat/{conversationId}/ask  "hello"
 * ```
 */
export function conversationObject<N extends string>(name: N, setup: (key: string) => ConversationSetup) {
  if (typeof name !== 'string' || name === '') throw new TypeError(`conversationObject: name must be a non-empty string (got ${shown(name)})`);
  if (typeof setup !== 'function') throw new TypeError(`conversationObject: setup must be a function (got ${shown(setup)})`);
  return restate.object({
    name,
    handlers: {
      ask: async (ctx: restate.ObjectContext, prompt: string | UserMessage): Promise<AskResult> => {
        try {
          return await askConversation(ctx, setup, prompt);
        } catch (error) {
          // a prompt that can never run is refused, not retried for ever
          if (error instanceof BadPrompt) throw new restate.TerminalError(error.message);
          throw error;
        }
      },
      history: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext): Promise<AgentMessage[]> => (await ctx.get<AgentMessage[]>(HISTORY)) ?? []),
      approve: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext, request: ApproveRequest): Promise<void> => {
        if (!isPlainObject(request) || typeof request.id !== 'string' || !('decision' in request)) {
          throw new restate.TerminalError(`approve: the request must be { id: string, decision } (got ${shown(request)})`);
        }
        ctx.resolveAwakeable(request.id, request.decision);
      }),
    },
  });
}
