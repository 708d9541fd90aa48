/**
 * s05, the tool hook boundary: the loop asks `beforeToolCall` before a call runs and `afterToolCall`
 * before its result goes out. Here one dangerous command is blocked before it runs, and a secret in a
 * file is redacted before the model reads it (H7).
 *
 *   npm run s05
 *
 * The same hooks against a real model (the key comes from OPENAI_API_KEY / ANTHROPIC_API_KEY):
 *
 *   npm run s05 -- --provider openai --model gpt-4o-mini
 *   npm run s05 -- --api responses --model gpt-5-mini
 *   npm run s05 -- --provider anthropic --model claude-sonnet-4-5
 */
import { AfterToolCall, BeforeToolCall, LoopEvent, ProviderInput, ToolRegistry, runEventedToolLoop, scriptedProvider } from '../src/index.js';
import { describeCommon, lastToolResult, runSeriesDemo } from './series-demo.js';

/** The workspace the tools see: one file with a secret in it. */
const FILES: Record<string, string> = { 'config.env': 'MODEL=gpt-4o-mini\nAPI_KEY=sk-live-4242\nREGION=eu' };

const registry = new ToolRegistry()
  .register({
    name: 'bash',
    description: 'Runs a shell command in the workspace',
    input: { command: 'the command to run' },
    // never reached in this demo: beforeToolCall blocks the only command the model sends
    handler: ({ command }) => `ran: ${command}`,
  })
  .register({
    name: 'read_file',
    description: 'Returns the contents of a file in the workspace',
    input: { path: 'the file to read' },
    handler: ({ path }) => FILES[path] ?? { content: `no such file: ${path}`, isError: true },
  });

/** Before: a command that could destroy the machine never runs; anything else runs as asked. */
// rm -r with the root directory among its arguments, formatting a disk, overwriting one, a fork bomb
const DANGEROUS = [/\brm\s+-\w*r\w*\b.*\s\/(?:\s|$)/, /\bmkfs\b/, /\bdd\s+.*\bof=\/dev\//, /:\(\)\s*\{/];
const beforeToolCall: BeforeToolCall = (call) => {
  const command = String(call.input.command ?? '');
  if (call.name === 'bash' && DANGEROUS.some((pattern) => pattern.test(command))) {
    console.log(`before: ${call.name} blocked`);
    return { action: 'deny', reason: `dangerous command: ${command}` };
  }
  console.log(`before: ${call.name} allowed`);
  return undefined;
};

/** After: secrets never reach the model. */
const SECRET = /^(\w*(?:KEY|TOKEN|SECRET|PASSWORD)\w*)=.*$/gm;
const afterToolCall: AfterToolCall = (result) => {
  const redacted = result.content.replace(SECRET, '$1=[redacted]');
  if (redacted === result.content) return undefined;
  console.log(`after: ${result.toolName} redacted`);
  return { ...result, content: redacted };
};

const scripted = scriptedProvider([
  [
    { type: 'message_start' },
    { type: 'tool_call', call: { id: 'call_1', name: 'bash', input: { command: 'rm -rf /tmp/workspace /' } } },
    { type: 'tool_call', call: { id: 'call_2', name: 'read_file', input: { path: 'config.env' } } },
    { type: 'message_end', stopReason: 'toolUse' },
  ],
  (input: ProviderInput) => [
    { type: 'message_start' },
    { type: 'text_delta', text: `The cleanup was blocked. config.env:\n${lastToolResult(input)}` },
    { type: 'message_end', stopReason: 'stop' },
  ],
]);

function describe(event: LoopEvent): string | undefined {
  switch (event.type) {
    case 'tool_call':
      return `tool_call: ${event.call.name} ${JSON.stringify(event.call.input)}`;
    case 'tool_start':
      return `tool_start: ${event.call.name}`;
    case 'tool_result':
      return `tool_result: ${event.message.content}${event.message.isError ? ' (isError)' : ''}`;
    default:
      return describeCommon(event);
  }
}

runSeriesDemo({
  name: 's05',
  title: 'Tool Hooks',
  question: 'Clean up the workspace, then show me config.env.',
  scripted,
  run: (provider, messages) => runEventedToolLoop({ provider, registry, messages, beforeToolCall, afterToolCall }),
  describe,
});
