/**
 * The service endpoint that the D4 specs run in a child process (bundled with esbuild, run by plain node): a
 * `conversationObject` named `chat` on the spec's model server, listening on 127.0.0.1 only. Its tools log each
 * run's start and end to a file (one JSON line each), so that the spec counts runs across restarts; `slow` takes
 * SLOW_MS. `transfer` needs approval: the waiting event goes to the approvals file. `plain` runs the same loop
 * without journaling, for D5's overhead figure; `perDelta` journals every event of a reply as a step of its own, for
 * D9's journal size. Each log line carries its time (`at`), for D7's failover time.
 */
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http2';
import * as restate from '@restatedev/restate-sdk';
import { Observable, filter, lastValueFrom } from 'rxjs';
import { type AgentMessage, type LoopEventOf, type Provider, type ProviderEvent, ToolRegistry, openAIChatProvider, runEventedToolLoop } from '../../../src/index.js';
import { type ConversationSetup, type Journal, conversationObject, journaledTools, restateJournal } from '../../../src/restate/index.js';

const { PORT, MODEL_URL, TOOL_LOG, APPROVALS, SLOW_MS } = process.env as Record<string, string>;

function logged(key: string, tool: string, n: string, run: () => Promise<string>): Promise<string> {
  appendFileSync(TOOL_LOG, `${JSON.stringify({ key, tool, n, phase: 'start', at: Date.now() })}\n`);
  return run().then((result) => {
    appendFileSync(TOOL_LOG, `${JSON.stringify({ key, tool, n, phase: 'end', at: Date.now() })}\n`);
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

/**
 * D9's yardstick: every event of a reply journaled as a step of its own as it arrives (one entry per text delta,
 * as engines that record every token do), one step after the other. Only for the journal's size and time: the
 * model is called again on a replay.
 */
function eventByEvent(journal: Journal, provider: Provider): Provider {
  return (input) =>
    new Observable<ProviderEvent>((subscriber) => {
      let journaled = Promise.resolve();
      let count = 0;
      const step = (event: ProviderEvent) => {
        const name = `event ${++count}`;
        journaled = journaled.then(async () => subscriber.next(await journal.run(name, async () => event)));
      };
      const inner = provider(input).subscribe({
        next: step,
        error: (error: unknown) => void journaled.then(() => subscriber.error(error)),
        complete: () => void journaled.then(() => subscriber.complete()),
      });
      return () => inner.unsubscribe();
    });
}
const perDelta = restate.object({
  name: 'perDelta',
  handlers: {
    ask: async (ctx: restate.ObjectContext, prompt: string) => {
      const journal = restateJournal(ctx);
      const { provider, registry } = setup(ctx.key);
      const messages = [...((await ctx.get<AgentMessage[]>('messages')) ?? []), { role: 'user' as const, content: prompt }];
      const loop = runEventedToolLoop({ provider: eventByEvent(journal, provider), registry: journaledTools(journal, registry), messages });
      const end = await lastValueFrom(loop.pipe(filter((e): e is LoopEventOf<'loop_end'> => e.type === 'loop_end')));
      ctx.set('messages', end.messages);
      return { reason: end.reason, assistant: end.assistant };
    },
    history: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext) => (await ctx.get<AgentMessage[]>('messages')) ?? []),
  },
});

// which SDK this bundle holds and which Node runs it, for the D6 specs to read in the log
const sdk = require('@restatedev/restate-sdk/package.json') as { version: string };
createServer(restate.createEndpointHandler({ services: [chat, plain, perDelta] })).listen(Number(PORT), '127.0.0.1', () =>
  process.stdout.write(`ready: @restatedev/restate-sdk ${sdk.version} on Node ${process.version}\n`),
);
