/**
 * `rx-tool-loop/otel`: a loop's run as OpenTelemetry spans in the GenAI semantic conventions (O1–O4).
 * `@opentelemetry/api` (^1) is an optional peer dependency: only this entry imports it.
 */
export { toolSpanContext, traceLoop } from './trace-loop.js';
export type { TraceLoopOptions } from './trace-loop.js';
