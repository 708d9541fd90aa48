/**
 * scripts/check-streams.ts, the development check against recorded streams, run on streams written
 * here in the exact wire format (the recordings themselves stay outside the repository): each is served
 * on loopback whole and in pieces, read by the real providers through checkProviderEvents (P5).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProviderEvent } from '../../src/index.js';
import { Outcome, StreamResult, checkStreams, differences, exitCodeOf, main, outcomeOf, stripHeader, summarize } from '../../scripts/check-streams';

/** One server-sent event: `data:` only (OpenAI), or with its `event:` name (Anthropic). */
const data = (payload: unknown): string => `data: ${typeof payload === 'string' ? payload : JSON.stringify(payload)}\n\n`;
const named = (event: string, payload: object): string => `event: ${event}\n${data(payload)}`;

const header = '# source: written for spec/scripts/check-streams.spec.ts\n# commit: none\n# note: a reply in the exact wire format\n';

/** OpenAI Chat Completions: reasoning, text with characters of several bytes, a call in three pieces, a usage-only chunk, [DONE]. */
const chunk = (delta: object, finishReason: string | null = null) => ({
  id: 'chatcmpl-check0001',
  object: 'chat.completion.chunk',
  created: 1767225600,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
});
const openAIStream = [
  data(chunk({ role: 'assistant', content: '', refusal: null })),
  data(chunk({ reasoning_content: 'The user wants Paris; ' })),
  data(chunk({ reasoning_content: 'call get_weather.' })),
  data(chunk({ content: 'Je regarde le temps à Paris ' })),
  data(chunk({ content: '☀️…' })),
  data(chunk({ tool_calls: [{ index: 0, id: 'call_check0001', type: 'function', function: { name: 'get_weather', arguments: '' } }] })),
  data(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] })),
  data(chunk({ tool_calls: [{ index: 0, function: { arguments: ' "Paris"}' } }] })),
  data(chunk({}, 'tool_calls')),
  data({ id: 'chatcmpl-check0001', object: 'chat.completion.chunk', created: 1767225600, model: 'gpt-4o-mini', choices: [], usage: { prompt_tokens: 61, completion_tokens: 18, total_tokens: 79, prompt_tokens_details: { cached_tokens: 0 } } }),
  data('[DONE]'),
].join('');

