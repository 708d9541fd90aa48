'use strict';
// W6's model replies, written by the bench in four wire formats: OpenAI Chat Completions SSE (with the
// `stream_options.include_usage` usage chunk), Anthropic Messages SSE (message_start,
// content_block_*, message_delta with the usage, message_stop), OpenAI Responses SSE (response.created,
// output items with their deltas and `.done` events, response.completed with the usage) and Gemini's
// `streamGenerateContent?alt=sse` (one `data:` chunk an event, CRLF CRLF apart, each function call whole in its
// chunk with call A's thought signature, the last chunk with finishReason and the usage; P20). The loopback server (w6-server.js)
// writes them one server-sent event per tick; the contenders (contenders/http.js) check what they got
// against the same scenarios.
//
// A tool turn: text tokens, then call A (`lookup`, short arguments in a few pieces: it completes early),
// then call B (`write_file`, arguments streaming for a while: a file being written), then more text
// after the calls (the model keeps streaming while A's and B's tools run), then the end and the usage.
// The last turn is text only. Every event is tagged with what it is, so the server can record when it
// wrote the last byte of each call.

/** The scenario is the request's `model`: every client sends it as it is. */
const SCENARIOS = {
  // (a) CPU per streamed chunk: one long tool turn (instant tools), then a short final turn; 1 event a ms
  'w6-cpu': { name: 'w6-cpu', turns: 2, paceMs: 1, toolMs: 0, lead: 500, aPieces: 8, bPieces: 120, tail: 100, final: 20 },
  // (b) and (c): a three-turn conversation, tools of 200 ms, 1 event every 2 ms
  'w6-conversation': { name: 'w6-conversation', turns: 3, paceMs: 2, toolMs: 200, lead: 20, aPieces: 6, bPieces: 40, tail: 50, final: 30 },
};

// token-sized words, as a model streams them
const WORDS = ' the model keeps streaming while a tool runs and the loop starts it as soon as its call is whole so that the wall time of a turn is the longest of the reply and the tools not their sum'.match(/ \S+/g);
const word = (i) => WORDS[i % WORDS.length];

function text(from, count) {
  let out = '';
  for (let i = 0; i < count; i++) out += word(from + i);
  return out;
}

/** The text of turn `turn` (from 1): what a contender must stream, in order. */
function turnText(scenario, turn) {
  if (turn === scenario.turns) return text(0, scenario.final);
  return text(0, scenario.lead) + text(scenario.lead, scenario.tail);
}

/** Every character a contender must stream over the whole conversation. */
function conversationChars(scenario) {
  let chars = 0;
  for (let t = 1; t <= scenario.turns; t++) chars += turnText(scenario, t).length;
  return chars;
}

const TOOLS = {
  lookup: { description: 'Looks something up', input: { query: 'what to look up' } },
  write_file: { description: 'Writes a file', input: { path: 'the file', content: 'its content' } },
};

/** The arguments of the turn's calls: the turn is in them, so a tool knows which call it runs. */
function callArguments(scenario, turn) {
  const a = JSON.stringify({ query: `turn ${turn}: weather in Paris today` });
  const b = JSON.stringify({ path: `notes/turn-${turn}.md`, content: text(7, scenario.bPieces * 2).trim() });
  return { a, b };
}

/** The turn a tool's input belongs to (see callArguments). */
function turnOf(name, input) {
  const match = name === 'lookup' ? /^turn (\d+):/.exec(input?.query ?? '') : /^notes\/turn-(\d+)\.md$/.exec(input?.path ?? '');
  return match ? Number(match[1]) : undefined;
}

/** `text` in `count` pieces of about the same length (JSON text: cut anywhere but inside an escape; ours has none). */
function pieces(whole, count) {
  const out = [];
  const size = Math.ceil(whole.length / count);
  for (let at = 0; at < whole.length; at += size) out.push(whole.slice(at, at + size));
  return out;
}

const ids = (api, turn) => (api === 'anthropic' ? { a: `toolu_w6t${turn}a`, b: `toolu_w6t${turn}b` } : { a: `call_w6t${turn}a`, b: `call_w6t${turn}b` });

/**
 * The events of one reply: `[{ sse, tag? }]`, `sse` the bytes of one server-sent event. Tags: `a` and
 * `b`, the last byte of call A and of call B (OpenAI Chat Completions: its last arguments piece, the
 * format has no event that closes a call; Anthropic: its `content_block_stop`; OpenAI Responses: its
 * item's `response.output_item.done`; Gemini: the chunk that carries the call, whole).
 */
