/**
 * s04, the evented tool loop: the provider only *requests* `current_time`; the loop runs it and
 * puts the result into the history; the second turn answers from it.
 *
 *   npm run s04
 *
 * The same conversation against a real model (the key comes from OPENAI_API_KEY / ANTHROPIC_API_KEY):
 *
 *   npm run s04 -- --provider openai --model gpt-4o-mini
 *   npm run s04 -- --provider openai --base-url http://localhost:11434/v1 --model qwen2.5:7b
 *   npm run s04 -- --provider anthropic --model claude-sonnet-4-5
 */
import { parseArgs } from 'node:util';
import { lastValueFrom, tap } from 'rxjs';
import {
  LoopEvent,
  Provider,
  ProviderInput,
  ToolRegistry,
  anthropicProvider,
  openAIChatProvider,
  runEventedToolLoop,
  scriptedProvider,
} from '../src/index.js';

const FIXED_NOW = '2026-01-01T00:00:00Z';

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

const USAGE = 'usage: npm run s04 [-- --provider openai|anthropic --model MODEL [--base-url URL]]';

/** No flags: the scripted provider. `--provider openai|anthropic --model M [--base-url URL]`: a real API. */
function chooseProvider(args: string[]): Provider {
  const { values } = parseArgs({
    args,
    options: { provider: { type: 'string' }, model: { type: 'string' }, 'base-url': { type: 'string' } },
    strict: true,
  });
  const { provider: name = 'scripted', model, 'base-url': baseURL } = values;
  if (name === 'scripted') return scripted;
  if (name !== 'openai' && name !== 'anthropic') throw new Error(`unknown provider: ${name}`);
  if (model === undefined) throw new Error(`--provider ${name} needs --model`);
  return name === 'openai' ? openAIChatProvider({ model, baseURL }) : anthropicProvider({ model, baseURL });
}


function lastToolResult({ messages }: ProviderInput): string {
  const result = messages.findLast((message) => message.role === 'toolResult');
  return result?.content ?? '(no tool result)';
}

function describe(event: LoopEvent): string | undefined {
  switch (event.type) {
    case 'message_start':
      return 'message_start';
    case 'text_delta':
      return `text_delta: ${event.text}`;
    case 'tool_call':
      return `tool_call: ${event.call.name}`;
    case 'tool_result':
      return `tool_result: ${event.message.content}`;
    case 'message_end':
      return `message_end: ${event.stopReason}`;
    default:
      return undefined;
  }
}

async function main(): Promise<void> {
  let provider: Provider;
  try {
    provider = chooseProvider(process.argv.slice(2));
  } catch (error) {
    console.error(`s04: ${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  const question = '现在几点？';
  console.log('s04: Evented Tool Loop\n');
  console.log(`[user]\n${question}\n`);

  const end = await lastValueFrom(
    runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: question }] }).pipe(
      tap((event) => {
        const line = describe(event);
        if (line !== undefined) console.log(line);
      }),
    ),
  );
  if (end.type !== 'loop_end') throw new Error(`the loop ended with ${end.type}`);
  // a provider failure (an unreachable endpoint, a rejected key): one line on stderr, and a failing exit code
  if (end.reason === 'error') throw new Error(`s04: ${end.assistant.errorMessage ?? 'the model call failed'}`);

  console.log(`\n[assistant]\ncontent: ${end.assistant.content}\nstopReason: ${end.assistant.stopReason}\n`);
  console.log(`[state]\n${end.messages.map((message) => message.role).join(' -> ')}`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
