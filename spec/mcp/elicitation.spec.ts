/**
 * M7: a server's `elicitation/create` during a call, from an SDK `McpServer` over Streamable HTTP on 127.0.0.1:
 * shown on the call it relates to, answered by `onElicit` (or declined), with the schema's defaults applied,
 * and cancelled with the call.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ElicitRequestSchema, type ElicitResult, ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { NEVER, type Observable, firstValueFrom, lastValueFrom, of, tap, toArray } from 'rxjs';
import { z } from 'zod';
import { type LoopEvent, ToolRegistry, runEventedToolLoop, scriptedProvider } from 'rx-tool-loop';
import { type McpElicitContext, type McpElicitRequest, mcpTools } from 'rx-tool-loop/mcp';
import { answerTurn, call, callOf, only, toolTurn } from '../support/events';
import { type HttpMcpServer, startHttp } from './support/servers';
import { until } from '../support/until';
import { subscribed } from './support/subscribed';

const PROFILE = {
  type: 'object' as const,
  properties: {
    name: { type: 'string' as const, description: 'Your name' },
    city: { type: 'string' as const, default: 'Lisbon' },
    age: { type: 'integer' as const, default: 30 },
  },
  required: ['name'],
};

/** What the server's tools got back from the client. */
const answers: { tool: string; input: string; result: ElicitResult }[] = [];

function askingServer(): McpServer {
  const server = new McpServer({ name: 'asker', version: '1.0.0' });
  // related: asked on the call's own stream (the SDK's extra.sendRequest)
  server.registerTool('ask', { description: 'Asks the user', inputSchema: { topic: z.string() } }, async ({ topic }, extra) => {
    const result = await extra.sendRequest({ method: 'elicitation/create', params: { message: `About ${topic}?`, requestedSchema: PROFILE } }, ElicitResultSchema);
    answers.push({ tool: 'ask', input: topic, result });
    return { content: [{ type: 'text', text: JSON.stringify(result) }] };
  });
  // gives up on its question after 100 ms: the SDK sends notifications/cancelled for it
  server.registerTool('ask_briefly', { description: 'Asks, briefly' }, async (extra) => {
    const outcome = await extra.sendRequest({ method: 'elicitation/create', params: { message: 'Quick?', requestedSchema: PROFILE } }, ElicitResultSchema, { timeout: 100 }).then(
      (result) => result.action,
      () => 'gave up',
    );
    return { content: [{ type: 'text', text: outcome }] };
  });
  // unrelated: the SDK's elicitInput sends it on the standalone stream
  server.registerTool('ask_aside', { description: 'Asks aside' }, async () => {
    const result = await server.server.elicitInput({ message: 'Aside?', requestedSchema: { type: 'object', properties: {} } });
    answers.push({ tool: 'ask_aside', input: '', result });
    return { content: [{ type: 'text', text: result.action }] };
  });
  return server;
}

