import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpAgent } from '@ag-ui/client';
import type { RunAgentInput } from '@ag-ui/core';
import { defer, finalize, interval, map, NEVER, Observable } from 'rxjs';
import {
  runEventedToolLoop,
  ToolRegistry,
  type AgentMessage,
  type ConversationEvent,
  type LoopEvent,
  type Provider,
  type ProviderEvent,
} from 'rx-tool-loop';
import { fromAgUiInput, fromAgUiMessages, toAgUi, writeSse, type AgUiEvent } from 'rx-tool-loop/ui';
import { verified } from './ag-ui-check.js';
import { until } from '../support/until';

// U6, the AG-UI half: a node:http server serves the loop as AG-UI over SSE (POST RunAgentInput -> fromAgUiInput ->
// the loop -> toAgUi -> writeSse), and @ag-ui/client's own HttpAgent runs against it on 127.0.0.1.

/** The model: asks for `send` (or `wait`) on the user's prompt, answers once it has the result. */
const provider: Provider = ({ messages }) => {
  const last = messages.at(-1) as AgentMessage;
  if (last.role === 'toolResult') {
    return fromEvents([{ type: 'message_start' }, { type: 'text_delta', text: `Done: ${last.content}` }, { type: 'message_end', stopReason: 'stop' }]);
  }
  const prompt = last.role === 'user' ? last.content : '';
  if (prompt === 'hang') {
    // streams on after its call, until torn down
    return new Observable<ProviderEvent>((subscriber) => {
      subscriber.next({ type: 'message_start' });
      subscriber.next({ type: 'tool_call', call: { id: 'w1', name: 'wait', input: {} } });
      const ticks = interval(5).subscribe(() => subscriber.next({ type: 'text_delta', text: '.' }));
      return () => {
        ticks.unsubscribe();
        seen.push('provider torn down');
      };
    });
  }
  return fromEvents([
    { type: 'message_start' },
    { type: 'text_delta', text: 'Sending.' },
    { type: 'tool_call_delta', index: 0, id: 's1', name: 'send', argumentsDelta: '{"to":' },
    { type: 'tool_call_delta', index: 0, argumentsDelta: `"${prompt}"}` },
    { type: 'tool_call', call: { id: 's1', name: 'send', input: { to: prompt } } },
    { type: 'message_end', stopReason: 'toolUse', usage: { inputTokens: 7, outputTokens: 3 } },
  ]);
};

function fromEvents(events: ProviderEvent[]): Observable<ProviderEvent> {
  return new Observable((subscriber) => {
    for (const event of events) subscriber.next(event);
    subscriber.complete();
  });
}

let seen: string[] = [];
const sent: unknown[] = [];
const registry = new ToolRegistry()
  .register({ name: 'send', description: 'sends', input: { to: 'whom' }, handler: (input) => (sent.push(input), `sent to ${String(input.to)}`) })
  .register({
    name: 'wait',
    description: 'waits',
    input: {},
    handler: (_input, context) => {
      context.signal.addEventListener('abort', () => seen.push('tool signal aborted'));
      return NEVER.pipe(finalize(() => seen.push('tool torn down')));
    },
  });

/** What each request's loop emitted, by runId: the server's side of the comparison. */
const loops = new Map<string, ConversationEvent[]>();
const streams = new Map<string, AgUiEvent[]>();
let approve = false;

async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
  let body = '';
  for await (const chunk of request) body += String(chunk);
  const input = JSON.parse(body) as RunAgentInput;
  const events: ConversationEvent[] = [];
  const agUi: AgUiEvent[] = [];
  loops.set(input.runId, events);
  streams.set(input.runId, agUi);
  const events$ = defer(() => {
    const run = fromAgUiInput(input);
    return runEventedToolLoop({
      provider,
      registry,
      messages: run.messages,
      approvals: { needsApproval: (call) => approve && call.name === 'send', decisions: run.decisions },
    });
  }).pipe(
    map((event) => (events.push(event), event)),
    toAgUi({ threadId: input.threadId, runId: () => input.runId }),
    map((event) => (agUi.push(event), event)),
  );
  writeSse(response, events$);
}

let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((request, response) => void handle(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  seen = [];
  sent.length = 0;
  approve = false;
});

function loopEnd(runId: string): Extract<LoopEvent, { type: 'loop_end' }> {
  const end = loops.get(runId)?.at(-1);
  if (end?.type !== 'loop_end') throw new Error(`run ${runId} did not end with loop_end`);
  return end;
}

describe("@ag-ui/client's HttpAgent against the loop served as AG-UI over SSE (U6)", () => {
  it('U6: a run with a tool: the agent streams it, and its messages afterwards are the loop’s history', async () => {
    const agent = new HttpAgent({ url, threadId: 'thread-1', initialMessages: [{ id: 'u1', role: 'user', content: 'ada' }] });
    await agent.runAgent({ runId: 'run-1' });
    await verified(streams.get('run-1') as AgUiEvent[]);
    expect(sent).toEqual([{ to: 'ada' }]);
    expect(fromAgUiMessages(agent.messages)).toEqual(loopEnd('run-1').messages);
    expect(agent.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Done: sent to ada' });
  });

  it('U6, H8: an approval takes two requests: run 1 ends in an interrupt and runs nothing; run 2 resumes it approved, the tool runs', async () => {
    approve = true;
    const agent = new HttpAgent({ url, threadId: 'thread-2', initialMessages: [{ id: 'u1', role: 'user', content: 'grace' }] });
    await agent.runAgent({ runId: 'run-2a' });
    await verified(streams.get('run-2a') as AgUiEvent[]);
    expect(sent).toEqual([]);
    expect(agent.pendingInterrupts).toEqual([expect.objectContaining({ id: 's1', reason: 'tool_call', toolCallId: 's1' })]);
    // the run ended at the approval: the loop (its provider call and the waiting call) was unsubscribed, no loop_end
    expect(loops.get('run-2a')?.map((e) => e.type)).not.toContain('loop_end');
    expect(fromAgUiMessages(agent.messages)).toEqual((loops.get('run-2a')?.find((e) => e.type === 'tool_approval') as Extract<LoopEvent, { type: 'tool_approval' }>).messages);

    await agent.runAgent({ runId: 'run-2b', resume: [{ interruptId: 's1', status: 'resolved', payload: { approved: true, editedArgs: { to: 'Grace Hopper' } } }] });
    await verified(streams.get('run-2b') as AgUiEvent[]);
    expect(sent).toEqual([{ to: 'Grace Hopper' }]);
    expect(agent.pendingInterrupts).toEqual([]);
    expect(loops.get('run-2b')?.map((e) => e.type)).not.toContain('tool_approval');
    expect(fromAgUiMessages(agent.messages)).toEqual(loopEnd('run-2b').messages);
    expect(agent.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Done: sent to Grace Hopper' });
  });

  it('U6: abortRun() on the agent tears the server’s provider call and tool down', async () => {
    const agent = new HttpAgent({ url, threadId: 'thread-3', initialMessages: [{ id: 'u1', role: 'user', content: 'hang' }] });
    const running = agent.runAgent({ runId: 'run-3' }).catch(() => undefined);
    await until(() => (streams.get('run-3') ?? []).some((e) => e.type === 'TEXT_MESSAGE_CONTENT'));
    expect(seen).toEqual([]);
    agent.abortRun();
    await running;
    await until(() => seen.length === 3);
    expect(seen.sort()).toEqual(['provider torn down', 'tool signal aborted', 'tool torn down']);
  });
});

