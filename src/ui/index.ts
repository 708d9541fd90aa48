/**
 * `rx-tool-loop/ui`: a run's events on the wire in the protocols front-ends speak — AG-UI and the AI SDK's
 * UI message stream — over SSE with resume. Its types come from the optional peers `@ag-ui/core` and `ai`.
 */
export { writeSse } from './write-sse.js';
export { sseResponse } from './sse-response.js';
export type { SseFailure, SseFailureReason, SseOptions } from './sse-options.js';
export { replayable, ReplayableRun } from './replayable.js';
export type { Resumed } from './replayable.js';
export { fromSse, SseError } from './from-sse.js';