/** Anthropic Messages: a thinking block with its signature, a ping, text, a tool_use block in two pieces, usage in message_start and message_delta. */
const delta = (index: number, piece: object) => named('content_block_delta', { type: 'content_block_delta', index, delta: piece });
const anthropicStream = [
  named('message_start', {
    type: 'message_start',
    message: { id: 'msg_check0001', type: 'message', role: 'assistant', content: [], model: 'claude-sonnet-4-5', stop_reason: null, stop_sequence: null, usage: { input_tokens: 42, output_tokens: 1 } },
  }),
  named('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
  named('ping', { type: 'ping' }),
  delta(0, { type: 'thinking_delta', thinking: 'Wetter in München: ' }),
  delta(0, { type: 'thinking_delta', thinking: 'get_weather.' }),
  delta(0, { type: 'signature_delta', signature: 'c2lnbmF0dXJlLWNoZWNr' }),
  named('content_block_stop', { type: 'content_block_stop', index: 0 }),
  named('content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }),
  delta(1, { type: 'text_delta', text: 'Ich sehe nach – ' }),
  delta(1, { type: 'text_delta', text: 'einen Moment 🌦️' }),
  named('content_block_stop', { type: 'content_block_stop', index: 1 }),
  named('content_block_start', { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_check0001', name: 'get_weather', input: {} } }),
  delta(2, { type: 'input_json_delta', partial_json: '{"city": "Mün' }),
  delta(2, { type: 'input_json_delta', partial_json: 'chen"}' }),
  named('content_block_stop', { type: 'content_block_stop', index: 2 }),
  named('message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 57 } }),
  named('message_stop', { type: 'message_stop' }),
].join('');

/** An Anthropic reply that fails: an `error` event after message_start (a recording of a failure). */
const anthropicOverloaded = [
  named('message_start', { type: 'message_start', message: { id: 'msg_check0002', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 9, output_tokens: 1 } } }),
  named('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
].join('');

/** OpenAI Responses: a reasoning item (summary streamed, encrypted content), text, a call in two pieces, the usage in response.completed. */
const event = (type: string, fields: object) => named(type, { type, ...fields });
const reasoningItem = { id: 'rs_check0001', type: 'reasoning', encrypted_content: 'gAAAAABcheck', summary: [{ type: 'summary_text', text: 'Paris: get_weather.' }] };
const responsesStream = [
  event('response.created', { sequence_number: 0, response: { id: 'resp_check0001', object: 'response', status: 'in_progress', model: 'gpt-5-mini', output: [], usage: null } }),
  event('response.output_item.added', { sequence_number: 1, output_index: 0, item: { id: 'rs_check0001', type: 'reasoning', summary: [] } }),
  event('response.reasoning_summary_text.delta', { sequence_number: 2, item_id: 'rs_check0001', output_index: 0, summary_index: 0, delta: 'Paris: ' }),
  event('response.reasoning_summary_text.delta', { sequence_number: 3, item_id: 'rs_check0001', output_index: 0, summary_index: 0, delta: 'get_weather.' }),
  event('response.output_item.done', { sequence_number: 4, output_index: 0, item: reasoningItem }),
  event('response.output_item.added', { sequence_number: 5, output_index: 1, item: { id: 'msg_check0001', type: 'message', status: 'in_progress', content: [], role: 'assistant' } }),
  event('response.output_text.delta', { sequence_number: 6, item_id: 'msg_check0001', output_index: 1, content_index: 0, delta: 'Je regarde ' }),
  event('response.output_text.delta', { sequence_number: 7, item_id: 'msg_check0001', output_index: 1, content_index: 0, delta: 'à Paris ☀️' }),
  event('response.output_item.added', { sequence_number: 8, output_index: 2, item: { id: 'fc_check0001', type: 'function_call', status: 'in_progress', arguments: '', call_id: 'call_check0002', name: 'get_weather' } }),
  event('response.function_call_arguments.delta', { sequence_number: 9, item_id: 'fc_check0001', output_index: 2, delta: '{"city":' }),
  event('response.function_call_arguments.delta', { sequence_number: 10, item_id: 'fc_check0001', output_index: 2, delta: ' "Paris"}' }),
  event('response.output_item.done', { sequence_number: 11, output_index: 2, item: { id: 'fc_check0001', type: 'function_call', status: 'completed', arguments: '{"city": "Paris"}', call_id: 'call_check0002', name: 'get_weather' } }),
  event('response.completed', { sequence_number: 12, response: { id: 'resp_check0001', object: 'response', status: 'completed', model: 'gpt-5-mini', usage: { input_tokens: 70, input_tokens_details: { cached_tokens: 64 }, output_tokens: 31, output_tokens_details: { reasoning_tokens: 12 }, total_tokens: 101 } } }),
].join('');

let folder: string;
beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'check-streams-'));
  mkdirSync(join(folder, 'openai'));
  mkdirSync(join(folder, 'anthropic'));
  writeFileSync(join(folder, 'openai', 'reply.sse'), header + openAIStream);
  writeFileSync(join(folder, 'anthropic', 'reply.sse'), header + anthropicStream);
  writeFileSync(join(folder, 'anthropic', 'README.md'), 'not a stream: skipped\n');
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

describe('check-streams: the providers read each stream alike whole and in pieces (P5)', () => {
  it('serves each stream whole and in 1-, 7- and 64-byte pieces and sums up what each provider made of it', async () => {
    const lines: string[] = [];
    const { results, exitCode } = await checkStreams(folder, { write: (line) => lines.push(line) });

    expect(results.map((r) => r.file)).toEqual(['openai/reply.sse', 'anthropic/reply.sse']);
    const [openai, anthropic] = results as [StreamResult, StreamResult];
    expect(openai.outcome).toEqual({
      stopReason: 'toolUse',
      text: 'Je regarde le temps à Paris ☀️…',
      reasoningText: 'The user wants Paris; call get_weather.',
      calls: [{ id: 'call_check0001', name: 'get_weather', input: { city: 'Paris' } }],
      deltas: [{ index: 0, id: 'call_check0001', name: 'get_weather', arguments: '{"city": "Paris"}' }],
      usage: { inputTokens: 61, outputTokens: 18, cacheReadTokens: 0 },
    });
    expect(anthropic.outcome).toEqual({
      stopReason: 'toolUse',
      text: 'Ich sehe nach – einen Moment 🌦️',
      reasoningText: 'Wetter in München: get_weather.',
      reasoning: [{ type: 'thinking', thinking: 'Wetter in München: get_weather.', signature: 'c2lnbmF0dXJlLWNoZWNr' }],
      calls: [{ id: 'toolu_check0001', name: 'get_weather', input: { city: 'München' } }],
      deltas: [{ index: 0, id: 'toolu_check0001', name: 'get_weather', arguments: '{"city": "München"}' }],
      usage: { inputTokens: 42, outputTokens: 57 },
    });
    for (const result of results) {
      expect(result.disagreements).toEqual([]);
      expect(result.protocolErrors).toEqual([]);
    }
    expect(exitCode).toBe(0);

    // text and reasoning lengths in UTF-16 code units, as JavaScript counts them
    const length = (text: string) => String(text.length).padStart(4);
    expect(lines.slice(0, 2)).toEqual([
      `openai/reply.sse     toolUse  text ${length(openai.outcome.text)}  calls get_weather  reasoning 39  usage 61/18  pieces agree`,
      `anthropic/reply.sse  toolUse  text ${length(anthropic.outcome.text)}  calls get_weather  reasoning 31 (1 block)  usage 42/57  pieces agree`,
    ]);
    expect(lines.slice(2)).toEqual([
      '',
      '2 streams: toolUse 2',
      'stop reason error (listed, not a failure): none',
      'piece sizes disagree: none',
      'protocol errors: none',
    ]);
  }, 30_000);

  it('P14: serves openai-responses/*.sse to openAIResponsesProvider, whole and in pieces', async () => {
    mkdirSync(join(folder, 'openai-responses'));
    writeFileSync(join(folder, 'openai-responses', 'reply.sse'), header + responsesStream);
    const lines: string[] = [];
    const { results, exitCode } = await checkStreams(folder, { pieceSizes: [1, 7], write: (line) => lines.push(line) });

    const responses = results.find((r) => r.file === 'openai-responses/reply.sse')!;
    expect(responses.outcome).toEqual({
      stopReason: 'toolUse',
      text: 'Je regarde à Paris ☀️',
      reasoningText: 'Paris: get_weather.',
      reasoning: [reasoningItem],
      calls: [{ id: 'call_check0002', name: 'get_weather', input: { city: 'Paris' } }],
      deltas: [{ index: 0, id: 'call_check0002', name: 'get_weather', arguments: '{"city": "Paris"}' }],
      usage: { inputTokens: 70, outputTokens: 31, cacheReadTokens: 64 },
    });
    expect([responses.disagreements, responses.protocolErrors, exitCode]).toEqual([[], [], 0]);
    expect(results.map((r) => r.file)).toEqual(['openai/reply.sse', 'anthropic/reply.sse', 'openai-responses/reply.sse']);
    expect(lines).toContain('3 streams: toolUse 3');
  }, 30_000);

  it('lists a stream whose reply ends with error, which is no failure by itself', async () => {
    writeFileSync(join(folder, 'anthropic', 'overloaded.sse'), header + anthropicOverloaded);
    const lines: string[] = [];
    const { results, exitCode } = await checkStreams(folder, { pieceSizes: [5], write: (line) => lines.push(line) });

    const failed = results.find((r) => r.file === 'anthropic/overloaded.sse')!;
    expect(failed.outcome).toMatchObject({ stopReason: 'error', errorMessage: 'error in the stream: overloaded_error: Overloaded' });
    expect(failed.disagreements).toEqual([]);
    expect(lines.find((line) => line.startsWith('anthropic/overloaded.sse'))).toMatch(/ error {3}.*pieces agree {2}error: "error in the stream: overloaded_error: Overloaded"$/);
    expect(lines).toContain('3 streams: toolUse 2, error 1');
    expect(lines).toContain('stop reason error (listed, not a failure): 1: anthropic/overloaded.sse');
    expect(exitCode).toBe(0);
  }, 30_000);
});

describe('check-streams: its parts', () => {
  it('strips the leading # lines only, and keeps the body byte for byte', () => {
    const body = 'data: {"a":"# not a header"}\r\n\r\n: comment\r\n\r\n';
    expect(stripHeader(Buffer.from(header + body)).toString()).toBe(body);
    expect(stripHeader(Buffer.from(body)).toString()).toBe(body);
    expect(stripHeader(Buffer.from('# only a header')).length).toBe(0);
  });

  it('masks an id openAIChatProvider made up for a server that sent none, and only such an id', () => {
    const events: ProviderEvent[] = [
      { type: 'message_start' },
      { type: 'tool_call_delta', index: 0, id: 'call_mbz1k2x3_0', name: 'f', argumentsDelta: '{}' },
      { type: 'tool_call', call: { id: 'call_mbz1k2x3_0', name: 'f', input: {} } },
      { type: 'tool_call', call: { id: 'call_Wx81kQ2pL0cMv3rN', name: 'g', input: {} } },
      { type: 'message_end', stopReason: 'toolUse' },
    ];
    const outcome = outcomeOf(events);
    expect(outcome.calls.map((call) => call.id)).toEqual(['call_<made up>_0', 'call_Wx81kQ2pL0cMv3rN']);
    expect(outcome.deltas[0]!.id).toBe('call_<made up>_0');
  });

  it('tells how two outcomes differ, field by field', () => {
    const whole = outcomeOf([{ type: 'message_start' }, { type: 'text_delta', text: 'Hi' }, { type: 'message_end', stopReason: 'stop' }]);
    const split = outcomeOf([{ type: 'message_start' }, { type: 'text_delta', text: 'H' }, { type: 'text_delta', text: 'i' }, { type: 'message_end', stopReason: 'stop' }]);
    expect(differences(whole, split)).toEqual([]);
    const cut = outcomeOf([{ type: 'message_start' }, { type: 'text_delta', text: 'H' }], 'provider completed without message_end');
    expect(differences(whole, cut)).toEqual([
      'stopReason: "stop" vs none',
      'text: "Hi" vs "H"',
      'protocolError: none vs "provider completed without message_end"',
    ]);
  });

  it('fails (exit code 1) on a disagreement or a protocol error, not on an error stop reason', () => {
    const outcome: Outcome = { stopReason: 'error', errorMessage: 'HTTP 529: Overloaded', text: '', reasoningText: '', calls: [], deltas: [] };
    const result = (extra: Partial<StreamResult>): StreamResult => ({ file: 'anthropic/x.sse', api: 'anthropic', outcome, disagreements: [], protocolErrors: [], ...extra });
    expect(exitCodeOf([result({})])).toBe(0);
    expect(exitCodeOf([result({}), result({ disagreements: [{ pieceSize: 7, differences: ['text: "a" vs "b"'] }] })])).toBe(1);
    expect(exitCodeOf([result({ protocolErrors: ['1 B: provider sent a second message_start'] })])).toBe(1);
    expect(summarize([result({ protocolErrors: ['whole: provider completed without message_end'] })])).toEqual([
      '1 stream: error 1',
      'stop reason error (listed, not a failure): 1: anthropic/x.sse',
      'piece sizes disagree: none',
      'protocol errors: 1: anthropic/x.sse',
    ]);
  });

  it('takes the folder as its argument or from STREAMS_DIR, and prints a usage line without one', async () => {
    const out = { log: jest.fn(), error: jest.fn() };
    expect(await main([], {}, out)).toBe(2);
    expect(out.error).toHaveBeenCalledWith(expect.stringMatching(/^usage: npm run check-streams -- FOLDER/));
    expect(await main([join(folder, 'missing')], {}, out)).toBe(2);
    expect(await main([join(folder, 'anthropic')], {}, out)).toBe(2); // no openai/ or anthropic/ inside
    expect(out.log).not.toHaveBeenCalled();

    expect(await main([], { STREAMS_DIR: folder }, out)).toBe(0);
    expect(out.log).toHaveBeenCalledWith('protocol errors: none');
  }, 30_000);
});
