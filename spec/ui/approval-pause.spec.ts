import { ApprovalPause } from '../../src/ui/approval-pause';
import type { ConversationEvent, ToolCall, ToolResultMessage } from '../../src/types';

const call = (id: string): ToolCall => ({ id, name: 'tool', input: {} });
const result = (id: string): ToolResultMessage => ({ role: 'toolResult', toolCallId: id, toolName: 'tool', content: 'done', isError: false });

describe('ApprovalPause, where a run of the two-request model stops (H8, U1, U2)', () => {
  it('U2: true only once a call waits, the reply is over and no tool of the turn runs', () => {
    const pause = new ApprovalPause();
    const events = [
      { type: 'turn_start', turn: 1 },
      { type: 'message_start' },
      { type: 'tool_approval', call: call('c'), messages: [] }, // asked while the reply streams
      { type: 'tool_start', call: call('d') },
      { type: 'message_end' },
      { type: 'tool_result', message: result('d'), messages: [] },
    ] as unknown as ConversationEvent[];
    expect(events.map((event) => pause.see(event))).toEqual([false, false, false, false, false, true]);
    expect([...pause.waiting.keys()]).toEqual(['c']);
  });

  it("U1, U2: the loop's usage so far — the last turn_end's plus the reply's — and a next loop counts from nothing", () => {
    const pause = new ApprovalPause();
    const usage = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens });
    const counted = [
      { type: 'turn_start', turn: 1 },
      { type: 'message_start' },
      { type: 'message_end', usage: usage(3, 1) },
      { type: 'turn_end', turn: 1, usage: usage(3, 1) },
      { type: 'turn_start', turn: 2 },
      { type: 'message_start' },
      { type: 'message_end', usage: usage(5, 2) },
      { type: 'turn_end', turn: 2, usage: usage(8, 3) },
      { type: 'loop_end', usage: usage(8, 3) },
      { type: 'turn_start', turn: 1 },
      { type: 'message_start' },
      { type: 'message_end', usage: usage(4, 4) },
    ] as unknown as ConversationEvent[];
    expect(counted.map((event) => (pause.see(event), pause.usage))).toEqual([
      usage(0, 0),
      usage(0, 0),
      usage(3, 1),
      usage(3, 1),
      usage(3, 1),
      usage(3, 1),
      usage(8, 3),
      usage(8, 3),
      usage(0, 0),
      usage(0, 0),
      usage(0, 0),
      usage(4, 4),
    ]);
  });

  it('U1: a call answered before the turn ends leaves nothing waiting; a new turn starts afresh; turn 0 has no reply to wait for', () => {
    const pause = new ApprovalPause();
    const answered = [
      { type: 'turn_start', turn: 1 },
      { type: 'message_start' },
      { type: 'message_end' },
      { type: 'tool_start', call: call('c') },
      { type: 'tool_approval', call: call('e'), messages: [] },
      { type: 'tool_result', message: result('e'), messages: [] },
      { type: 'tool_result', message: result('c'), messages: [] },
    ] as unknown as ConversationEvent[];
    expect(answered.map((event) => pause.see(event))).toEqual([false, false, false, false, false, false, false]);
    const resumed = [{ type: 'turn_start', turn: 0 }, { type: 'tool_approval', call: call('f'), messages: [] }] as unknown as ConversationEvent[];
    expect(resumed.map((event) => pause.see(event))).toEqual([false, true]);
  });
});
