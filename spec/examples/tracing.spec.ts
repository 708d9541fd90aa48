/** O1–O3, as a user writes it: examples/tracing.ts, the s04 run with a researcher sub-agent, traced. */
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { tracedRun } from '../../examples/tracing.js';

/** An exporter that keeps what it is given, also past the provider's shutdown. */
function collecting(): { exporter: SpanExporter; spans: ReadableSpan[] } {
  const spans: ReadableSpan[] = [];
  const exporter: SpanExporter = {
    export: (batch, done) => {
      spans.push(...batch);
      done({ code: 0 }); // ExportResultCode.SUCCESS
    },
    shutdown: () => Promise.resolve(),
  };
  return { exporter, spans };
}

describe('examples/tracing', () => {
  it("O1, A1: traces the run in one trace: the researcher agent tool's loop under its execute_tool span, the model calls and tools under invoke_agent", async () => {
    const { exporter, spans } = collecting();
    const end = await tracedRun(exporter);
    expect(end.assistant.content).toBe('It is 2026-01-01T00:00:00Z (UTC, per ISO 8601).');
    const byId = new Map(spans.map((span) => [span.spanContext().spanId, span]));
    const path = (span: ReadableSpan): string => {
      const parent = span.parentSpanContext === undefined ? undefined : byId.get(span.parentSpanContext.spanId);
      return parent === undefined ? span.name : `${path(parent)} > ${span.name}`;
    };
    expect(spans.map(path).sort()).toEqual(
      [
        'invoke_agent assistant',
        'invoke_agent assistant > chat scripted',
        'invoke_agent assistant > chat scripted',
        'invoke_agent assistant > execute_tool current_time',
        'invoke_agent assistant > execute_tool research',
        'invoke_agent assistant > execute_tool research > invoke_agent research',
        'invoke_agent assistant > execute_tool research > invoke_agent research > chat',
      ].sort(),
    );
    expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
    const agent = spans.find((span) => span.name === 'invoke_agent assistant')!;
    expect(agent.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 122, 'gen_ai.usage.output_tokens': 21 });
  });
});