function elicitingClient(): Client {
  return new Client({ name: 'rx-tool-loop-spec', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
}

/** The tools of `client` while subscribed (the handlers are on only then). */

describe('M7: elicitation', () => {
  let http: HttpMcpServer;
  beforeAll(async () => {
    http = await startHttp(askingServer);
  });
  afterAll(() => http.close());
  beforeEach(() => {
    answers.length = 0;
  });

  it('M7: two calls at once each show their own elicitation as a tool_update before onElicit is asked, with that call as its context; the answer gets the schema defaults', async () => {
    const client = await http.connect(elicitingClient());
    const asked: { request: McpElicitRequest; call: McpElicitContext['call']; shown: boolean }[] = [];
    const seen: LoopEvent[] = [];
    const onElicit = (request: McpElicitRequest, context: McpElicitContext) => {
      // the call's tool_update is out before onElicit is asked
      const shown = seen.some((event) => event.type === 'tool_update' && event.toolCallId === context.call?.id && event.content === request.message);
      asked.push({ request, call: context.call, shown });
      // the answer waits a little, so that both calls ask before either is answered
      return new Promise<ElicitResult>((resolve) => setTimeout(() => resolve({ action: 'accept', content: { name: String(context.call?.input.topic) } }), 20));
    };
    const { tools, subscription } = await subscribed(client, { onElicit });
    const provider = scriptedProvider([toolTurn(call('ask', { topic: 'tea' }, 'c1'), call('ask', { topic: 'jazz' }, 'c2')), answerTurn('done')]);
    const events = await lastValueFrom(runEventedToolLoop({ provider, registry: tools, messages: [{ role: 'user', content: 'ask' }] }).pipe(tap((event) => seen.push(event)), toArray()));
    subscription.unsubscribe();

    const updates = only(events, 'tool_update');
    expect(updates.map(({ toolCallId, content, details }) => ({ toolCallId, content, details }))).toEqual(
      expect.arrayContaining([
        { toolCallId: 'c1', content: 'About tea?', details: { elicitation: { message: 'About tea?', requestedSchema: PROFILE } } },
        { toolCallId: 'c2', content: 'About jazz?', details: { elicitation: { message: 'About jazz?', requestedSchema: PROFILE } } },
      ]),
    );
    expect(asked.map(({ request, call, shown }) => [request.message, call, shown])).toEqual(
      expect.arrayContaining([
        ['About tea?', { id: 'c1', name: 'ask', input: { topic: 'tea' } }, true],
        ['About jazz?', { id: 'c2', name: 'ask', input: { topic: 'jazz' } }, true],
      ]),
    );
    expect(asked).toHaveLength(2);
    // SEP-1034: the fields the answer left out that have a default are filled in; `name` is the answer's own
    expect(answers.map(({ input, result }) => [input, result]).sort()).toEqual([
      ['jazz', { action: 'accept', content: { name: 'jazz', city: 'Lisbon', age: 30 } }],
      ['tea', { action: 'accept', content: { name: 'tea', city: 'Lisbon', age: 30 } }],
    ]);
    const results = only(events, 'tool_result').map((event) => event.message);
    expect(results.map((result) => [result.toolCallId, result.isError])).toEqual([['c1', false], ['c2', false]]);
  });

  it('M7: an Observable answer is its first value; a declined one reaches the server as it is (no defaults)', async () => {
    const client = await http.connect(elicitingClient());
    const { tools, subscription } = await subscribed(client, { onElicit: () => of<ElicitResult[]>({ action: 'decline' }, { action: 'accept', content: { name: 'late' } }) });
    const output = await lastValueFrom(tools.get('ask')!.handler({ topic: 'x' }, { call: callOf('c1', 'ask', { topic: 'x' }), signal: new AbortController().signal }) as Observable<unknown>);
    subscription.unsubscribe();
    expect(answers.map((answer) => answer.result)).toEqual([{ action: 'decline' }]);
    expect(output).toMatchObject({ content: '{"action":"decline"}' });
  });

  it('M7: without onElicit the client declines, unless the application has its own handler, which then answers', async () => {
    const client = await http.connect(elicitingClient());
    const bare = await subscribed(client, {});
    await lastValueFrom(bare.tools.get('ask')!.handler({ topic: 'a' }, { call: callOf('c1', 'ask', { topic: 'a' }), signal: new AbortController().signal }) as Observable<unknown>);
    bare.subscription.unsubscribe();
    client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: { name: 'app' } }));
    const own = await subscribed(client, {});
    await lastValueFrom(own.tools.get('ask')!.handler({ topic: 'b' }, { call: callOf('c2', 'ask', { topic: 'b' }), signal: new AbortController().signal }) as Observable<unknown>);
    own.subscription.unsubscribe();
    expect(answers.map((answer) => answer.result)).toEqual([{ action: 'decline' }, { action: 'accept', content: { name: 'app' } }]);
  });

  it('M7: the handler is chained: while subscribed onElicit answers in place of the application\'s handler, which is back once unsubscribed', async () => {
    const client = await http.connect(elicitingClient());
    client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: { name: 'app' } }));
    const ask = (tools: ToolRegistry, topic: string) =>
      lastValueFrom(tools.get('ask')!.handler({ topic }, { call: callOf(topic, 'ask', { topic }), signal: new AbortController().signal }) as Observable<unknown>);
    const ours = await subscribed(client, { onElicit: () => ({ action: 'accept', content: { name: 'ours' } }) });
    await ask(ours.tools, 'a');
    ours.subscription.unsubscribe();
    await ask(ours.tools, 'b');
    expect(answers.map((answer) => answer.result.content?.name)).toEqual(['ours', 'app']);
  });

  it('M7: unsubscribing the call while onElicit waits aborts its signal and answers the server cancel', async () => {
    const client = await http.connect(elicitingClient());
    let signal: AbortSignal | undefined;
    const { tools, subscription } = await subscribed(client, {
      onElicit: (_request, context) => {
        signal = context.signal;
        return NEVER;
      },
    });
    const seen: unknown[] = [];
    const run = tools.get('ask')!.handler({ topic: 'q' }, { call: callOf('c1', 'ask', { topic: 'q' }), signal: new AbortController().signal }) as Observable<unknown>;
    await new Promise<void>((resolve) => {
      const running = run.subscribe((value) => {
        seen.push(value);
        // the elicitation is showing: give up on the call
        setTimeout(() => {
          running.unsubscribe();
          resolve();
        }, 10);
      });
    });
    await until(() => answers.length === 1);
    subscription.unsubscribe();
    expect(signal?.aborted).toBe(true);
    expect(answers[0]!.result).toEqual({ action: 'cancel' });
    expect(seen).toHaveLength(1);
  });

  it('M7: the server cancelling its question aborts onElicit\'s signal; the call goes on', async () => {
    const client = await http.connect(elicitingClient());
    let signal: AbortSignal | undefined;
    const { tools, subscription } = await subscribed(client, {
      onElicit: (_request, context) => {
        signal = context.signal;
        return NEVER;
      },
    });
    const output = await lastValueFrom(tools.get('ask_briefly')!.handler({}, { call: callOf('c1', 'ask_briefly'), signal: new AbortController().signal }) as Observable<unknown>);
    await until(() => signal?.aborted === true);
    subscription.unsubscribe();
    expect(output).toMatchObject({ content: 'gave up', isError: false });
  });

  it('M7: unsubscribing mcpTools while onElicit waits on a question that relates to no call aborts its signal and answers the server cancel', async () => {
    const client = await http.connect(elicitingClient());
    let signal: AbortSignal | undefined;
    const { tools, subscription } = await subscribed(client, {
      onElicit: (_request, context) => {
        signal = context.signal;
        return NEVER;
      },
    });
    const output = lastValueFrom(tools.get('ask_aside')!.handler({}, { call: callOf('c1', 'ask_aside'), signal: new AbortController().signal }) as Observable<unknown>);
    await until(() => signal !== undefined, 'onElicit to be asked');
    expect(signal!.aborted).toBe(false);
    subscription.unsubscribe();
    expect(signal!.aborted).toBe(true);
    await expect(output).resolves.toMatchObject({ content: 'cancel', isError: false });
    expect(answers).toEqual([{ tool: 'ask_aside', input: '', result: { action: 'cancel' } }]);
  });

  it('M7: an elicitation that relates to no call (the standalone stream) goes to onElicit with no call, and shows on none', async () => {
    const client = await http.connect(elicitingClient());
    const contexts: McpElicitContext[] = [];
    const { tools, subscription } = await subscribed(client, {
      onElicit: (_request, context) => {
        contexts.push(context);
        return { action: 'decline' };
      },
    });
    const provider = scriptedProvider([toolTurn(call('ask_aside', {}, 'c1')), answerTurn('done')]);
    const events: LoopEvent[] = await lastValueFrom(runEventedToolLoop({ provider, registry: tools, messages: [{ role: 'user', content: 'ask' }] }).pipe(toArray()));
    subscription.unsubscribe();
    expect(contexts.map((context) => context.call)).toEqual([undefined]);
    expect(only(events, 'tool_update')).toEqual([]);
    expect(only(events, 'tool_result')[0]!.message.content).toBe('decline');
  });

  it('M7: onElicit on a client created without the elicitation capability is an error naming onElicit, and onElicit must be a function', async () => {
    const client = await http.connect();
    const { onclose, onerror } = client;
    const error = await firstValueFrom(mcpTools(client, { onElicit: () => ({ action: 'decline' }) })).catch((caught: unknown) => caught);
    expect(String(error)).toMatch(/^TypeError: mcpTools: onElicit needs a client created with the elicitation capability/);
    // M1 (7): the hooks chained before it came off with the failed subscription
    expect([client.onclose, client.onerror]).toEqual([onclose, onerror]);
    expect(() => mcpTools(client, { onElicit: 'yes' as never })).toThrow('mcpTools: onElicit must be a function (got "yes", a string)');
  });
});

