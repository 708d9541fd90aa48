/**
 * `rx-tool-loop/sessions`: the series' s07 (S1–S6). A session is an append-only tree of entries in a store —
 * a JSONL file by default — that a conversation is saved into as it goes (`persist`), that branches by moving
 * its leaf (`moveTo`), and that long conversations compact into (`compactWhen`) without cutting a tool call
 * from its result. The only entry of the package that uses Node's `fs` (in `jsonlStore`).
 */
export type { SessionEntry, SessionStore } from './session-entry.js';
export { SessionTree } from './session-tree.js';
export type { WriteObserver } from './session-tree.js';
export { persist } from './persist.js';
export { jsonlStore } from './jsonl-store.js';
export { memoryStore } from './memory-store.js';
export { compactWhen } from './compact-when.js';
export type { CompactOptions } from './compact-when.js';
