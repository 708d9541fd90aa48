/**
 * E2: `examples/acp-agent.ts` as an editor runs it — a child process on real pipes, driven with the SDK's client
 * side: a prompt with a tool, permissions, cancels (during a tool, and racing the turn's end), `session/load` in a
 * new process after the first was killed, stdout that is nothing but JSON-RPC, and no process left behind.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROTOCOL_VERSION, type SessionUpdate } from '@agentclientprotocol/sdk';
import { type AcpChild, agentPid, alive, startAgent } from './support/acp-child';
import { until } from '../support/until';

jest.setTimeout(60_000);

const folder = mkdtempSync(join(tmpdir(), 'acp-agent-'));
const started: AcpChild[] = [];
let first: AcpChild;
/**
 * Started with the first and left idle until the first is killed (ts-node's start-up is most of this file's
 * time), as the README's editor configuration starts it: `npm run --silent acp`.
 */
let second: AcpChild;
let sessionId: string;
/** The prompts sent to each agent, to count their answers. */
const promptsSent = new Map<AcpChild, number>();

const start = (how: 'ts-node' | 'npm' = 'ts-node') => {
  const agent = startAgent(['--store', folder], how);
  started.push(agent);
  return agent;
};
const initialize = (agent: AcpChild) => agent.connection.agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
const prompt = (agent: AcpChild, text: string, id = sessionId) => {
  promptsSent.set(agent, (promptsSent.get(agent) ?? 0) + 1);
  return agent.connection.agent.request('session/prompt', { sessionId: id, prompt: [{ type: 'text', text }] });
};
const cancel = (agent: AcpChild, id = sessionId) => agent.connection.agent.notify('session/cancel', { sessionId: id });
/** The updates received from `from` on, as `kind` or `kind:status`. */
const kinds = (agent: AcpChild, from: number) =>
  agent.updates.slice(from).map(({ update }) => ('status' in update && update.status ? `${update.sessionUpdate}:${update.status}` : update.sessionUpdate));
const updatesOf = (agent: AcpChild, from: number): SessionUpdate[] => agent.updates.slice(from).map(({ update }) => update);
const textOf = (updates: SessionUpdate[], kind: string) =>
  updates.map((update) => (update.sessionUpdate === kind && 'content' in update && update.content && !Array.isArray(update.content) && update.content.type === 'text' ? update.content.text : '')).join('');

beforeAll(() => {
  first = start();
  second = start('npm');
});

afterAll(async () => {
  for (const agent of started) {
    if (agent.child.exitCode === null && agent.child.signalCode === null) {
      // npm's group (npm, its shell, the agent), or the one process ts-node is
      if (agent === second) process.kill(-agent.child.pid!, 'SIGKILL');
      else agent.child.kill('SIGKILL');
    }
    await agent.exited;
  }
  rmSync(folder, { recursive: true, force: true });
});

