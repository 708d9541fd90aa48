import { TestScheduler } from 'rxjs/testing';
import type { AgentMessage, ConversationEvent, ToolCall } from '../../src/index.js';
import { toAgUi, APPROVAL_RESPONSE_SCHEMA, type AgUiEvent } from '../../src/ui/index.js';

// U1's main shapes as marbles: the loop's events (letters of the loop's own legend) in, AG-UI events out.
// A group (abc) takes as many frames as it has characters, so the source is spaced to leave room for them.

const user: AgentMessage = { role: 'user', content: 'go' };
const echo: ToolCall = { id: 'c1', name: 'echo', input: { text: 'x' } };
const slow: ToolCall = { id: 'c2', name: 'slow', input: {} };
const asked: AgentMessage = { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [echo] };
const usage = { inputTokens: 10, outputTokens: 4, cacheReadTokens: 6 };

const loop: Record<string, ConversationEvent> = {
  '1': { type: 'turn_start', turn: 1 },
  s: { type: 'message_start' },
  t: { type: 'text_delta', text: 'Hi' },
  a: { type: 'tool_call_delta', index: 0, id: 'c1', name: 'echo', argumentsDelta: '{"text":' },
  b: { type: 'tool_call_delta', index: 0, argumentsDelta: '"x"}' },
  c: { type: 'tool_call', call: echo },
  u: { type: 'message_end', stopReason: 'toolUse' },
  e: { type: 'message_end', stopReason: 'stop', usage },
  W: { type: 'tool_approval', call: echo, messages: [user, asked] },
  d: { type: 'tool_call', call: slow },
  g: { type: 'tool_start', call: slow },
  B: { type: 'tool_result', message: { role: 'toolResult', toolCallId: 'c2', toolName: 'slow', content: 'S', isError: false }, messages: [] },
  E: { type: 'turn_end', turn: 1, assistant: { role: 'assistant', content: 'Hi', stopReason: 'stop' }, toolResults: [], messages: [], usage },
  L: { type: 'loop_end', reason: 'stop', assistant: { role: 'assistant', content: 'Hi', stopReason: 'stop' }, messages: [], usage },
  X: { type: 'loop_end', reason: 'aborted', assistant: { role: 'assistant', content: 'H', stopReason: 'aborted', errorMessage: 'aborted' }, messages: [], usage },
  Y: { type: 'loop_end', reason: 'error', assistant: { role: 'assistant', content: '', stopReason: 'error', errorMessage: 'HTTP 500' }, messages: [], usage },
};

const stop = { 'rx-tool-loop': { stopReason: 'stop' } };
const counts = [{ inputTokens: 10, outputTokens: 4, totalTokens: 14, cachedInputTokens: 6 }];
const agUi: Record<string, AgUiEvent> = {
  R: { type: 'RUN_STARTED', threadId: 'th', runId: 'r1' } as AgUiEvent,
  S: { type: 'STEP_STARTED', stepName: 'turn 1' } as AgUiEvent,
  T: { type: 'TEXT_MESSAGE_START', messageId: 'r1-1', role: 'assistant' } as AgUiEvent,
  C: { type: 'TEXT_MESSAGE_CONTENT', messageId: 'r1-1', delta: 'Hi' } as AgUiEvent,
  D: { type: 'TEXT_MESSAGE_END', messageId: 'r1-1', metadata: stop } as AgUiEvent,
  U: { type: 'TEXT_MESSAGE_END', messageId: 'r1-1', metadata: { 'rx-tool-loop': { stopReason: 'toolUse' } } } as AgUiEvent,
  V: { type: 'TEXT_MESSAGE_END', messageId: 'r1-1', metadata: { 'rx-tool-loop': { stopReason: 'aborted', errorMessage: 'aborted' } } } as AgUiEvent,
  O: { type: 'TOOL_CALL_START', toolCallId: 'c1', toolCallName: 'echo', parentMessageId: 'r1-1' } as AgUiEvent,
  P: { type: 'TOOL_CALL_ARGS', toolCallId: 'c1', delta: '{"text":' } as AgUiEvent,
  Q: { type: 'TOOL_CALL_ARGS', toolCallId: 'c1', delta: '"x"}' } as AgUiEvent,
  N: { type: 'TOOL_CALL_END', toolCallId: 'c1' } as AgUiEvent,
  F: { type: 'STEP_FINISHED', stepName: 'turn 1' } as AgUiEvent,
  Z: { type: 'RUN_FINISHED', threadId: 'th', runId: 'r1', usage: counts, outcome: { type: 'success' } } as AgUiEvent,
  K: { type: 'RUN_FINISHED', threadId: 'th', runId: 'r1', usage: counts, outcome: { type: 'cancelled' } } as AgUiEvent,
  I: {
    type: 'RUN_FINISHED',
    threadId: 'th',
    runId: 'r1',
    // the loop's usage so far (U1): these replies report none
    usage: [{ inputTokens: 0, outputTokens: 0, totalTokens: 0 }],
    outcome: {
      type: 'interrupt',
      interrupts: [{ id: 'c1', reason: 'tool_call', toolCallId: 'c1', message: 'echo {"text":"x"}', responseSchema: APPROVAL_RESPONSE_SCHEMA }],
    },
  } as AgUiEvent,
  G: { type: 'RUN_ERROR', message: 'HTTP 500', usage: counts } as AgUiEvent,
  H: { type: 'RUN_ERROR', message: 'socket hang up' } as AgUiEvent,
};

const scheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const runIds = () => {
  let n = 0;
  return () => `r${++n}`;
};

describe('toAgUi as marbles (U1)', () => {
  it('U1: one loop is one run, a turn a step, the reply a text message: started, streamed, ended with its stop reason; usage with cached tokens on RUN_FINISHED', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold('1---s---t---e---E---L|', loop);
      expectObservable(source.pipe(toAgUi({ threadId: 'th', runId: runIds() }))).toBe('(RS)----(TC)D---F---Z|', agUi);
    });
  });

  it('U1: a call streams as TOOL_CALL_START and TOOL_CALL_ARGS from its tool_call_deltas, TOOL_CALL_END at its tool_call, under its assistant message', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold('1---s---t---a---b---c---e---E---L|', loop);
      expectObservable(source.pipe(toAgUi({ threadId: 'th', runId: runIds() }))).toBe('(RS)----(TC)(OP)Q---N---D---F---Z|', agUi);
    });
  });

  it('U1: an aborted loop closes what is open (the text, the step) and finishes the run with outcome cancelled', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold('1---s---t---X----|', loop);
      expectObservable(source.pipe(toAgUi({ threadId: 'th', runId: runIds() }))).toBe('(RS)----(TC)(VFK)|', agUi);
    });
  });

  it('U1: a loop that ends with reason error is RUN_ERROR with its message; a source that errors is RUN_ERROR too, and the output completes', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('1---s---Y-----|', loop).pipe(toAgUi({ threadId: 'th', runId: runIds() }))).toBe('(RS)----(TDFG)|', {
        ...agUi,
        D: { type: 'TEXT_MESSAGE_END', messageId: 'r1-1', metadata: { 'rx-tool-loop': { stopReason: 'error', errorMessage: 'HTTP 500' } } } as AgUiEvent,
      });
      expectObservable(cold('1---#', loop, new Error('socket hang up')).pipe(toAgUi({ threadId: 'th', runId: runIds() }))).toBe('(RS)(FH|)', agUi);
    });
  });

  it('U1, H8: when every call of the turn has a result or waits for a person, the run ends with an interrupt per waiting call, and the loop is unsubscribed', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('1---s---a---b---c---u---W---', loop);
      expectObservable(source.pipe(toAgUi({ threadId: 'th', runId: runIds() }))).toBe('(RS)----(OP)Q---N---(TU)(FI|)', agUi);
      expectSubscriptions(source.subscriptions).toBe('^-----------------------!');
    });
  });

  it('U1, H8: the diagram of toAgUi’s doc comment: a whole call, the reply’s end, the call waits: the interrupt, and the loop unsubscribed', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('1---s---c-------u---W---', loop);
      expectObservable(source.pipe(toAgUi({ threadId: 'th', runId: runIds() }))).toBe('(RS)----(OPN)---(TU)(FI|)', {
        ...agUi,
        P: { type: 'TOOL_CALL_ARGS', toolCallId: 'c1', delta: '{"text":"x"}' } as AgUiEvent,
      });
      expectSubscriptions(source.subscriptions).toBe('^-------------------!');
    });
  });

  it('U1, H8: a call that waits while the reply still streams ends the run only at message_end', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('1---s---c---W---t---u---', loop);
      expectObservable(source.pipe(toAgUi({ threadId: 'th', runId: runIds() }))).toBe('(RS)----(OPN)---(TC)(UFI|)', {
        ...agUi,
        P: { type: 'TOOL_CALL_ARGS', toolCallId: 'c1', delta: '{"text":"x"}' } as AgUiEvent,
      });
      expectSubscriptions(source.subscriptions).toBe('^-------------------!');
    });
  });

  it('U1, H8: while another call of the turn runs, the run goes on; it ends with the interrupt once that call has its result', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('1---s---d---g---c---W---u---B---', loop);
      const started = (id: string, name: string, args: string): AgUiEvent[] => [
        { type: 'TOOL_CALL_START', toolCallId: id, toolCallName: name, parentMessageId: 'r1-1' } as AgUiEvent,
        { type: 'TOOL_CALL_ARGS', toolCallId: id, delta: args } as AgUiEvent,
        { type: 'TOOL_CALL_END', toolCallId: id } as AgUiEvent,
      ];
      const [O, P, N] = started('c2', 'slow', '{}');
      const [o, p, n] = started('c1', 'echo', '{"text":"x"}');
      const X = { type: 'TOOL_CALL_RESULT', messageId: 'r1-2', toolCallId: 'c2', role: 'tool', content: 'S', metadata: { 'rx-tool-loop': { toolName: 'slow', isError: false } } } as AgUiEvent;
      expectObservable(source.pipe(toAgUi({ threadId: 'th', runId: runIds() }))).toBe('(RS)----(OPN)---(opn)---(TU)(XFI|)', { ...agUi, O, P, N, o, p, n, X });
      expectSubscriptions(source.subscriptions).toBe('^---------------------------!');
    });
  });

  it('U1: the loops of a conversation are runs one after another, each named by runId(); a user_message opens the next run as a user text message', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const prompt: ConversationEvent = { type: 'user_message', message: { role: 'user', content: 'again' }, messages: [] };
      const source = cold('1---s---t---e---E---L---p-------1---s---t---e---E---L|', { ...loop, p: prompt });
      expectObservable(source.pipe(toAgUi({ threadId: 'th', runId: runIds() }))).toBe(
        '(RS)----(TC)D---F---Z---(r123)--S-------(tc)d---f---z|',
        {
          ...agUi,
          '1': { type: 'TEXT_MESSAGE_START', messageId: 'r2-1', role: 'user' } as AgUiEvent,
          '2': { type: 'TEXT_MESSAGE_CONTENT', messageId: 'r2-1', delta: 'again' } as AgUiEvent,
          '3': { type: 'TEXT_MESSAGE_END', messageId: 'r2-1' } as AgUiEvent,
          r: { type: 'RUN_STARTED', threadId: 'th', runId: 'r2' } as AgUiEvent,
          t: { type: 'TEXT_MESSAGE_START', messageId: 'r2-2', role: 'assistant' } as AgUiEvent,
          c: { type: 'TEXT_MESSAGE_CONTENT', messageId: 'r2-2', delta: 'Hi' } as AgUiEvent,
          d: { type: 'TEXT_MESSAGE_END', messageId: 'r2-2', metadata: stop } as AgUiEvent,
          f: agUi.F,
          z: { type: 'RUN_FINISHED', threadId: 'th', runId: 'r2', usage: counts, outcome: { type: 'success' } } as AgUiEvent,
        },
      );
    });
  });
});
