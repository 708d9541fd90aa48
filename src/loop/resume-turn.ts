import { Observable, from } from 'rxjs';
import type { AgentMessage, ToolResultMessage } from '../types.js';
import { CallSlots } from './call-slots.js';
import { Reply } from './reply.js';
import type { Resume, TurnPart, TurnRequest } from './turn-parts.js';

/**
 * R22, R36: turn 0 of a run saved while its tools ran, as a source of the turn's parts — in place of
 * `streamReply`, before the same `runTools → draftTurn`. No model is asked: `begin` carries the saved
 * assistant message and its calls' slots (draftTurn starts its draft from them), then each call without a
 * saved result comes as a `call`, which runTools runs as any turn's. Cold and synchronous.
 *
 * ```text
 * saved:      assistant(c1, c2, c3), result c3
 * resumeTurn: (b12|)                  b = begin (the saved message, its three slots), 1, 2 = the calls c1, c2
 * ```
 * (spec/loop/resume-turn.spec.ts)
 */
export function resumeTurn(request: TurnRequest, resume: Resume): Observable<TurnPart> {
  const parts: TurnPart[] = [{ type: 'begin', request, reply: new Reply(), resume }];
  for (const call of resume.calls) if (call.answered === undefined) parts.push(call);
  return from(parts);
}

/**
 * R22: where a loop on `messages` resumes — the last assistant message's calls that have no result yet, when
 * it has any (R21 has checked that only results of its calls follow it): the message's place, the message,
 * and its calls' slots with the results it has.
 */
export function savedTurn(messages: readonly AgentMessage[]): (Resume & { at: number }) | undefined {
  let at = messages.length - 1;
  while (at >= 0 && messages[at]!.role === 'toolResult') at--;
  const assistant = messages[at];
  if (assistant?.role !== 'assistant' || assistant.toolCalls === undefined || assistant.toolCalls.length === 0) return undefined;
  const answered = new Map<string, ToolResultMessage>();
  for (const message of messages.slice(at + 1)) if (message.role === 'toolResult') answered.set(message.toolCallId, message);
  if (answered.size >= assistant.toolCalls.length) return undefined;
  return { at, assistant, calls: new CallSlots().resume(assistant, answered) };
}
