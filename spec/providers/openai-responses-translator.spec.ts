import { OpenAIResponsesTranslator } from '../../src/providers/openai-responses-translator.js';
import { openAIResponsesRequest } from '../../src/providers/openai-responses.js';
import type { ProviderEvent } from '../../src/index.js';
import { end, text, weatherSpec } from './conversation';

/** One server-sent event as the API sends it: its type as the `event:` name and in the data. */
const ev = (type: string, fields: object = {}) => ({ event: type, data: JSON.stringify({ type, ...fields }) });
const completed = (response: object = {}) => ev('response.completed', { response: { status: 'completed', ...response } });
const fc = (fields: object) => ({ type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'f', arguments: '', ...fields });

function read(events: { event?: string; data: string }[]): ProviderEvent[] {
  const stream = new OpenAIResponsesTranslator();
  return events.flatMap((event) => stream.next(event));
}

// the examples in the doc comments, run; and what servers send besides the happy path
/** L1: an error `message_end` and the failure it carries, written out. */
const failedEnd = (errorMessage: string, failure: { kind: string }) => ({ type: 'message_end', stopReason: 'error', errorMessage, failure: { ...failure, message: errorMessage } });

describe('OpenAIResponsesTranslator, without HTTP', () => {
  it('P14: the doc example', () => {
    const stream = new OpenAIResponsesTranslator();
    expect(stream.next({ event: 'response.output_text.delta', data: '{"type":"response.output_text.delta","delta":"Hi"}' })).toEqual([text('Hi')]);
    expect(stream.next({ event: 'response.completed', data: '{"type":"response.completed","response":{"status":"completed"}}' })).toEqual([end('stop')]);
  });

  it('P14: events that do not concern the loop change nothing (content parts, annotations, hosted tools, [DONE])', () => {
    const stream = new OpenAIResponsesTranslator();
    for (const type of ['response.created', 'response.in_progress', 'response.queued', 'response.content_part.added', 'response.output_text.done', 'response.output_text.annotation.added', 'response.web_search_call.searching', 'response.reasoning_summary_part.added']) {
      expect(stream.next(ev(type, { sequence_number: 1 }))).toEqual([]);
    }
    expect(stream.next({ data: '[DONE]' })).toEqual([]);
    expect(stream.next(ev('response.output_item.done', { item: { type: 'message', id: 'msg_1', content: [] } }))).toEqual([]);
  });

  it('P14: the event type is read from the data, or else from the event name', () => {
    const stream = new OpenAIResponsesTranslator();
    expect(stream.next({ event: 'response.output_text.delta', data: '{"delta":"named"}' })).toEqual([text('named')]);
  });

  it('P14, P9: a call whose arguments came in no delta (nor its added event) still has one delta before its tool_call, with its id and name', () => {
    expect(read([ev('response.output_item.done', { output_index: 0, item: fc({ arguments: '{"x":1}', status: 'completed' }) }), completed()])).toEqual([
      { type: 'tool_call_delta', index: 0, id: 'call_1', name: 'f', argumentsDelta: '{"x":1}' },
      { type: 'tool_call', call: { id: 'call_1', name: 'f', input: { x: 1 } } },
      end('toolUse'),
    ]);
  });

  it("P14: the done item's arguments win over the deltas; the same item done twice is one call", () => {
    const events = read([
      ev('response.output_item.added', { output_index: 0, item: fc({ status: 'in_progress' }) }),
      ev('response.function_call_arguments.delta', { item_id: 'fc_1', output_index: 0, delta: '{"x":' }),
      ev('response.output_item.done', { output_index: 0, item: fc({ arguments: '{"x":2}', status: 'completed' }) }),
      ev('response.output_item.done', { output_index: 0, item: fc({ arguments: '{"x":2}', status: 'completed' }) }),
      completed(),
    ]);
    expect(events.filter((event) => event.type === 'tool_call')).toEqual([{ type: 'tool_call', call: { id: 'call_1', name: 'f', input: { x: 2 } } }]);
  });

  it('P14: a call whose item never says done goes out when the response completes', () => {
    expect(
      read([
        ev('response.output_item.added', { output_index: 0, item: fc({ status: 'in_progress' }) }),
        ev('response.function_call_arguments.delta', { item_id: 'fc_1', output_index: 0, delta: '{}' }),
        completed(),
      ]).slice(-2),
    ).toEqual([{ type: 'tool_call', call: { id: 'call_1', name: 'f', input: {} } }, end('toolUse')]);
  });

  it('P14, P9: each arguments delta is one tool_call_delta, the first of a call with its id and name; calls counted from 0 in order of appearance', () => {
    const events = read([
      ev('response.output_item.added', { output_index: 1, item: fc({ id: 'fc_a', call_id: 'call_a', name: 'a' }) }),
      ev('response.output_item.added', { output_index: 2, item: fc({ id: 'fc_b', call_id: 'call_b', name: 'b' }) }),
      ev('response.function_call_arguments.delta', { item_id: 'fc_b', output_index: 2, delta: '{"b":1}' }),
      ev('response.function_call_arguments.delta', { item_id: 'fc_a', output_index: 1, delta: '{"a":1}' }),
      ev('response.function_call_arguments.delta', { item_id: 'fc_a', output_index: 1, delta: '' }), // nothing for the call
    ]);
    expect(events).toEqual([
      { type: 'tool_call_delta', index: 1, id: 'call_b', name: 'b', argumentsDelta: '{"b":1}' },
      { type: 'tool_call_delta', index: 0, id: 'call_a', name: 'a', argumentsDelta: '{"a":1}' },
    ]);
  });

  it('P14: events are matched to their call by output_index, so a proxy that gives every event a new item id (GitHub Copilot) still gets whole calls', () => {
    let n = 0;
    const rotated = () => `capture-id-${++n}`;
    const events = read([
      ev('response.output_item.added', { output_index: 0, item: fc({ id: rotated(), status: 'in_progress' }) }),
      ev('response.function_call_arguments.delta', { item_id: rotated(), output_index: 0, delta: '{"x":' }),
      ev('response.function_call_arguments.delta', { item_id: rotated(), output_index: 0, delta: '1}' }),
      ev('response.output_item.done', { output_index: 0, item: fc({ id: rotated(), arguments: '{"x":1}', status: 'completed' }) }),
      completed(),
    ]);
    expect(events).toEqual([
      { type: 'tool_call_delta', index: 0, id: 'call_1', name: 'f', argumentsDelta: '{"x":' },
      { type: 'tool_call_delta', index: 0, argumentsDelta: '1}' },
      { type: 'tool_call', call: { id: 'call_1', name: 'f', input: { x: 1 } } },
      end('toolUse'),
    ]);
  });

  it('P14: more arguments for a call that went out end the reply with an error, never a truncated call', () => {
    const stream = new OpenAIResponsesTranslator();
    stream.next(ev('response.output_item.done', { output_index: 0, item: fc({ arguments: '{}', status: 'completed' }) }));
    expect(() => stream.next(ev('response.function_call_arguments.delta', { item_id: 'fc_1', output_index: 0, delta: '}' }))).toThrow(
      'tool call f (call_1) got more arguments after it was complete: }',
    );
  });

  it('P6: arguments that do not parse are the cut call when the reply ends at max_output_tokens, else the error of the reply', () => {
    const cutItem = ev('response.output_item.done', { output_index: 0, item: fc({ arguments: '{"x":', status: 'completed' }) });
    expect(read([cutItem, ev('response.incomplete', { response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } } })]).at(-1)).toEqual(end('length'));
    const stream = new OpenAIResponsesTranslator();
    stream.next(cutItem);
    expect(() => stream.next(completed())).toThrow(/^invalid JSON in the arguments of tool call f \(call_1\): /);
  });

  it('P6: a call item marked incomplete in a reply that completed is an error naming it', () => {
    const stream = new OpenAIResponsesTranslator();
    stream.next(ev('response.output_item.done', { output_index: 0, item: fc({ arguments: '{"x":1}', status: 'incomplete' }) }));
    expect(() => stream.next(completed())).toThrow('tool call f (call_1) ended incomplete');
  });

  it('P15: response.incomplete for another reason than the token limit is an error naming it', () => {
    const incomplete = (reason: string) => read([ev('response.incomplete', { response: { status: 'incomplete', incomplete_details: { reason } } })]);
    expect(incomplete('content_filter')).toEqual([
      failedEnd('response incomplete (content_filter): the content filter cut the reply', { kind: 'refusal' }),
    ]);
    expect(incomplete('max_messages')).toEqual([failedEnd('response incomplete (max_messages)', { kind: 'protocol' })]);
  });

  it("P15: an error event as the API also sends it (the error nested), and one without a code", () => {
    const nested = { type: 'insufficient_quota', code: 'insufficient_quota', message: 'You exceeded your current quota.', param: null };
    expect(read([ev('error', { sequence_number: 2, error: nested })])).toEqual([
      failedEnd('error in the stream: insufficient_quota: You exceeded your current quota.', { kind: 'protocol' }),
    ]);
    expect(read([ev('error', { code: null, message: 'Something went wrong.', param: null })])).toEqual([
      failedEnd('error in the stream: Something went wrong.', { kind: 'protocol' }),
    ]);
  });

  it('P7: a refusal given only in its done event is the message', () => {
    expect(read([ev('response.refusal.done', { refusal: 'No.' }), completed()])).toEqual([failedEnd('No.', { kind: 'refusal' })]);
  });

  it('P10: reasoning_text.delta (raw reasoning, as open-weight servers stream it) is reasoning too; reasoning items are taken from response.output when no item was done', () => {
    const item = { type: 'reasoning', id: 'rs_1', summary: [], content: [{ type: 'reasoning_text', text: 'hm' }] };
    expect(read([ev('response.reasoning_text.delta', { delta: 'hm' }), completed({ output: [item, { type: 'message', content: [] }] })])).toEqual([
      { type: 'reasoning_delta', text: 'hm' },
      { type: 'message_end', stopReason: 'stop', reasoning: [item] },
    ]);
  });

  it('R27: usage without cached tokens has no cacheReadTokens; a response without usage, no usage', () => {
    expect(read([completed({ usage: { input_tokens: 5, output_tokens: 7 } })])).toEqual([{ type: 'message_end', stopReason: 'stop', usage: { inputTokens: 5, outputTokens: 7 } }]);
    expect(read([completed({ usage: null })])).toEqual([end('stop')]);
  });

  it('P15: a stream that ends without its terminal event, or data that is no event, is an error', () => {
    expect(() => new OpenAIResponsesTranslator().end()).toThrow('the stream ended before the reply was complete (no response.completed)');
    expect(() => new OpenAIResponsesTranslator().next({ data: '{"type":' })).toThrow('invalid JSON in the stream: {"type":');
    expect(() => new OpenAIResponsesTranslator().next({ data: '[1]' })).toThrow('unexpected data in the stream: [1]');
  });

  it('P13: the doc examples of openAIResponsesRequest', () => {
    expect(openAIResponsesRequest({ model: 'gpt-5-mini' }, { messages: [{ role: 'user', content: 'hi' }], tools: [] })).toEqual({
      model: 'gpt-5-mini',
      input: [{ role: 'user', content: 'hi' }],
      store: false,
      stream: true,
    });
    expect(openAIResponsesRequest({ model: 'm', toolChoice: 'get_weather', maxTokens: 100 }, { messages: [{ role: 'user', content: 'hi' }], tools: [weatherSpec] })).toMatchObject({
      tool_choice: { type: 'function', name: 'get_weather' },
      max_output_tokens: 100,
    });
  });
});
