import type { Usage } from '../types.js';

/**
 * R27: OpenAI's token counts as {@link Usage}, for both of its APIs — Chat Completions names them
 * `prompt_tokens` / `completion_tokens` / `prompt_tokens_details`, Responses `input_tokens` / `output_tokens` /
 * `input_tokens_details`; the caller reads its own names. The cached tokens are read from the cache and are
 * part of the input, as OpenAI counts them. `undefined` when neither count is there.
 */
export function openAIUsage(input: unknown, output: unknown, details: unknown): Usage | undefined {
  if (!isTokenCount(input) && !isTokenCount(output)) return undefined;
  const usage: Usage = { inputTokens: isTokenCount(input) ? input : 0, outputTokens: isTokenCount(output) ? output : 0 };
  const cached = typeof details === 'object' && details !== null ? (details as { cached_tokens?: unknown }).cached_tokens : undefined;
  if (isTokenCount(cached)) usage.cacheReadTokens = cached;
  return usage;
}

function isTokenCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}
