import type { AgentMessage, ConversationEvent, ToolResultMessage } from 'rx-tool-loop';
import { acpUpdates, guessToolKind, historyUpdates } from 'rx-tool-loop/acp';

const call = (name: string) => ({ id: 'c1', name, input: { path: '/a' } });
const result = (isError: boolean, more: Partial<ToolResultMessage> = {}): ToolResultMessage => ({ role: 'toolResult', toolCallId: 'c1', toolName: 'read_file', content: 'text', isError, ...more });

describe('acpUpdates', () => {
  it.each([
    ['read_text_file', 'read'],
    ['listDirectory', 'read'],
    ['search_files', 'search'],
    ['grep', 'search'],
    ['deleteBranch', 'delete'],
    ['move_file', 'move'],
    ['edit_file', 'edit'],
    ['write', 'edit'],
    ['web_fetch', 'fetch'],
    ['run_tests', 'execute'],
    ['bash', 'execute'],
    ['think', 'think'],
    ['current_time', 'other'],
    ['spreadsheet', 'other'],
  ])('E1: guessToolKind(%s) is %s (the first word of the name that names a kind)', (name, kind) => {
    expect(guessToolKind(call(name))).toBe(kind);
  });

  it('E1: maps each event of a turn to its session/update, and the others to none', () => {
    const events: ConversationEvent[] = [
      { type: 'turn_start', turn: 1 },
      { type: 'message_start' },
      { type: 'reasoning_delta', text: 'hm' },
      { type: 'text_delta', text: 'Reading' },
      { type: 'text_delta', text: '' },
      { type: 'tool_call_delta', index: 0, argumentsDelta: '{' },
      { type: 'tool_call', call: call('read_file') },
      { type: 'tool_start', call: call('read_file') },
      { type: 'tool_update', toolCallId: 'c1', toolName: 'read_file', content: '50%' },
      { type: 'tool_result', message: result(false, { details: { bytes: 4 }, attachments: [{ type: 'image', mimeType: 'image/png', data: 'AAAA' }] }), messages: [] },
    ];
    expect(events.flatMap((event) => acpUpdates(event))).toEqual([
      { sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'hm' } },
      { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Reading' } },
      { sessionUpdate: 'tool_call', toolCallId: 'c1', title: 'read_file', kind: 'read', status: 'pending', rawInput: { path: '/a' } },
      { sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'in_progress' },
      { sessionUpdate: 'tool_call_update', toolCallId: 'c1', content: [{ type: 'content', content: { type: 'text', text: '50%' } }] },
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: 'c1',
        status: 'completed',
        content: [
          { type: 'content', content: { type: 'text', text: 'text' } },
          { type: 'content', content: { type: 'image', mimeType: 'image/png', data: 'AAAA' } },
        ],
        rawOutput: { content: 'text', details: { bytes: 4 } },
      },
    ]);
    expect(acpUpdates({ type: 'tool_result', message: result(true, { content: 'error: aborted' }), messages: [] })).toEqual([
      { sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'failed', content: [{ type: 'content', content: { type: 'text', text: 'error: aborted' } }], rawOutput: { content: 'error: aborted' } },
    ]);
    // a kind of one's own
    expect(acpUpdates({ type: 'tool_call', call: call('read_file') }, () => 'fetch')).toMatchObject([{ kind: 'fetch' }]);
  });

  it('E1: historyUpdates replays a saved history: user chunks (attachments as images or links), agent chunks, each call and its result; no system message', () => {
    const messages: AgentMessage[] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Look', attachments: [{ type: 'image', mimeType: 'image/png', data: 'AAAA' }, { type: 'file', mimeType: 'application/pdf', url: 'https://example.com/a.pdf', name: 'a.pdf' }] },
      { role: 'assistant', content: 'Reading.', stopReason: 'toolUse', toolCalls: [call('read_file')] },
      result(false),
      { role: 'assistant', content: 'Done.', stopReason: 'stop' },
    ];
    expect(historyUpdates(messages)).toEqual([
      { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'Look' } },
      { sessionUpdate: 'user_message_chunk', content: { type: 'image', mimeType: 'image/png', data: 'AAAA' } },
      { sessionUpdate: 'user_message_chunk', content: { type: 'resource_link', name: 'a.pdf', uri: 'https://example.com/a.pdf', mimeType: 'application/pdf' } },
      { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Reading.' } },
      { sessionUpdate: 'tool_call', toolCallId: 'c1', title: 'read_file', kind: 'read', status: 'pending', rawInput: { path: '/a' } },
      { sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'completed', content: [{ type: 'content', content: { type: 'text', text: 'text' } }], rawOutput: { content: 'text' } },
      { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Done.' } },
    ]);
  });
});
