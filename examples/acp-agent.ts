/**
 * E3, an agent for editors: `npm run acp` serves a scripted agent over the Agent Client Protocol on standard
 * input and output (no network, no keys), for Zed, JetBrains or any ACP client. Standard output carries nothing
 * but JSON-RPC; what the agent has to say besides goes to standard error.
 *
 *   npm run acp                          # the sessions live as long as the process
 *   npm run acp -- --store sessions      # each session in sessions/ID.jsonl: session/load replays it, in a new process too
 *
 * What the scripted model does with a prompt (its words, in any case):
 * - "time": calls `current_time`, then says the time.
 * - "slow": calls `slow_task`, which reports progress and takes three seconds; cancelled, it writes
 *   `slow_task: signal aborted` to standard error (its signal is how a tool learns it was torn down).
 * - "deploy": calls `deploy`, which waits for the editor's permission (allow once / always, reject once / always).
 * - anything else: thinks a moment, then says what it was told and what the session's first prompt was, so a
 *   loaded session shows that it goes on from its history.
 */
import { join } from 'node:path';
import { Observable, concat, delay, of } from 'rxjs';
import type { AgentMessage, Provider, ProviderEvent, ToolCall } from '../src/index.js';
import { ToolRegistry, toolProgress } from '../src/index.js';
import { jsonlStore } from '../src/sessions/index.js';
import { serveAcp } from '../src/acp/index.js';

/** A few milliseconds between streamed pieces, as a real model's reply has. */
const PIECE_MS = 5;

const stream = (events: ProviderEvent[]): Observable<ProviderEvent> => concat(...events.map((event, index) => of(event).pipe(delay(index === 0 ? 0 : PIECE_MS))));
const say = (...pieces: string[]): Observable<ProviderEvent> =>
  stream([{ type: 'message_start' }, ...pieces.map((text): ProviderEvent => ({ type: 'text_delta', text })), { type: 'message_end', stopReason: 'stop' }]);
const callTool = (call: ToolCall): Observable<ProviderEvent> =>
  stream([{ type: 'message_start' }, { type: 'tool_call', call }, { type: 'message_end', stopReason: 'toolUse' }]);

const userTexts = (messages: readonly AgentMessage[]) => messages.flatMap((message) => (message.role === 'user' ? [message.content] : []));

/** The scripted model: a tool for a few words, the tool's result said back, anything else echoed with what it remembers. */
const provider: Provider = ({ messages }) => {
  const last = messages[messages.length - 1]!;
  if (last.role === 'toolResult') return say(last.isError ? `The ${last.toolName} call failed: ` : `${last.toolName}: `, last.content);
  const prompts = userTexts(messages);
  const prompt = prompts[prompts.length - 1] ?? '';
  const id = `call_${messages.length}`;
  if (/\btime\b/i.test(prompt)) return callTool({ id, name: 'current_time', input: {} });
  if (/\bslow\b/i.test(prompt)) return callTool({ id, name: 'slow_task', input: { seconds: 3 } });
  if (/\bdeploy\b/i.test(prompt)) return callTool({ id, name: 'deploy', input: { target: 'staging' } });
  return stream([
    { type: 'message_start' },
    { type: 'reasoning_delta', text: 'The user said something; I recall the first prompt.' },
    { type: 'text_delta', text: `You said "${prompt}". ` },
    { type: 'text_delta', text: `This is prompt ${prompts.length} of this session; ` },
    { type: 'text_delta', text: `the first was "${prompts[0]}".` },
    { type: 'message_end', stopReason: 'stop' },
  ]);
};

const registry = new ToolRegistry()
  .register({ name: 'current_time', description: 'The current time', input: {}, handler: () => '2026-01-01T00:00:00Z' })
  .register({
    name: 'slow_task',
    description: 'A task that takes a few seconds',
    inputSchema: { type: 'object', properties: { seconds: { type: 'number' } } },
    handler: (input: { seconds?: number }, { signal }) =>
      new Observable((subscriber) => {
        const seconds = input.seconds ?? 3;
        signal.addEventListener('abort', () => process.stderr.write('slow_task: signal aborted\n'), { once: true });
        subscriber.next(toolProgress('started'));
        const timer = setTimeout(() => {
          subscriber.next(`finished after ${seconds} s`);
          subscriber.complete();
        }, seconds * 1000);
        return () => clearTimeout(timer);
      }),
  })
  .register({ name: 'deploy', description: 'Deploys the project', input: { target: 'where to deploy' }, handler: (input) => `deployed to ${input.target}` });

const storeAt = process.argv.indexOf('--store');
const folder = storeAt >= 0 ? process.argv[storeAt + 1] : undefined;
if (storeAt >= 0 && folder === undefined) throw new Error('acp-agent: --store needs a folder');

process.stderr.write(`acp-agent: serving ACP on stdio (pid ${process.pid})\n`);
serveAcp({
  agent: { provider, registry },
  store: folder === undefined ? undefined : (sessionId) => jsonlStore(join(folder, `${sessionId}.jsonl`)),
  needsApproval: (call) => call.name === 'deploy',
  agentInfo: { name: 'rx-tool-loop-example', title: 'rx-tool-loop scripted agent', version: '0.4.0' },
}).subscribe({
  complete: () => process.stderr.write('acp-agent: the editor closed the connection\n'),
  error: (error: unknown) => {
    process.stderr.write(`acp-agent: ${String(error)}\n`);
    process.exitCode = 1;
  },
});
