/**
 * P10 for the AI SDK: what of an assistant reply must go back to the model beside its text and calls — its
 * reasoning parts, and the provider metadata of every part (OpenAI's reasoning item ids and encrypted content,
 * Gemini's thought signatures on text, reasoning and calls). The reply's parts travel, in the order they came,
 * as `message_end.reasoning` (opaque to the loop, kept as `AssistantMessage.reasoning`) and go back as the
 * prompt's parts, their metadata as `providerOptions`.
 */

/** Provider metadata or options: one record per provider name. */
export type ProviderRecords = Record<string, Record<string, unknown>>;

/** One part of a reply, as it is kept: a reasoning part whole, a text part whole, a call by its id. */
export type ReplyPart =
  | { type: 'ai-sdk.reasoning'; text: string; providerOptions?: ProviderRecords }
  | { type: 'ai-sdk.text'; text: string; providerOptions?: ProviderRecords }
  | { type: 'ai-sdk.tool-call'; toolCallId: string; providerOptions?: ProviderRecords };

const TYPES: ReadonlySet<unknown> = new Set(['ai-sdk.reasoning', 'ai-sdk.text', 'ai-sdk.tool-call']);

/** An entry of `AssistantMessage.reasoning` this entry wrote; another API's blocks are not sent to an AI SDK model. */
export function isReplyPart(value: unknown): value is ReplyPart {
  return typeof value === 'object' && value !== null && TYPES.has((value as { type?: unknown }).type);
}

/** `into`, with `more` merged in per provider (a part's metadata may come on its start, its deltas and its end). */
export function mergeRecords(into: ProviderRecords | undefined, more: unknown): ProviderRecords | undefined {
  if (typeof more !== 'object' || more === null) return into;
  const merged: ProviderRecords = { ...into };
  for (const [name, record] of Object.entries(more as Record<string, unknown>)) {
    if (typeof record === 'object' && record !== null) merged[name] = { ...merged[name], ...(record as Record<string, unknown>) };
  }
  return Object.keys(merged).length > 0 ? merged : into;
}
