/**
 * s04, the evented tool loop: the provider only *requests* `current_time`; the loop runs it and
 * puts the result into the history; the second turn answers from it.
 *
 *   npm run s04
 *
 * The same conversation against a real model (the key comes from OPENAI_API_KEY / ANTHROPIC_API_KEY / GEMINI_API_KEY):
 *
 *   npm run s04 -- --provider openai --model gpt-4o-mini
 *   npm run s04 -- --api responses --model gpt-5-mini
 *   npm run s04 -- --api ai-sdk --model gpt-4o-mini          (the same API through @ai-sdk/openai, P18)
 *   npm run s04 -- --provider openai --base-url http://localhost:11434/v1 --model qwen2.5:7b
 *   npm run s04 -- --provider anthropic --model claude-sonnet-4-5
 *   npm run s04 -- --provider gemini --model gemini-2.5-flash
 */
import { LoopEvent, ProviderInput, ToolRegistry, runEventedToolLoop, scriptedProvider } from '../src/index.js';
import { FIXED_NOW, describeCommon, lastToolResult, runSeriesDemo } from './series-demo.js';

const registry = new ToolRegistry().register({
  name: 'current_time',
  description: 'Returns the current time as an ISO 8601 string',
  input: {},
  handler: () => FIXED_NOW,
});

const scripted = scriptedProvider([
  [
    { type: 'message_start' },
    { type: 'tool_call', call: { id: 'call_1', name: 'current_time', input: {} } },
    { type: 'message_end', stopReason: 'toolUse' },
  ],
  (input: ProviderInput) => [
    { type: 'message_start' },
    { type: 'text_delta', text: `工具结果是：${lastToolResult(input)}` },
    { type: 'message_end', stopReason: 'stop' },
  ],
]);

function describe(event: LoopEvent): string | undefined {
  switch (event.type) {
    case 'tool_call':
      return `tool_call: ${event.call.name}`;
    case 'tool_result':
      return `tool_result: ${event.message.content}`;
    default:
      return describeCommon(event);
  }
}

runSeriesDemo({
  name: 's04',
  title: 'Evented Tool Loop',
  question: '现在几点？',
  scripted,
  run: (provider, messages) => runEventedToolLoop({ provider, registry, messages }),
  describe,
});
