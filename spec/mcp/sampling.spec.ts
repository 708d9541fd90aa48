/**
 * M8: a server's `sampling/createMessage` during a call, from an SDK `McpServer` over Streamable HTTP on
 * 127.0.0.1, answered by one call of the `sampling` provider and cancelled with the tool call.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { type CreateMessageRequest, type CreateMessageResult, CreateMessageResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { Observable, firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { type Provider, type ProviderEvent, type ProviderInput, runEventedToolLoop, scriptedProvider } from 'rx-tool-loop';
import { type McpSamplingRequest, mcpTools } from 'rx-tool-loop/mcp';
import { answerTurn, call, callOf, only, toolTurn } from '../support/events';
import { type HttpMcpServer, startHttp } from './support/servers';
import { until } from '../support/until';
import { subscribed } from './support/subscribed';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** What the server's tools got back from the client: a result, or the error the client answered. */
const sampledResults: (CreateMessageResult | string)[] = [];

function samplingServer(): McpServer {
  const server = new McpServer({ name: 'summarizer', version: '1.0.0' });
  const ask = async (params: CreateMessageRequest['params'], extra: { sendRequest: (...args: never[]) => unknown }) => {
    try {
      const result = await (extra.sendRequest as (request: CreateMessageRequest, schema: typeof CreateMessageResultSchema) => Promise<CreateMessageResult>)(
        { method: 'sampling/createMessage', params },
        CreateMessageResultSchema,
      );
      sampledResults.push(result);
      return { content: [{ type: 'text' as const, text: result.content.type === 'text' ? result.content.text : '' }] };
    } catch (error) {
      sampledResults.push(String(error));
      return { content: [{ type: 'text' as const, text: String(error) }], isError: true };
    }
  };
  server.registerTool('summarize', { description: 'Summarizes', inputSchema: { text: z.string() } }, ({ text }, extra) =>
    ask(
      {
        systemPrompt: 'You summarize.',
        maxTokens: 50,
        messages: [
          { role: 'user', content: { type: 'text', text: `Summarize: ${text}` } },
          { role: 'assistant', content: { type: 'text', text: 'Which part?' } },
          { role: 'user', content: [{ type: 'text', text: 'All of it, and the chart.' }, { type: 'image', mimeType: 'image/png', data: PNG }] },
        ],
      },
      extra,
    ),
  );
  // unrelated: the SDK's createMessage sends it on the standalone stream
  server.registerTool('summarize_aside', { description: 'Asks aside' }, async () => {
    try {
      const result = await server.server.createMessage({ maxTokens: 50, messages: [{ role: 'user', content: { type: 'text', text: 'aside' } }] });
      sampledResults.push(result);
      return { content: [{ type: 'text' as const, text: 'sampled' }] };
    } catch (error) {
      sampledResults.push(String(error));
      return { content: [{ type: 'text' as const, text: String(error) }], isError: true };
    }
  });
  server.registerTool('summarize_with_tools', { description: 'Asks for tools' }, (extra) =>
    ask({ maxTokens: 50, messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], tools: [{ name: 'x', inputSchema: { type: 'object' } }] }, extra),
  );
  return server;
}

function samplingClient(): Client {
  return new Client({ name: 'rx-tool-loop-spec', version: '1.0.0' }, { capabilities: { sampling: {} } });
}


const reply = (text: string, stopReason: 'stop' | 'length' = 'stop'): ProviderEvent[] => [
  { type: 'message_start' },
  { type: 'text_delta', text: text.slice(0, 3) },
  { type: 'text_delta', text: text.slice(3) },
  { type: 'message_end', stopReason, model: 'scripted-1' },
];

