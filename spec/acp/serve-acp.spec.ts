/**
 * E1 in process: serveAcp on web streams, driven by the SDK's client side (which parses every message it gets
 * with the protocol's own schemas). The same agent over real pipes is E2's (acp-agent.spec.ts).
 */
import { type ClientConnection, PROTOCOL_VERSION, type RequestPermissionRequest, type RequestPermissionResponse, type SessionNotification, client, ndJsonStream } from '@agentclientprotocol/sdk';
import { NEVER, Observable, type Subscription } from 'rxjs';
import { type ProviderEvent, type ProviderInput, ToolRegistry, TokenBudget, scriptedProvider, toolProgress } from 'rx-tool-loop';
import { memoryStore } from 'rx-tool-loop/sessions';
import { type AcpSession, type ServeAcpOptions, serveAcp } from 'rx-tool-loop/acp';
import { until } from '../support/until';

interface Editor {
  connection: ClientConnection;
  updates: SessionNotification[];
  /** The permission requests, in order, and how the editor answers them (default: allow once). */
  permissions: RequestPermissionRequest[];
  answer: (request: RequestPermissionRequest, signal: AbortSignal) => Promise<RequestPermissionResponse>;
  served: Subscription;
  /** Whether serveAcp's Observable completed. */
  completed(): boolean;
  /** Ends the agent's input (as an editor that quits). */
  hangUp(): void;
}

const editors: Editor[] = [];

/** serveAcp and an editor, on two pipes of bytes. */
function connect(options: Omit<ServeAcpOptions, 'input' | 'output'>): Editor {
  let hangUp = () => {};
  const toAgent = new TransformStream<Uint8Array, Uint8Array>({ start: (controller) => void (hangUp = () => controller.terminate()) });
  const toEditor = new TransformStream<Uint8Array, Uint8Array>();
  let completed = false;
  const served = serveAcp({ ...options, input: toAgent.readable, output: toEditor.writable }).subscribe({ complete: () => (completed = true) });
  const updates: SessionNotification[] = [];
  const permissions: RequestPermissionRequest[] = [];
  const connection = client({ name: 'spec' })
    .onNotification('session/update', ({ params }) => void updates.push(params))
    .onRequest('session/request_permission', ({ params, signal }) => (permissions.push(params), editor.answer(params, signal)))
    .connect(ndJsonStream(toAgent.writable, toEditor.readable));
  const editor: Editor = {
    connection,
    updates,
    permissions,
    answer: async () => ({ outcome: { outcome: 'selected', optionId: 'allow_once' } }),
    served,
    completed: () => completed,
    hangUp,
  };
  editors.push(editor);
  return editor;
}

afterEach(() => {
  for (const editor of editors.splice(0)) {
    editor.served.unsubscribe();
    editor.connection.close();
  }
});

const start: ProviderEvent = { type: 'message_start' };
const stop = (text: string): ProviderEvent[] => [start, { type: 'text_delta', text }, { type: 'message_end', stopReason: 'stop' }];
const registry = () => new ToolRegistry();

async function newSession(editor: Editor, cwd = '/work') {
  await editor.connection.agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
  return (await editor.connection.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
}
const prompt = (editor: Editor, sessionId: string, text: string) => editor.connection.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] });