function reply(api, scenario, turn, { includeUsage = true } = {}) {
  if (api === 'openai') return openAIReply(scenario, turn, includeUsage);
  if (api === 'gemini') return geminiReply(scenario, turn);
  return api === 'responses' ? responsesReply(scenario, turn) : anthropicReply(scenario, turn);
}

/** The thought signature Gemini puts on call A of turn `turn` (as Gemini 3 signs a turn's first call); a request must send it back. */
const geminiSignature = (turn) => `c2lnbmF0dXJlLXc2LXR1cm4t${turn}`;

function geminiReply(scenario, turn) {
  const out = [];
  const chunk = (parts, more = {}, tag) => {
    const { finishReason, usage = { promptTokenCount: 100 * turn, totalTokenCount: 100 * turn } } = more;
    const candidate = { content: { parts, role: 'model' }, ...(finishReason && { finishReason }), index: 0 };
    out.push({ sse: `data: ${JSON.stringify({ candidates: [candidate], usageMetadata: usage, modelVersion: scenario.name, responseId: `w6t${turn}` })}\r\n\r\n`, tag });
  };
  const texts = (from, count) => {
    for (let i = 0; i < count; i++) chunk([{ text: word(from + i) }]);
  };
  const last = turn === scenario.turns;
  if (last) texts(0, scenario.final);
  else {
    texts(0, scenario.lead);
    const { a, b } = callArguments(scenario, turn);
    chunk([{ functionCall: { name: 'lookup', args: JSON.parse(a) }, thoughtSignature: geminiSignature(turn) }], {}, 'a');
    chunk([{ functionCall: { name: 'write_file', args: JSON.parse(b) } }], {}, 'b');
    texts(scenario.lead, scenario.tail); // text after the calls: the API allows it
  }
  const usage = { promptTokenCount: 100 * turn, candidatesTokenCount: out.length, totalTokenCount: 100 * turn + out.length, promptTokensDetails: [{ modality: 'TEXT', tokenCount: 100 * turn }] };
  chunk([{ text: '' }], { finishReason: 'STOP', usage });
  return out;
}

function openAIReply(scenario, turn, includeUsage) {
  const out = [];
  const head = `{"id":"chatcmpl-w6t${turn}","object":"chat.completion.chunk","created":1764000000,"model":"${scenario.name}","system_fingerprint":"fp_w6bench","choices":`;
  const chunk = (delta, finish = null, tag) => out.push({ sse: `data: ${head}[{"index":0,"delta":${JSON.stringify(delta)},"logprobs":null,"finish_reason":${finish === null ? 'null' : `"${finish}"`}}]}\n\n`, tag });
  const texts = (from, count) => {
    for (let i = 0; i < count; i++) chunk({ content: word(from + i) });
  };
  chunk({ role: 'assistant', content: '', refusal: null });
  const last = turn === scenario.turns;
  if (last) texts(0, scenario.final);
  else {
    texts(0, scenario.lead);
    const { a, b } = callArguments(scenario, turn);
    const id = ids('openai', turn);
    [
      [0, id.a, 'lookup', a, scenario.aPieces, 'a'],
      [1, id.b, 'write_file', b, scenario.bPieces, 'b'],
    ].forEach(([index, callId, name, args, count, tag]) => {
      chunk({ tool_calls: [{ index, id: callId, type: 'function', function: { name, arguments: '' } }] });
      const parts = pieces(args, count);
      parts.forEach((part, k) => chunk({ tool_calls: [{ index, function: { arguments: part } }] }, null, k === parts.length - 1 ? tag : undefined));
    });
    texts(scenario.lead, scenario.tail); // content after the calls: the format allows it (see the method in results.md)
  }
  chunk({}, last ? 'stop' : 'tool_calls');
  if (includeUsage) {
    out.push({
      sse: `data: ${head}[],"usage":{"prompt_tokens":${100 * turn},"completion_tokens":${out.length},"total_tokens":${100 * turn + out.length},"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}\n\n`,
    });
  }
  out.push({ sse: 'data: [DONE]\n\n' });
  return out;
}

