/**
 * A durable chat service (D1–D3): a Restate endpoint that serves a `conversationObject` named `chat` on
 * 127.0.0.1:9080 — the scripted model below, or a real one with `--model NAME [--base-url URL]` (OpenAI
 * Chat Completions). Start a Restate server, register the endpoint, and talk to a conversation:
 *
 *   npx restate-server --bind-ip 127.0.0.1 --base-dir /tmp/restate &   (from @restatedev/restate-server)
 *   npm run durable-chat &
 *   curl -X POST localhost:9070/deployments -H 'content-type: application/json' -d '{"uri":"http://127.0.0.1:9080"}'
 *   curl -X POST localhost:8080/chat/alice/ask -H 'content-type: application/json' -d '"What time is it?"'
 *
 * `send_email` waits for approval: the endpoint prints the awakeable id, and
 *   curl -X POST localhost:8080/chat/alice/approve -H 'content-type: application/json' -d '{"id":"ID","decision":true}'
 * lets it run — also after the endpoint, or the server, was killed and started again meanwhile.
 */
import { createServer } from 'node:http2';
import * as restate from '@restatedev/restate-sdk';
import { of } from 'rxjs';
import type { Provider, ProviderEvent } from '../src/index.js';
import { ToolRegistry, openAIChatProvider } from '../src/index.js';
import { conversationObject } from '../src/restate/index.js';

/**
 * The scripted model, as a function of what it is sent (not of how often it was called: on a replay the
 * journaled calls are not made again, so a provider that counts its calls would lose count).
 */
const scripted: Provider = ({ messages }) => {
  const last = messages[messages.length - 1];
  const reply = (...events: ProviderEvent[]) => of<ProviderEvent[]>({ type: 'message_start' }, ...events);
  if (last?.role === 'toolResult') return reply({ type: 'text_delta', text: `Done: ${last.content}` }, { type: 'message_end', stopReason: 'stop' });
  const wantsEmail = /mail/i.test(last?.content ?? '');
  const call = wantsEmail
    ? { id: `call_${messages.length}`, name: 'send_email', input: { to: 'bob@example.com', text: 'hello' } }
    : { id: `call_${messages.length}`, name: 'current_time', input: {} };
  return reply({ type: 'tool_call', call }, { type: 'message_end', stopReason: 'toolUse' });
};

const flag = (name: string) => {
  const index = process.argv.indexOf(name);
  return index < 0 ? undefined : process.argv[index + 1];
};
const model = flag('--model');
const provider = model === undefined ? scripted : openAIChatProvider({ model, ...(flag('--base-url') === undefined ? {} : { baseURL: flag('--base-url')! }) });

const registry = new ToolRegistry()
  .register({ name: 'current_time', description: 'The current time', input: {}, handler: () => new Date().toISOString() })
  .register({ name: 'send_email', description: 'Sends an email', input: { to: 'the address', text: 'the message' }, handler: ({ to }) => `sent to ${to}` });

const chat = conversationObject('chat', (conversationId) => ({
  provider,
  registry,
  needsApproval: (call) => call.name === 'send_email',
  announce: (waiting) => console.log(`${conversationId} waits: approve ${waiting.call.name} with id ${waiting.awakeableId}`),
}));

createServer(restate.createEndpointHandler({ services: [chat] })).listen(9080, '127.0.0.1', () => console.log('durable chat endpoint on http://127.0.0.1:9080'));
