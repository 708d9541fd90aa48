/**
 * `rx-tool-loop/ui`: a run's events on the wire in the protocols front-ends speak — AG-UI and the AI SDK's
 * UI message stream — over SSE with resume. Its types come from the optional peers `@ag-ui/core` and `ai`.
 */
export { writeSse } from './write-sse.js';
export { sseResponse } from './sse-response.js';
export type { SseFailure, SseFailureReason, SseOptions } from './sse-options.js';
export { replayable, ReplayableRun } from './replayable.js';
export type { Resumed } from './replayable.js';
export { toAgUi, APPROVAL_RESPONSE_SCHEMA } from './to-ag-ui.js';
export type { AgUiEvent, ToAgUiOptions } from './to-ag-ui.js';
export { fromAgUiInput } from './from-ag-ui-input.js';
export type { AgUiRun } from './from-ag-ui-input.js';
export { toAgUiMessages, fromAgUiMessages, AG_UI_METADATA_KEY } from './ag-ui-messages.js';
export type { AgUiMessageNotes } from './ag-ui-messages.js';
export { toUiMessageStream } from './to-ui-message-stream.js';
export type { UiMessageMetadata, UiMessageStreamOptions } from './to-ui-message-stream.js';
export { fromUiMessages } from './from-ui-messages.js';
export type { FromUiMessages } from './from-ui-messages.js';
export { fromSse, SseError } from './from-sse.js';
