/** U2, H8: `fromUiMessages` — a useChat request's `UIMessage[]` as the loop's history and the person's decisions. */
import { lastValueFrom, toArray } from 'rxjs';
import type { UIMessage } from 'ai';
import { runEventedToolLoop, ToolRegistry } from '../../src/index.js';
import type { ApprovalAnswer } from '../../src/index.js';
import { fromUiMessages } from '../../src/ui/index.js';

const user = (text: string, id = 'u'): UIMessage => ({ id, role: 'user', parts: [{ type: 'text', text }] });
const decided = (request: ReturnType<typeof fromUiMessages>): Promise<ApprovalAnswer[]> => lastValueFrom(request.decisions.pipe(toArray()));

/** An assistant message of one step whose tool parts are in the given states. */
function assistant(parts: Record<string, unknown>[]): UIMessage {
  return { id: 'a', role: 'assistant', parts: [{ type: 'step-start' }, { type: 'text', text: 'On it.' }, ...parts] as UIMessage['parts'] };
}
const tool = (id: string, state: string, extra: Record<string, unknown> = {}) => ({ type: 'tool-door', toolCallId: id, state, input: { which: id }, ...extra });

describe('fromUiMessages (U2, H8)', () => {
  it('U2: system and user text, a user\'s files as attachments (F1), each step an assistant message with its calls and results', async () => {
    const request = fromUiMessages([
      { id: 's', role: 'system', parts: [{ type: 'text', text: 'Be brief.' }] },
      { id: 'u', role: 'user', parts: [{ type: 'text', text: 'What is ' }, { type: 'text', text: 'this?' }, { type: 'file', mediaType: 'image/png', url: 'https://example.com/a.png', filename: 'a.png' }] },
      {
        id: 'a',
        role: 'assistant',
        parts: [
          { type: 'step-start' },
          { type: 'reasoning', text: 'a picture', state: 'done' },
          { type: 'text', text: 'Let me look.' },
          { type: 'tool-zoom', toolCallId: 'z1', state: 'output-available', input: { by: 2 }, output: 'a cat' },
          { type: 'dynamic-tool', toolName: 'lookup', toolCallId: 'l1', state: 'output-available', input: {}, output: { kind: 'cat' } },
          { type: 'tool-zoom', toolCallId: 'z2', state: 'output-error', input: { by: 99 }, errorText: 'error: too far' },
          { type: 'tool-zoom', toolCallId: 'z3', state: 'output-denied', input: { by: 3 }, approval: { id: 'z3', approved: false } },
          { type: 'tool-zoom', toolCallId: 'z4', state: 'input-streaming', input: { b: 1 } },
          { type: 'step-start' },
          { type: 'text', text: 'A cat.' },
        ] as UIMessage['parts'],
      },
    ]);
    expect(request.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What is this?', attachments: [{ type: 'image', mimeType: 'image/png', url: 'https://example.com/a.png', name: 'a.png' }] },
      {
        role: 'assistant',
        content: 'Let me look.',
        stopReason: 'toolUse',
        toolCalls: [
          { id: 'z1', name: 'zoom', input: { by: 2 } },
          { id: 'l1', name: 'lookup', input: {} },
          { id: 'z2', name: 'zoom', input: { by: 99 } },
          { id: 'z3', name: 'zoom', input: { by: 3 } },
        ],
      },
      { role: 'toolResult', toolCallId: 'z1', toolName: 'zoom', content: 'a cat', isError: false },
      { role: 'toolResult', toolCallId: 'l1', toolName: 'lookup', content: '{"kind":"cat"}', isError: false },
      { role: 'toolResult', toolCallId: 'z2', toolName: 'zoom', content: 'error: too far', isError: true },
      { role: 'toolResult', toolCallId: 'z3', toolName: 'zoom', content: 'denied: not approved', isError: true },
      { role: 'assistant', content: 'A cat.', stopReason: 'stop' },
    ]);
    expect(await decided(request)).toEqual([]);
  });

  it('H8: in the last message, answered approvals are decisions (true, false, a reason to deny) and their calls wait for turn 0, as a call that had not started does; an unanswered one waits again', async () => {
    const request = fromUiMessages([
      user('open the doors'),
      assistant([
        tool('d1', 'approval-responded', { approval: { id: 'd1', approved: true } }),
        tool('d2', 'approval-responded', { approval: { id: 'd2', approved: false } }),
        tool('d3', 'approval-responded', { approval: { id: 'd3', approved: false, reason: 'it is cold' } }),
        tool('d4', 'approval-requested', { approval: { id: 'd4' } }),
        tool('d5', 'output-available', { output: 'opened' }),
        tool('d6', 'input-available'), // had not started when the message ended: turn 0 runs it
      ]),
    ]);
    expect(request.messages.slice(1)).toEqual([
      { role: 'assistant', content: 'On it.', stopReason: 'toolUse', toolCalls: ['d1', 'd2', 'd3', 'd4', 'd5', 'd6'].map((id) => ({ id, name: 'door', input: { which: id } })) },
      { role: 'toolResult', toolCallId: 'd5', toolName: 'door', content: 'opened', isError: false },
    ]);
    expect(await decided(request)).toEqual([
      { toolCallId: 'd1', decision: true },
      { toolCallId: 'd2', decision: false },
      { toolCallId: 'd3', decision: { action: 'deny', reason: 'it is cold' } },
    ]);
  });

  it('H8, R22: the loop on that request runs the approved call at turn 0, denies the others, and asks again for the unanswered one', () => {
    const ran: string[] = [];
    const registry = new ToolRegistry().register({ name: 'door', description: 'opens a door', input: { which: 'which door' }, handler: ({ which }) => (ran.push(which), `opened ${which}`) });
    const { messages, decisions } = fromUiMessages([user('open'), assistant([tool('d1', 'approval-responded', { approval: { id: 'd1', approved: true } }), tool('d3', 'approval-responded', { approval: { id: 'd3', approved: false, reason: 'cold' } }), tool('d4', 'approval-requested', { approval: { id: 'd4' } })])]);
    const seen: string[] = [];
    // d4 waits for a person: the run goes no further, and the spec leaves it there
    const subscription = runEventedToolLoop({ provider: () => { throw new Error('no model call expected'); }, registry, messages, approvals: { needsApproval: () => true, decisions } }).subscribe((event) => {
      if (event.type === 'tool_result') seen.push(`${event.message.toolCallId}: ${event.message.content}`);
      if (event.type === 'tool_approval') seen.push(`${event.call.id} waits`);
    });
    subscription.unsubscribe();
    expect(seen).toEqual(['d1: opened d1', 'd3: denied: cold', 'd4 waits']);
    expect(ran).toEqual(['d1']);
  });

  it('R11: a call without an output that cannot resume (the client stopped the run, or wrote again instead of answering) gets "error: aborted"', async () => {
    const request = fromUiMessages([user('go'), assistant([tool('s1', 'input-available'), tool('s2', 'approval-requested', { approval: { id: 's2' } }), tool('s3', 'approval-responded', { approval: { id: 's3', approved: true } })]), user('never mind', 'u2')]);
    expect(request.messages.slice(2, 5)).toEqual(['s1', 's2', 's3'].map((id) => ({ role: 'toolResult', toolCallId: id, toolName: 'door', content: 'error: aborted', isError: true })));
    expect(await decided(request)).toEqual([]);
  });

  it('U2: a bad request is refused at call time, naming what is wrong', () => {
    expect(() => fromUiMessages('hi' as never)).toThrow('fromUiMessages: messages must be an array of UIMessage (got "hi", a string)');
    expect(() => fromUiMessages([{ id: 'x', role: 'user' } as never])).toThrow('fromUiMessages: messages[0] must be a UIMessage, an object with a role and parts');
    expect(() => fromUiMessages([{ id: 'x', role: 'tool', parts: [] } as never])).toThrow("fromUiMessages: messages[0].role must be 'system', 'user' or 'assistant' (got \"tool\", a string)");
  });
});
