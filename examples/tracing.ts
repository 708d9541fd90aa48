/**
 * Tracing (O1–O3): the s04 run, with a researcher agent as a second tool, traced in the OpenTelemetry GenAI
 * conventions and printed by the SDK's console exporter. Any other exporter (OTLP to Jaeger, Honeycomb,
 * Langfuse, …) takes the same spans.
 *
 *   npm run tracing
 *
 * The trace: `invoke_agent assistant` with a `chat` span per model call and an `execute_tool` span per call;
 * the researcher is an agent tool, so its own loop (`invoke_agent research`, with its `chat` span) sits under
 * its call's `execute_tool research` span.
 */
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, ConsoleSpanExporter, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { lastValueFrom } from 'rxjs';
import { type LoopEventOf, type ProviderInput, ToolRegistry, agentTool, runEventedToolLoop, scriptedProvider } from '../src/index.js';
import { traceLoop } from '../src/otel/index.js';
import { FIXED_NOW, lastToolResult } from './series-demo.js';

/** The tools: the clock, and a researcher sub-agent (an agent tool: its own loop, A1). */
function tools(): ToolRegistry {
  const model = scriptedProvider([[{ type: 'message_start' }, { type: 'text_delta', text: 'UTC, per ISO 8601' }, { type: 'message_end', stopReason: 'stop' }]]);
  return new ToolRegistry()
    .register({ name: 'current_time', description: 'Returns the current time as an ISO 8601 string', input: {}, handler: () => FIXED_NOW })
    .register(
      agentTool({
        name: 'research',
        description: 'Asks a researcher agent',
        input: { question: 'what to find out' },
        // traceLoop traces this loop from the events the tool forwards: its spans go under the call's span
        agent: (input, { signal }) => runEventedToolLoop({ provider: model, registry: new ToolRegistry(), messages: [{ role: 'user', content: String(input.question) }], signal }),
      }),
    );
}

const script = () =>
  scriptedProvider([
    [
      { type: 'message_start' },
      { type: 'tool_call', call: { id: 'call_1', name: 'current_time', input: {} } },
      { type: 'tool_call', call: { id: 'call_2', name: 'research', input: { question: 'Which time zone is that?' } } },
      { type: 'message_end', stopReason: 'toolUse', usage: { inputTokens: 42, outputTokens: 12 } },
    ],
    (input: ProviderInput) => [
      { type: 'message_start' },
      { type: 'text_delta', text: `It is ${lastToolResult({ ...input, messages: input.messages.slice(0, -1) })} (${lastToolResult(input)}).` },
      { type: 'message_end', stopReason: 'stop', usage: { inputTokens: 80, outputTokens: 9 } },
    ],
  ]);

/** The traced run: its spans go to `exporter`; resolves with the loop's last event. */
export async function tracedRun(exporter: SpanExporter): Promise<LoopEventOf<'loop_end'>> {
  // what NodeSDK sets up: the active span follows the code, across awaits too
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('rx-tool-loop-example');
  const loop = runEventedToolLoop({ provider: script(), registry: tools(), messages: [{ role: 'user', content: 'What time is it?' }] });
  const end = await lastValueFrom(loop.pipe(traceLoop({ tracer, agentName: 'assistant', model: 'scripted' })));
  await provider.shutdown();
  context.disable();
  return end as LoopEventOf<'loop_end'>;
}

if (require.main === module) {
  tracedRun(new ConsoleSpanExporter())
    .then((end) => console.log(`loop_end ${end.reason}: ${end.assistant.content}`))
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    });
}

