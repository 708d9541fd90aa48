import { of, toArray } from 'rxjs';
import type { AgentMessage, LoopEvent } from 'rx-tool-loop';
import { call, describeEvent, described, end, loopLegend, start, text } from 'rx-tool-loop/testing';

const history: AgentMessage[] = [
  { role: 'user', content: 'go' },
  {
    role: 'assistant',
    content: 'hm',
    stopReason: 'toolUse',
    toolCalls: [
      { id: 'slow', name: 'slow', input: {} },
      { id: 'fast', name: 'fast', input: {} },
    ],
  },
  { role: 'toolResult', toolCallId: 'slow', toolName: 'slow', content: 'S', isError: false },
  { role: 'toolResult', toolCallId: 'fast', toolName: 'fast', content: 'F', isError: false },
];

const usage = { inputTokens: 0, outputTokens: 0 };

describe('describeEvent (T2)', () => {
  it('a conversation\'s prompt: user_message TEXT (C1)', () => {
    expect(describeEvent({ type: 'user_message', message: { role: 'user', content: 'what time is it?' }, messages: [] })).toBe('user_message what time is it?');
  });

  it('a prompt a stop dropped: prompt_dropped TEXT (left open (a))', () => {
    expect(describeEvent({ type: 'prompt_dropped', message: { role: 'user', content: 'and the logs?' } })).toBe('prompt_dropped and the logs?');
  });

  it.each<[LoopEvent, string]>([
    [{ type: 'turn_start', turn: 1 }, 'turn_start 1'],
    [start, 'message_start'],
    [text('hi'), 'text_delta hi'],
    [call('slow'), 'tool_call slow'],
    // version 2 (R23, P9, P10, C1)
    [{ type: 'tool_start', call: { id: 'slow', name: 'slow', input: {} } }, 'tool_start slow'],
    // version 4 (H8): the call waits for a person, on the input it would run on
    [{ type: 'tool_approval', call: { id: 't1', name: 'transfer', input: { n: '1' } }, messages: [] }, 'tool_approval transfer {"n":"1"}'],
    [{ type: 'tool_call_delta', index: 0, id: 'slow', name: 'slow', argumentsDelta: '{"pa' }, 'tool_call_delta slow: {"pa'],
    [{ type: 'tool_call_delta', index: 1, argumentsDelta: 'th"}' }, 'tool_call_delta #1: th"}'],
    [{ type: 'reasoning_delta', text: 'the user wants' }, 'reasoning_delta the user wants'],
    [{ type: 'tool_update', toolCallId: 'c7', toolName: 'slow', content: '50%' }, 'tool_update slow: 50%'],
    [{ type: 'tool_result', message: { role: 'toolResult', toolCallId: 'slow', toolName: 'slow', content: 'S', isError: false }, messages: [] }, 'tool_result slow: S'],
    [
      { type: 'tool_result', message: { role: 'toolResult', toolCallId: 'slow', toolName: 'slow', content: 'error: boom', isError: true }, messages: [] },
      'tool_result slow: error: boom (isError)',
    ],
    [end('toolUse'), 'message_end toolUse'],
    [end('error', { errorMessage: 'overloaded' }), 'message_end error'],
    [
      { type: 'turn_end', turn: 1, assistant: history[1] as Extract<AgentMessage, { role: 'assistant' }>, toolResults: [], messages: history, usage },
      'turn_end 1 (toolUse): user, assistant "hm"[slow,fast], toolResult slow, toolResult fast',
    ],
    [
      {
        type: 'turn_end',
        turn: 2,
        assistant: { role: 'assistant', content: '', stopReason: 'error', errorMessage: 'overloaded' },
        toolResults: [],
        messages: [{ role: 'user', content: 'go' }, { role: 'assistant', content: '', stopReason: 'error', errorMessage: 'overloaded' }],
        usage,
      },
      'turn_end 2 (error: overloaded): user, assistant',
    ],
    [{ type: 'loop_end', reason: 'stop', assistant: { role: 'assistant', content: '', stopReason: 'stop' }, messages: [], usage }, 'loop_end stop'],
    [
      // R21: a SystemMessage in the history reads `system`
      {
        type: 'turn_end',
        turn: 1,
        assistant: { role: 'assistant', content: '', stopReason: 'stop' },
        toolResults: [],
        messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'go' }, { role: 'assistant', content: '', stopReason: 'stop' }],
        usage,
      },
      'turn_end 1 (stop): system, user, assistant',
    ],
  ])('%j reads %p', (event, line) => {
    expect(describeEvent(event)).toBe(line);
  });

  it('T2: a prompt a conversation dropped reads prompt_dropped TEXT; an event type the kit does not know reads as unknown', () => {
    expect(describeEvent({ type: 'prompt_dropped', message: { role: 'user', content: 'and now?' } } as never)).toBe('prompt_dropped and now?');
    expect(describeEvent({ type: 'custom' } as never)).toBe('unknown event "custom"');
  });

  it('A4: an agent tool\'s forwarded update names the inner event, at every depth; one without event shows its content', () => {
    const inner: LoopEvent = { type: 'tool_call', call: { id: 's1', name: 'search', input: { q: 'x' } } };
    const update: LoopEvent = { type: 'tool_update', toolCallId: 'r1', toolName: 'researcher', content: 'tool_call search', event: inner };
    expect(describeEvent(update)).toBe('tool_update researcher: tool_call search {"q":"x"}');
    const text: LoopEvent = { type: 'tool_update', toolCallId: 'r1', toolName: 'researcher', content: 'hello', event: { type: 'text_delta', text: 'lo' } };
    expect(describeEvent(text)).toBe('tool_update researcher: text_delta lo');
    expect(describeEvent({ type: 'tool_update', toolCallId: 'p1', toolName: 'planner', content: '…', event: update })).toBe('tool_update planner: tool_update researcher: tool_call search {"q":"x"}');
    expect(describeEvent({ type: 'tool_update', toolCallId: 'd', toolName: 'download', content: '50%' })).toBe('tool_update download: 50%');
  });

  describe('payloads (R32)', () => {
    const search = (input: unknown): LoopEvent => ({ type: 'tool_call', call: { id: 's1', name: 'search', input: input as Record<string, unknown> } });
    const result = (content: string): LoopEvent => ({
      type: 'tool_result',
      message: { role: 'toolResult', toolCallId: 's1', toolName: 'search', content, isError: false },
      messages: [],
    });

    it('R32: a call shows its input as JSON, a start the input it runs on, a result its content', () => {
      expect(describeEvent(search({ q: 'rx' }))).toBe('tool_call search {"q":"rx"}');
      expect(describeEvent({ type: 'tool_start', call: { id: 's1', name: 'search', input: { q: 'rx', limit: 3 } } })).toBe('tool_start search {"q":"rx","limit":3}');
      expect(describeEvent(result('3 hits'))).toBe('tool_result search: 3 hits');
    });

    it('R32: an empty input shows nothing (T2\'s `tool_call slow`); a hostile one shows what it is', () => {
      expect(describeEvent(search({}))).toBe('tool_call search');
      expect(describeEvent(search(null))).toBe('tool_call search null');
      expect(describeEvent(search([1, 2]))).toBe('tool_call search [1,2]');
      expect(describeEvent(search('q'))).toBe('tool_call search "q"');
      const cyclic: Record<string, unknown> = { q: 'rx' };
      cyclic.self = cyclic;
      expect(describeEvent(search(cyclic))).toBe('tool_call search (an object)');
      expect(describeEvent(search({ n: BigInt(1) }))).toBe('tool_call search (an object)');
      const throwing = { get q(): string { throw new Error('no'); } };
      expect(describeEvent(search(throwing))).toBe('tool_call search (an object)');
    });

    it('R32: any edit of an input or a content changes the line', () => {
      expect(describeEvent(search({ q: 'rx' }))).not.toBe(describeEvent(search({ q: 'rX' })));
      expect(describeEvent(search({ q: 'rx' }))).not.toBe(describeEvent(search({ q: 'rx', page: 2 })));
      expect(describeEvent(result('3 hits'))).not.toBe(describeEvent(result('4 hits')));
    });

    it('R32: a payload past 60 characters reads as its first 48, … and a hash of the whole, which any edit changes', () => {
      const long = { path: 'docs/a-very-long-name-for-a-file-that-goes-on-and-on.md' };
      expect(describeEvent(search(long))).toBe('tool_call search {"path":"docs/a-very-long-name-for-a-file-that-g… #a3902ed4');
      // an edit past the shown part (same length) still changes the line
      const edited = describeEvent(search({ path: 'docs/a-very-long-name-for-a-file-that-goes-on-and-ON.md' }));
      expect(edited).toMatch(/^tool_call search \{"path":"docs\/a-very-long-name-for-a-file-that-g… #[0-9a-f]{8}$/);
      expect(edited).not.toBe(describeEvent(search(long)));
      const content = 'x'.repeat(60);
      expect(describeEvent(result(content))).toBe(`tool_result search: ${content}`);
      const longer = describeEvent(result(`${content}y`));
      expect(longer).toMatch(/^tool_result search: x{48}… #[0-9a-f]{8}$/);
      expect(longer).not.toBe(describeEvent(result(`${content}z`)));
      // the same text reads the same, run after run
      expect(longer).toBe(describeEvent(result(`${content}y`)));
    });

    it('R32: a shortened payload never cuts a surrogate pair in two', () => {
      const line = describeEvent(result(`${'x'.repeat(47)}😀${'y'.repeat(20)}`));
      expect(line).toMatch(/^tool_result search: x{47}… #[0-9a-f]{8}$/);
    });
  });

  it('described maps a run to its lines', async () => {
    const lines = await new Promise<string[]>((resolve) => of(start, text("a")).pipe(described, toArray()).subscribe(resolve));
    expect(lines).toEqual(['message_start', 'text_delta a']);
  });

  it('loopLegend describes the provider letters and adds the loop letters, which win', () => {
    expect(loopLegend({ s: start, e: end('stop'), L: text('x') }, { 1: 'turn_start 1', L: 'loop_end stop' })).toEqual({
      s: 'message_start',
      e: 'message_end stop',
      1: 'turn_start 1',
      L: 'loop_end stop',
    });
  });
});
