import { lastValueFrom, toArray } from 'rxjs';
import type { AgentMessage } from '../../src/index.js';
import { fromAgUiInput, fromAgUiMessages, toAgUiMessages, type AgUiEvent } from '../../src/ui/index.js';
import { MessageSchema } from '@ag-ui/core/schemas';
import { verified } from './ag-ui-check.js';

const history: AgentMessage[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'What is this?', attachments: [{ type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=', name: 'a.png' }] },
  {
    role: 'assistant',
    content: 'Looking.',
    stopReason: 'toolUse',
    reasoning: [{ type: 'thinking', thinking: 'hm', signature: 's' }],
    toolCalls: [
      { id: 'a', name: 'look', input: { at: 'a.png' } },
      { id: 'b', name: 'fetch', input: {} },
    ],
  },
  { role: 'toolResult', toolCallId: 'a', toolName: 'look', content: 'a cat', isError: false, details: { confidence: 0.9 } },
  { role: 'toolResult', toolCallId: 'b', toolName: 'fetch', content: 'error: offline', isError: true, attachments: [{ type: 'file', mimeType: 'application/pdf', url: 'https://example.com/a.pdf' }] },
  { role: 'assistant', content: 'A cat.', stopReason: 'length', errorMessage: 'cut' },
];

describe('AG-UI messages and requests (U1)', () => {
  it('U1: toAgUiMessages gives AG-UI messages that @ag-ui/core accepts, and fromAgUiMessages gives the history back', () => {
    const messages = toAgUiMessages(history);
    for (const message of messages) expect(MessageSchema.safeParse(message).success).toBe(true);
    expect(fromAgUiMessages(messages)).toEqual(history);
  });

  it('U1: a client’s own messages get the defaults, results in their calls’ order, reasoning and activity messages left out', () => {
    expect(
      fromAgUiMessages([
        { id: '1', role: 'developer', content: 'dev' },
        { id: '2', role: 'user', content: [{ type: 'text', text: 'hi ' }, { type: 'text', text: 'there' }] },
        { id: '3', role: 'reasoning', content: 'thinking' },
        { id: '4', role: 'assistant', toolCalls: [{ id: 'x', type: 'function', function: { name: 'f', arguments: '{"k":1}' } }, { id: 'y', type: 'function', function: { name: 'g', arguments: '' } }] },
        { id: '5', role: 'tool', toolCallId: 'y', content: 'late', error: 'boom' },
        { id: '6', role: 'tool', toolCallId: 'x', content: 'early' },
        { id: '7', role: 'activity', activityType: 'progress', content: {} },
        { id: '8', role: 'assistant', content: 'ok' },
      ]),
    ).toEqual([
      { role: 'system', content: 'dev' },
      { role: 'user', content: 'hi there' },
      { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [{ id: 'x', name: 'f', input: { k: 1 } }, { id: 'y', name: 'g', input: {} }] },
      { role: 'toolResult', toolCallId: 'x', toolName: 'f', content: 'early', isError: false },
      { role: 'toolResult', toolCallId: 'y', toolName: 'g', content: 'late', isError: true },
      { role: 'assistant', content: 'ok', stopReason: 'stop' },
    ]);
  });

  it('U1: a message the loop cannot take is refused, naming it', () => {
    expect(() => fromAgUiMessages([{ id: '1', role: 'assistant', toolCalls: [{ id: 'x', type: 'function', function: { name: 'f', arguments: '{bad' } }] }])).toThrow(
      'fromAgUiMessages: messages[0].toolCalls[0].function.arguments is not JSON',
    );
    expect(() => fromAgUiMessages([{ id: '1', role: 'wizard' } as never])).toThrow('fromAgUiMessages: messages[0] has role "wizard", which the loop does not take');
    expect(() => fromAgUiMessages('x' as never)).toThrow('fromAgUiMessages: messages must be an array');
  });

  it('U1, H8: fromAgUiInput turns a request into the history and one decision per resume entry (approve, approve with edits, deny with a reason, cancel)', async () => {
    const waiting: AgentMessage[] = [
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: '',
        stopReason: 'toolUse',
        toolCalls: ['a', 'b', 'c', 'd'].map((id) => ({ id, name: 'send', input: { to: id } })),
      },
    ];
    const run = fromAgUiInput({
      threadId: 'th',
      runId: 'r2',
      messages: toAgUiMessages(waiting),
      tools: [],
      context: [],
      resume: [
        { interruptId: 'a', status: 'resolved', payload: { approved: true } },
        { interruptId: 'b', status: 'resolved', payload: { approved: true, editedArgs: { to: 'B' } } },
        { interruptId: 'c', status: 'resolved', payload: { approved: false, reason: 'wrong person' } },
        { interruptId: 'd', status: 'cancelled' },
      ],
    });
    expect(run.messages).toEqual(waiting);
    expect(run.threadId).toBe('th');
    expect(run.runId).toBe('r2');
    expect(await lastValueFrom(run.decisions.pipe(toArray()))).toEqual([
      { toolCallId: 'a', decision: true },
      { toolCallId: 'b', decision: { action: 'run', input: { to: 'B' } } },
      { toolCallId: 'c', decision: { action: 'deny', reason: 'wrong person' } },
      { toolCallId: 'd', decision: false },
    ]);
  });

  it('U1, H8: a resume entry for no waiting call, or with an answer that is not an approval, is refused naming it', () => {
    const base = { threadId: 'th', runId: 'r', tools: [], context: [], messages: toAgUiMessages([{ role: 'user', content: 'hi' }]) };
    expect(() => fromAgUiInput({ ...base, resume: [{ interruptId: 'zz', status: 'resolved', payload: { approved: true } }] })).toThrow(
      'fromAgUiInput: resume[0].interruptId "zz" names no call that waits in messages',
    );
    const waiting = toAgUiMessages([{ role: 'user', content: 'go' }, { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [{ id: 'a', name: 'f', input: {} }] }]);
    expect(() => fromAgUiInput({ ...base, messages: waiting, resume: [{ interruptId: 'a', status: 'resolved', payload: 'yes' }] })).toThrow(
      'fromAgUiInput: resume[0].payload must be { approved: boolean, editedArgs?, reason? }',
    );
    expect(() => fromAgUiInput({ ...base, threadId: '' })).toThrow('fromAgUiInput: threadId must be a non-empty string');
  });

  it('U1: the check itself fails a stream that breaks the protocol (a text message left open at RUN_FINISHED, an event of a bad shape)', async () => {
    const open = [
      { type: 'RUN_STARTED', threadId: 't', runId: 'r' },
      { type: 'TEXT_MESSAGE_START', messageId: 'm', role: 'assistant' },
      { type: 'RUN_FINISHED', threadId: 't', runId: 'r' },
    ] as AgUiEvent[];
    await expect(verified(open)).rejects.toThrow('text messages are still active');
    await expect(verified([{ type: 'RUN_STARTED', threadId: 't' } as AgUiEvent])).rejects.toThrow('does not parse');
  });
});
