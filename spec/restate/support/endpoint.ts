/**
 * The service endpoint that the D4 specs run in a child process (bundled with esbuild, run by plain node): a
 * `conversationObject` named `chat` on the spec's model server, listening on 127.0.0.1 only. Its tools log each
 * run's start and end to a file (one JSON line each), so that the spec counts runs across restarts; `slow` takes
 * SLOW_MS. `transfer` needs approval: the waiting event goes to the approvals file.
 */
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http2';
import * as restate from '@restatedev/restate-sdk';
import { ToolRegistry, openAIChatProvider } from '../../../src/index.js';
import { conversationObject } from '../../../src/restate/index.js';

const { PORT, MODEL_URL, TOOL_LOG, APPROVALS, SLOW_MS } = process.env as Record<string, string>;

function logged(key: string, tool: string, n: string, run: () => Promise<string>): Promise<string> {
  appendFileSync(TOOL_LOG, `${JSON.stringify({ key, tool, n, phase: 'start' })}\n`);
  return run().then((result) => {
    appendFileSync(TOOL_LOG, `${JSON.stringify({ key, tool, n, phase: 'end' })}\n`);
    return result;
  });
}

const chat = conversationObject('chat', (key) => ({
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
}));

createServer(restate.createEndpointHandler({ services: [chat] })).listen(Number(PORT), '127.0.0.1', () => process.stdout.write('ready\n'));
