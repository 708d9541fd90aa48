/**
 * The service endpoint that the D4 specs run in a child process (bundled with esbuild, run by plain node): a
 * `conversationObject` named `chat` on the spec's model server, listening on 127.0.0.1 only. Its tools log each
 * run's start and end to a file (one JSON line each), so that the spec counts runs across restarts; `slow` takes
 * SLOW_MS. `transfer` needs approval: the waiting event goes to the approvals file. `plain` runs the same loop
 * without journaling, for D5's overhead figure.
 */
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http2';
import * as restate from '@restatedev/restate-sdk';
import { filter, lastValueFrom } from 'rxjs';
import { type AgentMessage, type LoopEventOf, ToolRegistry, openAIChatProvider, runEventedToolLoop } from '../../../src/index.js';
import { type ConversationSetup, conversationObject } from '../../../src/restate/index.js';

const { PORT, MODEL_URL, TOOL_LOG, APPROVALS, SLOW_MS } = process.env as Record<string, string>;

function logged(key: string, tool: string, n: string, run: () => Promise<string>): Promise<string> {
  appendFileSync(TOOL_LOG, `${JSON.stringify({ key, tool, n, phase: 'start' })}\n`);
  return run().then((result) => {
    appendFileSync(TOOL_LOG, `${JSON.stringify({ key, tool, n, phase: 'end' })}\n`);
    return result;
  });
}

const setup = (key: string): ConversationSetup => ({
  provider: openAIChatProvider({ model: 'loopback', baseURL: MODEL_URL, headers: { 'x-conversation': key }, maxRetries: 0 }),
  registry: new ToolRegistry()
    .register({ name: 'fast', description: 'answers at once', input: { n: 'a number' }, handler: ({ n }) => logged(key, 'fast', n, async () => `fast ${n}`) })
    .register({
      name: 'slow',
      description: 'takes a while',
      input: { n: 'a number' },
      handler: ({ n }) => logged(key, 'slow', n, () => new Promise((resolve) => setTimeout(() => resolve(`slow ${n}`), Number(SLOW_MS)))),
    })
    .register({ name: 'transfer', description: 'moves money', input: { n: 'a number' }, handler: ({ n }) => logged(key, 'transfer', n, async () => `transferred ${n}`) }),
  needsApproval: (call) => call.name === 'transfer',
  announce: (waiting) => appendFileSync(APPROVALS, `${JSON.stringify({ key, ...waiting })}\n`),
});
const chat = conversationObject('chat', setup);

// D5's yardstick: the same loop in a Restate handler without journaling (the history still saved once per ask)
const plain = restate.object({
  name: 'plain',
  handlers: {
    ask: async (ctx: restate.ObjectContext, prompt: string) => {
      const messages = [...((await ctx.get<AgentMessage[]>('messages')) ?? []), { role: 'user' as const, content: prompt }];
      const end = await lastValueFrom(runEventedToolLoop({ ...setup(ctx.key), messages }).pipe(filter((e): e is LoopEventOf<'loop_end'> => e.type === 'loop_end')));
      ctx.set('messages', end.messages);
      return { reason: end.reason, assistant: end.assistant };
    },
  },
});

// which SDK this bundle holds and which Node runs it, for the D6 specs to read in the log
const sdk = require('@restatedev/restate-sdk/package.json') as { version: string };
createServer(restate.createEndpointHandler({ services: [chat, plain] })).listen(Number(PORT), '127.0.0.1', () =>
  process.stdout.write(`ready: @restatedev/restate-sdk ${sdk.version} on Node ${process.version}\n`),
);