function anthropicReply(scenario, turn) {
  const out = [];
  const event = (name, data, tag) => out.push({ sse: `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`, tag });
  event('message_start', {
    type: 'message_start',
    message: {
      id: `msg_w6t${turn}`,
      type: 'message',
      role: 'assistant',
      model: scenario.name,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 100 * turn, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 },
    },
  });
  let index = 0;
  const textBlock = (from, count) => {
    event('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
    if (index === 0) event('ping', { type: 'ping' });
    for (let i = 0; i < count; i++) event('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: word(from + i) } });
    event('content_block_stop', { type: 'content_block_stop', index });
    index++;
  };
  const last = turn === scenario.turns;
  if (last) textBlock(0, scenario.final);
  else {
    textBlock(0, scenario.lead);
    const { a, b } = callArguments(scenario, turn);
    const id = ids('anthropic', turn);
    [
      [id.a, 'lookup', a, scenario.aPieces, 'a'],
      [id.b, 'write_file', b, scenario.bPieces, 'b'],
    ].forEach(([callId, name, args, count, tag]) => {
      event('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: callId, name, input: {} } });
      event('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: '' } });
      for (const part of pieces(args, count)) event('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: part } });
      event('content_block_stop', { type: 'content_block_stop', index }, tag);
      index++;
    });
    textBlock(scenario.lead, scenario.tail); // a text block after the tool_use blocks: the API allows it
  }
  event('message_delta', { type: 'message_delta', delta: { stop_reason: last ? 'end_turn' : 'tool_use', stop_sequence: null }, usage: { output_tokens: out.length } });
  event('message_stop', { type: 'message_stop' });
  return out;
}

function responsesReply(scenario, turn) {
  const out = [];
  let seq = 0;
  const event = (type, fields, tag) => out.push({ sse: `event: ${type}\ndata: ${JSON.stringify({ type, ...fields, sequence_number: seq++ })}\n\n`, tag });
  const response = (status, more = {}) => ({
    id: `resp_w6t${turn}`,
    object: 'response',
    created_at: 1764000000,
    status,
    error: null,
    incomplete_details: null,
    model: scenario.name,
    output: [],
    parallel_tool_calls: true,
    store: false,
    tool_choice: 'auto',
    usage: null,
    ...more,
  });
  const items = [];
  const message = (from, count) => {
    const output_index = items.length;
    const id = `msg_w6t${turn}_${output_index}`;
    event('response.output_item.added', { output_index, item: { id, type: 'message', status: 'in_progress', content: [], role: 'assistant' } });
    event('response.content_part.added', { item_id: id, output_index, content_index: 0, part: { type: 'output_text', annotations: [], logprobs: [], text: '' } });
    for (let i = 0; i < count; i++) event('response.output_text.delta', { item_id: id, output_index, content_index: 0, delta: word(from + i), logprobs: [] });
    const part = { type: 'output_text', annotations: [], logprobs: [], text: text(from, count) };
    event('response.output_text.done', { item_id: id, output_index, content_index: 0, text: part.text, logprobs: [] });
    event('response.content_part.done', { item_id: id, output_index, content_index: 0, part });
    const item = { id, type: 'message', status: 'completed', content: [part], role: 'assistant' };
    items.push(item);
    event('response.output_item.done', { output_index, item });
  };
  const call = (callId, name, args, count, tag) => {
    const output_index = items.length;
    const id = `fc_w6t${turn}_${output_index}`;
    event('response.output_item.added', { output_index, item: { id, type: 'function_call', status: 'in_progress', arguments: '', call_id: callId, name } });
    for (const part of pieces(args, count)) event('response.function_call_arguments.delta', { item_id: id, output_index, delta: part });
    event('response.function_call_arguments.done', { item_id: id, output_index, arguments: args });
    const item = { id, type: 'function_call', status: 'completed', arguments: args, call_id: callId, name };
    items.push(item);
    event('response.output_item.done', { output_index, item }, tag);
  };
  event('response.created', { response: response('in_progress') });
  event('response.in_progress', { response: response('in_progress') });
  const last = turn === scenario.turns;
  if (last) message(0, scenario.final);
  else {
    message(0, scenario.lead);
    const { a, b } = callArguments(scenario, turn);
    const id = ids('responses', turn);
    call(id.a, 'lookup', a, scenario.aPieces, 'a');
    call(id.b, 'write_file', b, scenario.bPieces, 'b');
    message(scenario.lead, scenario.tail); // a message item after the function calls: the API allows it
  }
  const usage = { input_tokens: 100 * turn, input_tokens_details: { cached_tokens: 0 }, output_tokens: out.length, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 100 * turn + out.length };
  event('response.completed', { response: response('completed', { output: items, usage }) });
  return out;
}

module.exports = { SCENARIOS, TOOLS, reply, ids, turnText, conversationChars, callArguments, turnOf, geminiSignature };
