/**
 * P19: prompt caching on the Messages API. A `cache_control: { type: 'ephemeral' }` breakpoint caches the
 * request's prefix up to and including its block (tools, then system, then messages, in that order), for five
 * minutes from its last use; a later request that starts with the same prefix reads it at a tenth of the price.
 * The API takes at most 4 breakpoints: this marks 3 — the last tool (the tools alone, which change least), the
 * system prompt (tools and system), and the last block of the last message (the whole conversation so far, so
 * the next turn, which repeats it, reads it from the cache) — and leaves the fourth to the caller's `extraBody`.
 * A block the API refuses to mark (a thinking block, an empty text) is not marked. Prefixes shorter than the
 * model's least cacheable length (1,024 tokens on most models) are not cached, and cost nothing extra.
 */

/** What `anthropicProvider`'s `cache` option takes: `'auto'` (the default) marks the breakpoints, `'off'` none. */
export type AnthropicCache = 'auto' | 'off';

const EPHEMERAL = { type: 'ephemeral' } as const;

/** The parts of a Messages API request body that take breakpoints; the rest is copied as it is. */
export interface CacheableBody {
  [key: string]: unknown;
  system?: string | object[];
  tools?: object[];
  messages: { role: string; content: string | object[] }[];
}

/**
 * `body` with its breakpoints marked (a new object; `body` is not changed).
 *
 * ```ts
 * withCacheBreakpoints({ model: 'm', system: 'Be brief.', tools: [weather], messages: [{ role: 'user', content: 'Paris?' }] });
 * // { model: 'm', system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
 * //   tools: [{ …weather, cache_control: { type: 'ephemeral' } }],
 * //   messages: [{ role: 'user', content: [{ type: 'text', text: 'Paris?', cache_control: { type: 'ephemeral' } }] }] }
 * ```
 */
export function withCacheBreakpoints(body: CacheableBody): CacheableBody {
  const marked: CacheableBody = { ...body };
  const { system, tools, messages } = body;
  if (tools !== undefined && tools.length > 0) marked.tools = [...tools.slice(0, -1), { ...tools[tools.length - 1], cache_control: EPHEMERAL }];
  if (typeof system === 'string' && system !== '') marked.system = [{ type: 'text', text: system, cache_control: EPHEMERAL }];
  const last = messages[messages.length - 1];
  if (last !== undefined) {
    const blocks = typeof last.content === 'string' ? (last.content === '' ? [] : [{ type: 'text', text: last.content }]) : last.content;
    const block = blocks[blocks.length - 1];
    if (block !== undefined && markable(block)) {
      const content = [...blocks.slice(0, -1), { ...block, cache_control: EPHEMERAL }];
      marked.messages = [...messages.slice(0, -1), { ...last, content }];
    }
  }
  return marked;
}

function markable(block: object): boolean {
  const { type, text } = block as { type?: unknown; text?: unknown };
  if (type === 'thinking' || type === 'redacted_thinking') return false; // the API caches them, but refuses a mark on them
  return !(type === 'text' && text === ''); // nor on an empty text block
}
