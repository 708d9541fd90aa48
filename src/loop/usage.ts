import type { Usage } from '../types.js';

/** No tokens counted yet. */
export const NO_USAGE: Usage = Object.freeze({ inputTokens: 0, outputTokens: 0 });

/**
 * R27: running totals. The cache counts appear once a provider reported one. Anything that is not a
 * finite number counts as nothing: a provider's odd usage never breaks the loop.
 */
export function addUsage(total: Usage, more: Usage | undefined): Usage {
  if (more === undefined || typeof more !== 'object' || more === null) return total;
  const sum: Usage = { inputTokens: total.inputTokens + count(more.inputTokens), outputTokens: total.outputTokens + count(more.outputTokens) };
  const cacheRead = optional(total.cacheReadTokens, more.cacheReadTokens);
  const cacheWrite = optional(total.cacheWriteTokens, more.cacheWriteTokens);
  if (cacheRead !== undefined) sum.cacheReadTokens = cacheRead;
  if (cacheWrite !== undefined) sum.cacheWriteTokens = cacheWrite;
  return sum;
}

/** A copy for a consumer (who may change it) — field by field, which is cheaper than a spread on every turn. */
export function copyUsage({ inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens }: Usage): Usage {
  const copy: Usage = { inputTokens, outputTokens };
  if (cacheReadTokens !== undefined) copy.cacheReadTokens = cacheReadTokens;
  if (cacheWriteTokens !== undefined) copy.cacheWriteTokens = cacheWriteTokens;
  return copy;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

function optional(total: number | undefined, more: unknown): number | undefined {
  const reported = typeof more === 'number' && Number.isFinite(more);
  if (total === undefined && !reported) return undefined;
  return (total ?? 0) + (reported ? more : 0);
}