describe('M8: sampling', () => {
  let http: HttpMcpServer;
  beforeAll(async () => {
    http = await startHttp(samplingServer);
  });
  afterAll(() => http.close());
  beforeEach(() => {
    sampledResults.length = 0;
  });

  it('M8: one call of the provider answers: the system prompt, messages and a user\'s image mapped, no tools; its text, model and stop reason go back', async () => {
    const client = await http.connect(samplingClient());
    const model = scriptedProvider([reply('Short: all good.', 'length')]);
    const requests: McpSamplingRequest[] = [];
    const { tools, subscription } = await subscribed(client, {
      sampling: {
        provider: (request) => {
          requests.push(request);
          return model;
        },
      },
    });
    const provider = scriptedProvider([toolTurn(call('summarize', { text: 'the report' }, 'c1')), answerTurn('done')]);
    const events = await lastValueFrom(runEventedToolLoop({ provider, registry: tools, messages: [{ role: 'user', content: 'go' }] }).pipe(toArray()));
    subscription.unsubscribe();
    expect(model.inputs).toEqual<ProviderInput[]>([
      {
        messages: [
          { role: 'system', content: 'You summarize.' },
          { role: 'user', content: 'Summarize: the report' },
          { role: 'assistant', content: 'Which part?', stopReason: 'stop' },
          { role: 'user', content: 'All of it, and the chart.', attachments: [{ type: 'image', mimeType: 'image/png', data: PNG }] },
        ],
        tools: [],
      },
    ]);
    // max tokens reach the provider that `{ provider(request) }` makes
    expect(requests.map((request) => request.maxTokens)).toEqual([50]);
    expect(sampledResults).toEqual([{ role: 'assistant', content: { type: 'text', text: 'Short: all good.' }, model: 'scripted-1', stopReason: 'maxTokens' }]);
    expect(only(events, 'tool_result')[0]!.message).toMatchObject({ content: 'Short: all good.', isError: false });
  });

  it('M8: unsubscribing the tool call unsubscribes the provider call', async () => {
    const client = await http.connect(samplingClient());
    let subscribedAt = 0;
    let unsubscribed = false;
    const sampling: Provider = () =>
      new Observable<ProviderEvent>(() => {
        subscribedAt += 1;
        return () => {
          unsubscribed = true;
        };
      });
    const { tools, subscription } = await subscribed(client, { sampling });
    const run = tools.get('summarize')!.handler({ text: 'x' }, { call: callOf('c1', 'summarize', { text: 'x' }), signal: new AbortController().signal }) as Observable<unknown>;
    const running = run.subscribe();
    await until(() => subscribedAt === 1);
    running.unsubscribe();
    await until(() => sampledResults.length === 1);
    subscription.unsubscribe();
    expect(unsubscribed).toBe(true);
    expect(sampledResults[0]).toMatch(/rx-tool-loop: the answer is no longer wanted/);
  });

  it('M8: unsubscribing mcpTools unsubscribes the provider call of a request that relates to no call, and the server gets an error', async () => {
    const client = await http.connect(samplingClient());
    let calls = 0;
    let unsubscribed = false;
    const sampling: Provider = () =>
      new Observable<ProviderEvent>(() => {
        calls += 1;
        return () => {
          unsubscribed = true;
        };
      });
    const { tools, subscription } = await subscribed(client, { sampling });
    const output = lastValueFrom(tools.get('summarize_aside')!.handler({}, { call: callOf('c1', 'summarize_aside'), signal: new AbortController().signal }) as Observable<unknown>);
    await until(() => calls === 1, 'the provider to be called');
    expect(unsubscribed).toBe(false);
    subscription.unsubscribe();
    expect(unsubscribed).toBe(true);
    await expect(output).resolves.toMatchObject({ isError: true });
    expect(sampledResults).toEqual([expect.stringMatching(/rx-tool-loop: the answer is no longer wanted/)]);
  });

  it('M8: a request with tools is refused, and the provider is never called', async () => {
    const client = await http.connect(samplingClient());
    const model = scriptedProvider([reply('never')]);
    const { tools, subscription } = await subscribed(client, { sampling: model });
    const output = await lastValueFrom(tools.get('summarize_with_tools')!.handler({}, { call: callOf('c1', 'summarize_with_tools'), signal: new AbortController().signal }) as Observable<unknown>);
    subscription.unsubscribe();
    expect(model.inputs).toEqual([]);
    expect(sampledResults).toEqual([expect.stringMatching(/sampling with tools is not supported/)]);
    expect(output).toMatchObject({ isError: true });
  });

  it('M8: a request with tools is refused before { provider(request) } is asked for a provider', async () => {
    const client = await http.connect(samplingClient());
    let made = 0;
    const model = scriptedProvider([reply('never')]);
    const { tools, subscription } = await subscribed(client, { sampling: { provider: () => (made++, model) } });
    await lastValueFrom(tools.get('summarize_with_tools')!.handler({}, { call: callOf('c1', 'summarize_with_tools'), signal: new AbortController().signal }) as Observable<unknown>);
    subscription.unsubscribe();
    expect(sampledResults).toEqual([expect.stringMatching(/sampling with tools is not supported/)]);
    expect(made).toBe(0);
  });

  it('M8: a reply that ends aborted is an error to the server', async () => {
    const client = await http.connect(samplingClient());
    const stopped: Provider = scriptedProvider([[{ type: 'message_start' }, { type: 'text_delta', text: 'half' }, { type: 'message_end', stopReason: 'aborted' }]]);
    const { tools, subscription } = await subscribed(client, { sampling: stopped });
    const output = await lastValueFrom(tools.get('summarize')!.handler({ text: 'x' }, { call: callOf('c1', 'summarize', { text: 'x' }), signal: new AbortController().signal }) as Observable<unknown>);
    subscription.unsubscribe();
    expect(sampledResults).toEqual([expect.stringMatching(/the model's reply ended in aborted/)]);
    expect(output).toMatchObject({ isError: true });
  });

  it('M8: a reply that ends in error is an error to the server; sampling on a client without the capability is an error naming sampling; a bad sampling is refused at call time', async () => {
    const client = await http.connect(samplingClient());
    const failing: Provider = scriptedProvider([[{ type: 'message_start' }, { type: 'message_end', stopReason: 'error', errorMessage: 'HTTP 529: overloaded' }]]);
    const { tools, subscription } = await subscribed(client, { sampling: failing });
    await lastValueFrom(tools.get('summarize')!.handler({ text: 'x' }, { call: callOf('c1', 'summarize', { text: 'x' }), signal: new AbortController().signal }) as Observable<unknown>);
    subscription.unsubscribe();
    expect(sampledResults).toEqual([expect.stringMatching(/the model's reply ended in error: HTTP 529: overloaded/)]);

    const plain = await http.connect();
    const error = await firstValueFrom(mcpTools(plain, { sampling: failing })).catch((caught: unknown) => caught);
    expect(String(error)).toMatch(/^TypeError: mcpTools: sampling needs a client created with the sampling capability/);
    expect(() => mcpTools(plain, { sampling: { provider: 1 } as never })).toThrow('mcpTools: sampling must be a Provider or { provider(request) } (got {');
  });
});

