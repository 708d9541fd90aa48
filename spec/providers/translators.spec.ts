import { AnthropicTranslator, anthropicRequest } from '../../src/providers/anthropic.js';
import { inputSchema, parseArguments, parseEventData, stringInputs } from '../../src/providers/json.js';
import { OpenAIChatTranslator, openAIChatRequest } from '../../src/providers/openai.js';
import { messageOf } from '../../src/providers/http/transport.js';
import { end, text, weatherSpec } from './conversation';

// the examples in the doc comments, run

describe('the translators, without HTTP', () => {
  it('OpenAIChatTranslator', () => {
    const stream = new OpenAIChatTranslator();
    expect(stream.next({ data: '{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}' })).toEqual([text('Hi')]);
    expect(stream.next({ data: '{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}' })).toEqual([]);
    expect(stream.next({ data: '[DONE]' })).toEqual([end('stop')]);
  });

  it('OpenAIChatTranslator: a new id at a known index is a new call; a call without id gets one (P8, P9)', () => {
    const stream = new OpenAIChatTranslator();
    const delta = (call: object) => ({ data: JSON.stringify({ choices: [{ index: 0, delta: { tool_calls: [call] } }] }) });
    const events = [
      ...stream.next(delta({ index: 0, id: 'a', function: { name: 'f', arguments: '{"x":' } })),
      ...stream.next(delta({ index: 0, function: { arguments: '"1"}' } })),
      ...stream.next(delta({ index: 0, id: 'b', function: { name: 'g', arguments: '{}' } })), // f goes out: a later call started
      ...stream.next(delta({ index: 1, function: { name: 'h', arguments: '' } })), // and g
      ...stream.next({ data: '{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}' }), // and h: the reply finished
    ];
    const id = expect.stringMatching(/^call_/);
    expect(events).toEqual([
      { type: 'tool_call_delta', index: 0, id: 'a', name: 'f', argumentsDelta: '{"x":' },
      { type: 'tool_call_delta', index: 0, argumentsDelta: '"1"}' },
      { type: 'tool_call', call: { id: 'a', name: 'f', input: { x: '1' } } },
      { type: 'tool_call_delta', index: 1, id: 'b', name: 'g', argumentsDelta: '{}' },
      { type: 'tool_call', call: { id: 'b', name: 'g', input: {} } },
      { type: 'tool_call_delta', index: 2, id, name: 'h', argumentsDelta: '' },
      { type: 'tool_call', call: { id, name: 'h', input: {} } },
    ]);
    expect(events[5].type === 'tool_call_delta' && events[6].type === 'tool_call' && events[5].id === events[6].call.id).toBe(true);
    expect(stream.end()).toEqual([end('toolUse')]); // calls made: toolUse whatever finish_reason said
  });

  it('OpenAIChatTranslator: a server that numbers every call 0 continues the last one (P8)', () => {
    const stream = new OpenAIChatTranslator();
    const delta = (call: object) => ({ data: JSON.stringify({ choices: [{ index: 0, delta: { tool_calls: [call] } }] }) });
    stream.next(delta({ index: 0, id: 'a', function: { name: 'f', arguments: '{"x":1}' } }));
    stream.next(delta({ index: 0, id: 'b', function: { name: 'g', arguments: '{"y":' } }));
    expect(stream.next(delta({ index: 0, function: { arguments: '2}' } }))).toEqual([{ type: 'tool_call_delta', index: 1, argumentsDelta: '2}' }]);
    expect(stream.next({ data: '{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}' })).toEqual([
      { type: 'tool_call', call: { id: 'b', name: 'g', input: { y: 2 } } },
    ]);
  });

  it('OpenAIChatTranslator: an empty piece or a repeated header for a call that went out changes nothing (P8)', () => {
    const stream = new OpenAIChatTranslator();
    const delta = (call: object) => ({ data: JSON.stringify({ choices: [{ index: 0, delta: { tool_calls: [call] } }] }) });
    stream.next(delta({ index: 0, id: 'a', function: { name: 'f', arguments: '{}' } }));
    expect(stream.next(delta({ index: 1, id: 'b', function: { name: 'g', arguments: '{}' } }))).toEqual([
      { type: 'tool_call', call: { id: 'a', name: 'f', input: {} } },
      { type: 'tool_call_delta', index: 1, id: 'b', name: 'g', argumentsDelta: '{}' },
    ]);
    expect(stream.next(delta({ index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '' } }))).toEqual([]);
    expect(stream.next(delta({ index: 0, id: '', function: { arguments: ' \n' } }))).toEqual([]);
    expect(() => stream.next(delta({ index: 0, function: { arguments: '}' } }))).toThrow('tool call f (a) got more arguments after it was complete: }');
  });

  it('OpenAIChatTranslator: an empty refusal and tool_calls null in every delta change nothing (P7)', () => {
    const stream = new OpenAIChatTranslator();
    expect(stream.next({ data: '{"choices":[{"delta":{"content":"4","refusal":"","role":"assistant","tool_calls":null},"index":0}]}' })).toEqual([
      text('4'),
    ]);
    expect(stream.next({ data: '{"choices":[{"delta":{"content":"","refusal":"","tool_calls":null},"index":0}]}' })).toEqual([]);
    expect(stream.next({ data: '[DONE]' })).toEqual([end('stop')]); // no finish_reason: [DONE] completes it
  });

  it('AnthropicTranslator', () => {
    const stream = new AnthropicTranslator();
    expect(
      stream.next({ event: 'content_block_delta', data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}' }),
    ).toEqual([text('Hi')]);
    expect(stream.next({ event: 'message_delta', data: '{"type":"message_delta","delta":{"stop_reason":"end_turn"}}' })).toEqual([]);
    expect(stream.next({ event: 'message_stop', data: '{"type":"message_stop"}' })).toEqual([end('stop')]);
  });

  it('AnthropicTranslator: refusal is an error', () => {
    const stream = new AnthropicTranslator();
    stream.next({ data: '{"type":"message_delta","delta":{"stop_reason":"refusal"}}' });
    const errorMessage = 'stop_reason refusal: the model declined to answer';
    expect(stream.end()).toEqual([{ type: 'message_end', stopReason: 'error', errorMessage, failure: { kind: 'refusal', message: errorMessage } }]);
  });

  it('request bodies', () => {
    expect(openAIChatRequest({ model: 'gpt-4o-mini' }, { messages: [{ role: 'user', content: 'hi' }], tools: [] })).toEqual({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(
      openAIChatRequest({ model: 'm', toolChoice: 'get_weather', maxTokens: 100 }, { messages: [{ role: 'user', content: 'hi' }], tools: [weatherSpec] }),
    ).toMatchObject({ tool_choice: { type: 'function', function: { name: 'get_weather' } }, max_completion_tokens: 100 });
    expect(anthropicRequest('claude-sonnet-4-5', 1024, 'Be brief.', { messages: [{ role: 'user', content: 'hi' }], tools: [] })).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
  });

  it('JSON helpers', () => {
    expect(inputSchema({ name: 'read', description: 'Reads a file', input: { path: 'The file' } })).toEqual({
      type: 'object',
      properties: { path: { type: 'string', description: 'The file' } },
      required: ['path'],
    });
    // R24: a spec with an inputSchema is sent as it is
    expect(inputSchema({ name: 'add', description: 'Adds', inputSchema: { type: 'object', properties: { a: { type: 'number' } } } })).toEqual({
      type: 'object',
      properties: { a: { type: 'number' } },
    });
    expect(stringInputs({ path: 'The file' })).toEqual(inputSchema({ name: 'read', description: 'Reads a file', input: { path: 'The file' } }));
    const hostile = stringInputs(JSON.parse('{"__proto__":"p"}') as Record<string, string>);
    expect(Object.keys(hostile.properties)).toEqual(['__proto__']);
    expect(parseArguments('{"city":"Paris"}', 'get_weather', 'call_1')).toEqual({ city: 'Paris' });
    expect(parseArguments('', 'current_time', 'call_2')).toEqual({});
    expect(() => parseArguments('{"city":"Par', 'get_weather', 'call_3')).toThrow(/^invalid JSON in the arguments of tool call get_weather \(call_3\): /);
    expect(() => parseArguments('[1]', 'get_weather', 'call_4')).toThrow('the arguments of tool call get_weather (call_4) are not a JSON object: [1]');
    expect(parseEventData('{"type":"ping"}')).toEqual({ type: 'ping' });
    expect(() => parseEventData('{"type":')).toThrow('invalid JSON in the stream: {"type":');
    expect(messageOf('{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}')).toBe('invalid x-api-key');
    expect(messageOf('<html>Bad Gateway</html>')).toBeUndefined();
  });
});