describe('serveAcp', () => {
  it('E1: refuses a bad option at call time, naming it', () => {
    const agent = { provider: scriptedProvider([]), registry: registry() };
    expect(() => serveAcp(undefined as never)).toThrow('serveAcp: options must be an object (got undefined)');
    expect(() => serveAcp({ agent: 3 as never })).toThrow(/^serveAcp: agent must be a loop configuration/);
    expect(() => serveAcp({ agent: { ...agent, maxTurns: 0 } })).toThrow(/^serveAcp: agent: maxTurns must be/);
    expect(() => serveAcp({ agent, store: 'sessions' as never })).toThrow('serveAcp: store must be a function (got "sessions", a string)');
    expect(() => serveAcp({ agent, needsApproval: true as never })).toThrow(/^serveAcp: needsApproval must be a function/);
    expect(() => serveAcp({ agent, input: process.stdin as never })).toThrow(/^serveAcp: input must be a web ReadableStream/);
  });

  it('E1: without a store, initialize says loadSession false and session/load is no method of it', async () => {
    const editor = connect({ agent: { provider: scriptedProvider([]), registry: registry() } });
    const answer = await editor.connection.agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    expect(answer.agentCapabilities).toEqual({ loadSession: false, promptCapabilities: { image: true, audio: true, embeddedContext: true } });
    await expect(editor.connection.agent.request('session/load', { sessionId: 'x', cwd: '/', mcpServers: [] })).rejects.toMatchObject({ code: -32601 });
  });

  it('E1: a prompt is one conversation turn: text as agent_message_chunk, reasoning as agent_thought_chunk, progress as tool_call_update content', async () => {
    const provider = scriptedProvider([
      [start, { type: 'reasoning_delta', text: 'hmm' }, { type: 'tool_call', call: { id: 'c1', name: 'search_notes', input: { q: 'x' } } }, { type: 'message_end', stopReason: 'toolUse' }],
      stop('found it'),
      stop('again'),
    ]);
    const tools = registry().register({
      name: 'search_notes',
      description: 'search',
      input: { q: 'what' },
      handler: () => new Observable((subscriber) => (subscriber.next(toolProgress('half way')), subscriber.next('one note'), subscriber.complete())),
    });
    const editor = connect({ agent: { provider, registry: tools } });
    const sessionId = await newSession(editor);
    await expect(prompt(editor, sessionId, 'find x')).resolves.toEqual({ stopReason: 'end_turn' });
    expect(editor.updates.map(({ update }) => update)).toEqual([
      { sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'hmm' } },
      { sessionUpdate: 'tool_call', toolCallId: 'c1', title: 'search_notes', kind: 'search', status: 'pending', rawInput: { q: 'x' } },
      { sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'in_progress' },
      { sessionUpdate: 'tool_call_update', toolCallId: 'c1', content: [{ type: 'content', content: { type: 'text', text: 'half way' } }] },
      { sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'completed', content: [{ type: 'content', content: { type: 'text', text: 'one note' } }], rawOutput: { content: 'one note' } },
      { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'found it' } },
    ]);
    expect(editor.updates.every((notification) => notification.sessionId === sessionId)).toBe(true);
    // the next prompt carries the history on (one conversation per session)
    await prompt(editor, sessionId, 'and?');
    expect(provider.inputs[2]!.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant', 'user']);
  });

  it('E1: an image, an embedded resource and a resource link of a prompt reach the model as attachments and text', async () => {
    const provider = scriptedProvider([stop('seen')]);
    const editor = connect({ agent: { provider, registry: registry() } });
    const sessionId = await newSession(editor);
    await editor.connection.agent.request('session/prompt', {
      sessionId,
      prompt: [
        { type: 'text', text: 'What is this?' },
        { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' },
        { type: 'resource', resource: { uri: 'file:///work/a.ts', text: 'const a = 1;' } },
        { type: 'resource_link', name: 'b.ts', uri: 'file:///work/b.ts' },
      ],
    });
    expect(provider.inputs[0]!.messages).toEqual([
      {
        role: 'user',
        content: 'What is this?\nfile:///work/a.ts\n```\nconst a = 1;\n```\n[b.ts](file:///work/b.ts)',
        attachments: [{ type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' }],
      },
    ]);
  });

  it.each<[string, ProviderEvent[][], Partial<ServeAcpOptions['agent']>, string]>([
    ['E1: length answers max_tokens', [[start, { type: 'text_delta', text: 'cut' }, { type: 'message_end', stopReason: 'length' }]], {}, 'max_tokens'],
    [
      'E1: the turn cap answers max_turn_requests',
      [[start, { type: 'tool_call', call: { id: 'c1', name: 'nothing', input: {} } }, { type: 'message_end', stopReason: 'toolUse' }]],
      { maxTurns: 1 },
      'max_turn_requests',
    ],
    [
      'E1: a provider\'s refusal answers refusal',
      [[start, { type: 'message_end', stopReason: 'error', errorMessage: 'refused', failure: { kind: 'refusal', message: 'refused' } }]],
      {},
      'refusal',
    ],
    [
      'E1: a spent budget answers max_tokens',
      [[start, { type: 'tool_call', call: { id: 'c1', name: 'nothing', input: {} } }, { type: 'message_end', stopReason: 'toolUse', usage: { inputTokens: 10, outputTokens: 10 } }]],
      { budget: new TokenBudget(5) },
      'max_tokens',
    ],
  ])('%s', async (_name, turns, more, stopReason) => {
    const tools = registry().register({ name: 'nothing', description: 'nothing', input: {}, handler: () => '' });
    const editor = connect({ agent: { provider: scriptedProvider(turns), registry: tools, ...more } });
    const sessionId = await newSession(editor);
    await expect(prompt(editor, sessionId, 'go')).resolves.toEqual({ stopReason });
  });

  it('E1: a loop that ends with an error answers a JSON-RPC error with its message, and the session goes on', async () => {
    const provider = scriptedProvider([[start, { type: 'message_end', stopReason: 'error', errorMessage: 'HTTP 500: overloaded' }], stop('better')]);
    const editor = connect({ agent: { provider, registry: registry() } });
    const sessionId = await newSession(editor);
    await expect(prompt(editor, sessionId, 'go')).rejects.toMatchObject({ code: -32603, message: 'Internal error: HTTP 500: overloaded' });
    await expect(prompt(editor, sessionId, 'again')).resolves.toEqual({ stopReason: 'end_turn' });
  });

  it('E1: agent as a function is asked once per session, with its id, cwd and MCP servers', async () => {
    const asked: AcpSession[] = [];
    const editor = connect({
      agent: (session) => {
        asked.push(session);
        return { provider: scriptedProvider([stop('hi')]), registry: registry() };
      },
    });
    const one = await newSession(editor, '/one');
    const two = (await editor.connection.agent.request('session/new', { cwd: '/two', mcpServers: [] })).sessionId;
    expect(asked).toEqual([
      { sessionId: one, cwd: '/one', mcpServers: [] },
      { sessionId: two, cwd: '/two', mcpServers: [] },
    ]);
    await expect(prompt(editor, two, 'hi')).resolves.toEqual({ stopReason: 'end_turn' });
    await expect(prompt(editor, 'nobody', 'hi')).rejects.toMatchObject({ code: -32002 });
  });

  it('E1: a session whose agent function gives a bad configuration fails session/new, naming the option', async () => {
    const editor = connect({ agent: () => ({ provider: scriptedProvider([]), registry: registry(), maxTurns: 0 }) });
    await editor.connection.agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    await expect(editor.connection.agent.request('session/new', { cwd: '/work', mcpServers: [] })).rejects.toMatchObject({ data: { details: expect.stringMatching(/maxTurns must be/) } });
  });

  it('E1: with a store, a session is saved as it goes and session/load replays it on another connection, which goes on from it', async () => {
    const stores = new Map<string, ReturnType<typeof memoryStore>>();
    const store = (id: string) => stores.get(id) ?? stores.set(id, memoryStore()).get(id)!;
    const seen: ProviderInput[] = [];
    const provider = (input: ProviderInput) => (seen.push(input), scriptedProvider([stop(`answer ${seen.length}`)])(input));
    const one = connect({ agent: { provider, registry: registry() }, store });
    const sessionId = await newSession(one);
    await prompt(one, sessionId, 'first');
    const two = connect({ agent: { provider, registry: registry() }, store });
    await two.connection.agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    await expect(two.connection.agent.request('session/load', { sessionId, cwd: '/work', mcpServers: [] })).resolves.toEqual({});
    expect(two.updates.map(({ update }) => update)).toEqual([
      { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'first' } },
      { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'answer 1' } },
    ]);
    await prompt(two, sessionId, 'second');
    expect(seen[1]!.messages.map((message) => message.content)).toEqual(['first', 'answer 1', 'second']);
    // loaded again where it is live, it replays what it holds now
    const before = two.updates.length;
    await two.connection.agent.request('session/load', { sessionId, cwd: '/work', mcpServers: [] });
    expect(two.updates.slice(before).map(({ update }) => update.sessionUpdate)).toEqual(['user_message_chunk', 'agent_message_chunk', 'user_message_chunk', 'agent_message_chunk']);
  });

  it('E1: session/cancel aborts the running tool (its signal aborts) and the prompt answers cancelled; unsubscribing closes everything', async () => {
    const aborted: string[] = [];
    const tools = registry().register({
      name: 'wait',
      description: 'waits',
      input: {},
      handler: (_input, { signal }) => (signal.addEventListener('abort', () => aborted.push('wait')), NEVER),
    });
    const call = (id: string): ProviderEvent[] => [start, { type: 'tool_call', call: { id, name: 'wait', input: {} } }, { type: 'message_end', stopReason: 'toolUse' }];
    const editor = connect({ agent: { provider: scriptedProvider([call('c1'), call('c2')]), registry: tools } });
    const sessionId = await newSession(editor);
    const answer = prompt(editor, sessionId, 'wait');
    while (!editor.updates.some(({ update }) => update.sessionUpdate === 'tool_call_update')) await new Promise((resolve) => setTimeout(resolve, 1));
    await editor.connection.agent.notify('session/cancel', { sessionId });
    await expect(answer).resolves.toEqual({ stopReason: 'cancelled' });
    expect(aborted).toEqual(['wait']);
    void prompt(editor, sessionId, 'wait again').catch(() => undefined);
    while (!editor.updates.some(({ update }) => update.sessionUpdate === 'tool_call' && update.toolCallId === 'c2')) await new Promise((resolve) => setTimeout(resolve, 1));
    await new Promise((resolve) => setTimeout(resolve, 5));
    editor.served.unsubscribe();
    expect(aborted).toEqual(['wait', 'wait']);
  });

  it('E1: a $/cancel_request for one prompt cancels that prompt only: a queued one leaves the queue, a running one aborts, each answers cancelled', async () => {
    const aborted: string[] = [];
    const tools = registry().register({
      name: 'wait',
      description: 'waits',
      input: {},
      handler: (_input, { signal }) => (signal.addEventListener('abort', () => aborted.push('wait')), NEVER),
    });
    const provider = scriptedProvider([[start, { type: 'tool_call', call: { id: 'c1', name: 'wait', input: {} } }, { type: 'message_end', stopReason: 'toolUse' }], stop('three done')]);
    const editor = connect({ agent: { provider, registry: tools } });
    const sessionId = await newSession(editor);
    const ask = (text: string, cancel: AbortController) =>
      editor.connection.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] }, { cancellationSignal: cancel.signal });
    const [one, two, three] = [new AbortController(), new AbortController(), new AbortController()];
    const first = ask('one', one);
    await until(() => editor.updates.some(({ update }) => update.sessionUpdate === 'tool_call_update'), 'the tool to start');
    const second = ask('two', two);
    const third = ask('three', three);
    two.abort();
    await expect(second).resolves.toEqual({ stopReason: 'cancelled' });
    expect(aborted).toEqual([]); // the running prompt goes on
    one.abort();
    await expect(first).resolves.toEqual({ stopReason: 'cancelled' });
    expect(aborted).toEqual(['wait']);
    // the prompt queued after it was not dropped: it runs, and the cancelled one never joined the history
    await expect(third).resolves.toEqual({ stopReason: 'end_turn' });
    expect(provider.inputs[1]!.messages.filter((message) => message.role === 'user').map((message) => message.content)).toEqual(['one', 'three']);
  });

  it('E1: session/cancel drops the prompts still queued behind the running one: each answers cancelled and none reaches the model', async () => {
    const tools = registry().register({ name: 'wait', description: 'waits', input: {}, handler: () => NEVER });
    const provider = scriptedProvider([[start, { type: 'tool_call', call: { id: 'c1', name: 'wait', input: {} } }, { type: 'message_end', stopReason: 'toolUse' }], stop('after')]);
    const editor = connect({ agent: { provider, registry: tools } });
    const sessionId = await newSession(editor);
    const first = prompt(editor, sessionId, 'one');
    await until(() => editor.updates.some(({ update }) => update.sessionUpdate === 'tool_call_update'), 'the tool to start');
    const queued = [prompt(editor, sessionId, 'two'), prompt(editor, sessionId, 'three')];
    await new Promise((resolve) => setTimeout(resolve, 5)); // they reach the agent
    await editor.connection.agent.notify('session/cancel', { sessionId });
    await expect(Promise.all([first, ...queued])).resolves.toEqual([{ stopReason: 'cancelled' }, { stopReason: 'cancelled' }, { stopReason: 'cancelled' }]);
    await expect(prompt(editor, sessionId, 'four')).resolves.toEqual({ stopReason: 'end_turn' });
    expect(provider.inputs[1]!.messages.filter((message) => message.role === 'user').map((message) => message.content)).toEqual(['one', 'four']);
  });

  it('E1: "reject always" denies the tool\'s later calls in that session without asking; another session asks again', async () => {
    const deploy = (id: string): ProviderEvent[] => [start, { type: 'tool_call', call: { id, name: 'deploy', input: {} } }, { type: 'message_end', stopReason: 'toolUse' }];
    const tools = registry().register({ name: 'deploy', description: 'deploys', input: {}, handler: () => 'deployed' });
    const editor = connect({
      agent: () => ({ provider: scriptedProvider([deploy('c1'), stop('no'), deploy('c2'), stop('no')]), registry: tools }),
      needsApproval: (call) => call.name === 'deploy',
    });
    editor.answer = async () => ({ outcome: { outcome: 'selected', optionId: 'reject_always' } });
    const sessionId = await newSession(editor);
    await prompt(editor, sessionId, 'deploy');
    await prompt(editor, sessionId, 'deploy again');
    expect(editor.permissions.map((request) => request.toolCall.toolCallId)).toEqual(['c1']);
    const failed = editor.updates.filter(({ update }) => update.sessionUpdate === 'tool_call_update' && update.status === 'failed').map(({ update }) => update);
    expect(failed).toMatchObject([
      { toolCallId: 'c1', rawOutput: { content: 'denied: not approved' } },
      { toolCallId: 'c2', rawOutput: { content: 'denied: not approved' } },
    ]);
    const other = (await editor.connection.agent.request('session/new', { cwd: '/work', mcpServers: [] })).sessionId;
    await prompt(editor, other, 'deploy');
    expect(editor.permissions.map((request) => request.sessionId)).toEqual([sessionId, other]);
  });

  it('E1: session/cancel while the editor asks for permission cancels the request and the prompt answers cancelled', async () => {
    const tools = registry().register({ name: 'deploy', description: 'deploys', input: {}, handler: () => 'deployed' });
    const provider = scriptedProvider([[start, { type: 'tool_call', call: { id: 'c1', name: 'deploy', input: {} } }, { type: 'message_end', stopReason: 'toolUse' }]]);
    const editor = connect({ agent: { provider, registry: tools }, needsApproval: () => true });
    let cancelled = false;
    // an editor that waits for the user until the agent cancels its request, then answers as ACP says: cancelled
    editor.answer = (_request, signal) =>
      new Promise((resolve) =>
        signal.addEventListener('abort', () => {
          cancelled = true;
          resolve({ outcome: { outcome: 'cancelled' } });
        }),
      );
    const sessionId = await newSession(editor);
    const answer = prompt(editor, sessionId, 'deploy');
    while (editor.permissions.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    await editor.connection.agent.notify('session/cancel', { sessionId });
    await expect(answer).resolves.toEqual({ stopReason: 'cancelled' });
    for (let i = 0; i < 100 && !cancelled; i++) await new Promise((resolve) => setTimeout(resolve, 2));
    expect(cancelled).toBe(true);
    // the call never ran: its result is R11's
    expect(editor.updates.map(({ update }) => update)).toMatchObject([
      { sessionUpdate: 'tool_call', toolCallId: 'c1', status: 'pending' },
      { sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'failed', rawOutput: { content: 'error: aborted' } },
    ]);
  });

  it('E1: a permission request the editor fails (a JSON-RPC error) denies the call, and the prompt goes on', async () => {
    const tools = registry().register({ name: 'deploy', description: 'deploys', input: {}, handler: () => 'deployed' });
    const provider = scriptedProvider([[start, { type: 'tool_call', call: { id: 'c1', name: 'deploy', input: {} } }, { type: 'message_end', stopReason: 'toolUse' }], stop('not deployed')]);
    const editor = connect({ agent: { provider, registry: tools }, needsApproval: () => true });
    editor.answer = async () => {
      throw new Error('the dialog crashed');
    };
    const sessionId = await newSession(editor);
    await expect(prompt(editor, sessionId, 'deploy')).resolves.toEqual({ stopReason: 'end_turn' });
    expect(editor.permissions).toHaveLength(1);
    expect(editor.updates.map(({ update }) => update)).toMatchObject([
      { sessionUpdate: 'tool_call', toolCallId: 'c1', status: 'pending' },
      { sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'failed', rawOutput: { content: 'denied: not approved' } },
      { sessionUpdate: 'agent_message_chunk' },
    ]);
  });

  it('E1: a loop that ends another way (the agent\'s own signal) while the editor asks for permission cancels the request', async () => {
    const tools = registry().register({ name: 'deploy', description: 'deploys', input: {}, handler: () => 'deployed' });
    const provider = scriptedProvider([[start, { type: 'tool_call', call: { id: 'c1', name: 'deploy', input: {} } }, { type: 'message_end', stopReason: 'toolUse' }]]);
    const stopAgent = new AbortController();
    const editor = connect({ agent: { provider, registry: tools, signal: stopAgent.signal }, needsApproval: () => true });
    let withdrawn = false;
    editor.answer = (_request, signal) =>
      new Promise((resolve) =>
        signal.addEventListener('abort', () => {
          withdrawn = true;
          resolve({ outcome: { outcome: 'cancelled' } });
        }),
      );
    const sessionId = await newSession(editor);
    const answer = prompt(editor, sessionId, 'deploy');
    await until(() => editor.permissions.length > 0, 'the permission request');
    stopAgent.abort();
    await expect(answer).resolves.toEqual({ stopReason: 'cancelled' });
    await until(() => withdrawn, 'the permission request to be withdrawn', 2_000);
  });

  it('E1: once the agent\'s own signal has stopped its conversation, a prompt is answered an error that says so, never left waiting', async () => {
    const stopAgent = new AbortController();
    const editor = connect({ agent: { provider: scriptedProvider([stop('one')]), registry: registry(), signal: stopAgent.signal } });
    const sessionId = await newSession(editor);
    await expect(prompt(editor, sessionId, 'one')).resolves.toEqual({ stopReason: 'end_turn' });
    stopAgent.abort();
    await expect(prompt(editor, sessionId, 'two')).rejects.toMatchObject({ code: -32603, message: expect.stringMatching(/the session cannot go on: .*stopped/) });
  });

  it('E1: completes when the editor closes its end of the connection', async () => {
    const editor = connect({ agent: { provider: scriptedProvider([]), registry: registry() } });
    await newSession(editor);
    expect(editor.completed()).toBe(false);
    editor.hangUp();
    for (let i = 0; i < 100 && !editor.completed(); i++) await new Promise((resolve) => setTimeout(resolve, 2));
    expect(editor.completed()).toBe(true);
  });
});