describe('examples/acp-agent.ts over real pipes', () => {
  it('E1: initialize answers its capabilities: loadSession with a store, images, audio and embedded resources in prompts', async () => {
    const answer = await initialize(first);
    expect(answer.protocolVersion).toBe(PROTOCOL_VERSION);
    expect(answer.agentCapabilities).toEqual({ loadSession: true, promptCapabilities: { image: true, audio: true, embeddedContext: true } });
    expect(answer.agentInfo?.name).toBe('rx-tool-loop-example');
    sessionId = (await first.connection.agent.request('session/new', { cwd: folder, mcpServers: [] })).sessionId;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('E2: a prompt with a tool streams tool_call (pending), in_progress, completed, then the answer, and ends end_turn', async () => {
    const from = first.updates.length;
    await expect(prompt(first, 'What time is it?')).resolves.toEqual({ stopReason: 'end_turn' });
    expect(kinds(first, from)).toEqual(['tool_call:pending', 'tool_call_update:in_progress', 'tool_call_update:completed', 'agent_message_chunk', 'agent_message_chunk']);
    const [call, , done] = updatesOf(first, from);
    expect(call).toMatchObject({ sessionUpdate: 'tool_call', title: 'current_time', kind: 'other', rawInput: {} });
    expect(done).toMatchObject({
      toolCallId: (call as { toolCallId: string }).toolCallId,
      content: [{ type: 'content', content: { type: 'text', text: '2026-01-01T00:00:00Z' } }],
      rawOutput: { content: '2026-01-01T00:00:00Z' },
    });
    expect(textOf(updatesOf(first, from), 'agent_message_chunk')).toBe('current_time: 2026-01-01T00:00:00Z');
  });

  it('E2: a permission granted runs the call, one rejected denies it, and "allow always" is not asked again in the session', async () => {
    const asked = first.permissions.length;
    let from = first.updates.length;
    first.answer = () => ({ outcome: { outcome: 'selected', optionId: 'allow_once' } });
    await expect(prompt(first, 'Please deploy.')).resolves.toEqual({ stopReason: 'end_turn' });
    const request = first.permissions[asked]!;
    expect(request.options.map((option) => option.kind)).toEqual(['allow_once', 'allow_always', 'reject_once', 'reject_always']);
    expect(request.toolCall).toMatchObject({ title: 'deploy', rawInput: { target: 'staging' }, kind: 'execute' });
    expect(kinds(first, from)).toEqual(['tool_call:pending', 'tool_call_update:in_progress', 'tool_call_update:completed', 'agent_message_chunk', 'agent_message_chunk']);
    expect(textOf(updatesOf(first, from), 'agent_message_chunk')).toBe('deploy: deployed to staging');

    from = first.updates.length;
    first.answer = () => ({ outcome: { outcome: 'selected', optionId: 'reject_once' } });
    await expect(prompt(first, 'Deploy again.')).resolves.toEqual({ stopReason: 'end_turn' });
    expect(kinds(first, from)).toEqual(['tool_call:pending', 'tool_call_update:failed', 'agent_message_chunk', 'agent_message_chunk']);
    expect(textOf(updatesOf(first, from), 'agent_message_chunk')).toBe('The deploy call failed: denied: not approved');

    first.answer = () => ({ outcome: { outcome: 'selected', optionId: 'allow_always' } });
    await expect(prompt(first, 'Deploy, and always.')).resolves.toEqual({ stopReason: 'end_turn' });
    const before = first.permissions.length;
    from = first.updates.length;
    await expect(prompt(first, 'Deploy once more.')).resolves.toEqual({ stopReason: 'end_turn' });
    expect(first.permissions.length).toBe(before);
    expect(textOf(updatesOf(first, from), 'agent_message_chunk')).toBe('deploy: deployed to staging');
  });

  it('E2: a cancelled permission request denies the call', async () => {
    const other = (await first.connection.agent.request('session/new', { cwd: folder, mcpServers: [] })).sessionId;
    first.answer = () => ({ outcome: { outcome: 'cancelled' } });
    const from = first.updates.length;
    await expect(prompt(first, 'Deploy it.', other)).resolves.toEqual({ stopReason: 'end_turn' });
    expect(textOf(updatesOf(first, from), 'agent_message_chunk')).toBe('The deploy call failed: denied: not approved');
  });

  it('E2: session/cancel during a tool aborts it (its signal aborts) and the prompt answers cancelled', async () => {
    const from = first.updates.length;
    const answer = prompt(first, 'Run the slow task.');
    await until(() => kinds(first, from).includes('tool_call_update:in_progress'), 'the slow task to start');
    await cancel(first);
    await expect(answer).resolves.toEqual({ stopReason: 'cancelled' });
    await first.printed('slow_task: signal aborted');
    // the session goes on
    await expect(prompt(first, 'Still there?')).resolves.toEqual({ stopReason: 'end_turn' });
  });

  it('E2: a cancel racing the turn\'s end gets one valid answer in either order, and the next prompt is not touched by it', async () => {
    // the cancel first: it reaches the agent while the reply streams
    const early = prompt(first, 'Hello early');
    await cancel(first);
    await expect(early).resolves.toEqual({ stopReason: 'cancelled' });
    // the answer first: the cancel finds nothing running, and the next prompt runs to its end
    await expect(prompt(first, 'Hello late')).resolves.toEqual({ stopReason: 'end_turn' });
    await cancel(first);
    await expect(prompt(first, 'After the late cancel')).resolves.toEqual({ stopReason: 'end_turn' });
    // and everything between: the cancel lands somewhere in a reply of ~25 ms
    for (const wait of [0, 5, 10, 15, 20, 25, 30, 40]) {
      const answer = prompt(first, `Race ${wait}`);
      await new Promise((resolve) => setTimeout(resolve, wait));
      await cancel(first);
      expect(['end_turn', 'cancelled']).toContain((await answer).stopReason);
    }
    await expect(prompt(first, 'After the races')).resolves.toEqual({ stopReason: 'end_turn' });
  });

  it('E1: a prompt with an image that is not base64 answers invalid params, naming it, and the next prompt is answered', async () => {
    const image = { type: 'image' as const, mimeType: 'image/png', data: 'not base64!' };
    await expect(first.connection.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'What is this?' }, image] })).rejects.toMatchObject({
      code: -32602,
      message: 'Invalid params: the prompt\'s attachments[0].data must be standard base64 text (got "not base64!", a string)',
    });
    await expect(prompt(first, 'Still there?')).resolves.toEqual({ stopReason: 'end_turn' });
  });

  it('E2: stdout carries nothing but JSON-RPC 2.0, and each request got exactly one answer', () => {
    const lines = first.stdout().split('\n');
    expect(lines.pop()).toBe(''); // every message ends its line
    const messages = lines.map((line) => JSON.parse(line) as { jsonrpc?: string; id?: number | string; method?: string; result?: unknown; error?: unknown });
    expect(messages.filter((message) => message.jsonrpc !== '2.0')).toEqual([]);
    const answers = new Map<unknown, number>();
    for (const message of messages) if (message.method === undefined) answers.set(message.id, (answers.get(message.id) ?? 0) + 1);
    expect([...answers.values()].filter((count) => count !== 1)).toEqual([]);
    const prompts = messages.filter((message) => message.method === undefined && typeof message.result === 'object' && message.result !== null && 'stopReason' in message.result);
    expect(prompts.length).toBe(promptsSent.get(first));
  });

  it('E2, E3: session/load in a new process (npm run acp, as an editor starts it) after the first was killed (SIGKILL) replays the history, and the next prompt goes on from it', async () => {
    const fresh = (await first.connection.agent.request('session/new', { cwd: folder, mcpServers: [] })).sessionId;
    await expect(prompt(first, 'Remember the word kiwi.', fresh)).resolves.toEqual({ stopReason: 'end_turn' });
    await expect(prompt(first, 'What time is it?', fresh)).resolves.toEqual({ stopReason: 'end_turn' });
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');

    await initialize(second);
    await expect(second.connection.agent.request('session/load', { sessionId: fresh, cwd: folder, mcpServers: [] })).resolves.toEqual({});
    expect(kinds(second, 0)).toEqual(['user_message_chunk', 'agent_message_chunk', 'user_message_chunk', 'tool_call:pending', 'tool_call_update:completed', 'agent_message_chunk']);
    const replayed = updatesOf(second, 0);
    expect(textOf(replayed, 'user_message_chunk')).toBe('Remember the word kiwi.What time is it?');
    expect(textOf(replayed, 'agent_message_chunk')).toBe(
      'You said "Remember the word kiwi.". This is prompt 1 of this session; the first was "Remember the word kiwi.".current_time: 2026-01-01T00:00:00Z',
    );
    const from = second.updates.length;
    await expect(prompt(second, 'And now?', fresh)).resolves.toEqual({ stopReason: 'end_turn' });
    expect(textOf(updatesOf(second, from), 'agent_message_chunk')).toBe('You said "And now?". This is prompt 3 of this session; the first was "Remember the word kiwi.".');
    // a session this agent never made is not found; an id that is no session id of it is refused before the store sees it
    await expect(second.connection.agent.request('session/load', { sessionId: 'no-such-session', cwd: folder, mcpServers: [] })).rejects.toMatchObject({ code: -32002 });
    await expect(second.connection.agent.request('session/load', { sessionId: '../escape', cwd: folder, mcpServers: [] })).rejects.toMatchObject({ code: -32602 });

    // the editor closes the connection: the agent exits on its own (npm with it), and no process is left
    const pids = [first.child.pid!, second.child.pid!, await agentPid(first), await agentPid(second)];
    second.child.stdin.end();
    expect(await second.exited).toBe(0);
    expect(pids.filter(alive)).toEqual([]);
    expect(second.stdout().split('\n').slice(0, -1).every((line) => (JSON.parse(line) as { jsonrpc: string }).jsonrpc === '2.0')).toBe(true);
  });
});
