'use strict';
// W10's contenders: one conversation (a text turn with a `lookup` call, a tool of 100 ms, a text turn)
// against w10-server.js, over Chat Completions, each through its own OpenAI-compatible provider:
// - rx-tool-loop: runEventedToolLoop with openAIChatProvider; its `text_delta` events.
// - Pi: pi-agent-core's runAgentLoop with pi-ai's 'openai-completions' provider; its `message_update`
//   text_delta events.
// - AI SDK: streamText with @ai-sdk/openai's chat model (`openai.chat(id)`); its fullStream's `text-delta` parts.
// - floor: Node's fetch, the SSE split and JSON.parse of each event, the call gathered by hand and the tool run
//   between the two requests: what any client pays per turn (not a peer: no target is judged against it).
// `run` resolves when the conversation ends; `onText(text)` is called as the consumer sees each text event.
const { lib } = require('../lib/env.js');
const { piModel } = require('./http.js');

const API_KEY = 'w10-bench-key';
const TOOL_MS = 100;
const lookup = () => new Promise((resolve) => setTimeout(() => resolve('sunny, 21 °C'), TOOL_MS));
const DESCRIPTION = 'Looks something up';

const rxToolLoop = {
  name: 'rx-tool-loop',
  label: 'rx-tool-loop (runEventedToolLoop + openAIChatProvider)',
  async load() {},
  run({ model, baseURL, onText }) {
    const registry = new lib.ToolRegistry();
    registry.register({ name: 'lookup', description: DESCRIPTION, input: { query: 'what to look up' }, handler: lookup });
    const provider = lib.openAIChatProvider({ model, apiKey: API_KEY, maxRetries: 0, baseURL: `${baseURL}/v1` });
    return new Promise((resolve, reject) => {
      let end;
      lib.runEventedToolLoop({ provider, registry, messages: [{ role: 'user', content: 'hi' }], maxTurns: 5 }).subscribe({
        next(event) {
          if (event.type === 'text_delta') onText(event.text);
          else if (event.type === 'loop_end') end = event;
        },
        error: reject,
        complete() {
          if (end?.reason !== 'stop') reject(new Error(`the loop ended with ${end?.reason}: ${end?.assistant?.errorMessage ?? ''}`));
          else resolve();
        },
      });
    });
  },
};

let core;
let piAi;
const pi = {
  name: 'pi-runAgentLoop',
  label: 'Pi: pi-agent-core runAgentLoop + pi-ai openai-completions',
  async load() {
    core ??= await import('@mariozechner/pi-agent-core');
    piAi ??= await import('@mariozechner/pi-ai');
  },
  async run({ model, baseURL, onText }) {
    const tools = [
      {
        name: 'lookup',
        label: 'lookup',
        description: DESCRIPTION,
        parameters: piAi.Type.Object({ query: piAi.Type.String() }),
        execute: async () => ({ content: [{ type: 'text', text: await lookup() }], details: {} }),
      },
    ];
    let failure;
    const emit = (event) => {
      if (event.type === 'message_update' && event.assistantMessageEvent.type === 'text_delta') onText(event.assistantMessageEvent.delta);
      else if (event.type === 'message_end' && event.message.role === 'assistant' && (event.message.stopReason === 'error' || event.message.stopReason === 'aborted')) failure = event.message.errorMessage;
    };
    const config = { model: piModel('openai', { name: model }, baseURL), apiKey: API_KEY, maxRetries: 0, convertToLlm: (messages) => messages, toolExecution: 'parallel' };
    await core.runAgentLoop([{ role: 'user', content: 'hi', timestamp: Date.now() }], { systemPrompt: '', messages: [], tools }, config, emit, undefined);
    if (failure !== undefined) throw new Error(`pi: ${String(failure).split('\n')[0]}`);
  },
};

let ai;
let aiOpenAI;
const aiSdk = {
  name: 'ai-streamText',
  label: 'AI SDK streamText + @ai-sdk/openai (chat)',
  async load() {
    ai ??= await import('ai');
    aiOpenAI ??= await import('@ai-sdk/openai');
  },
  async run({ model, baseURL, onText }) {
    const inputSchema = ai.jsonSchema({ type: 'object', properties: { query: { type: 'string' } }, required: ['query'], additionalProperties: false });
    const tools = { lookup: ai.tool({ description: DESCRIPTION, inputSchema, execute: lookup }) };
    const chat = aiOpenAI.createOpenAI({ baseURL: `${baseURL}/v1`, apiKey: API_KEY }).chat(model);
    const result = ai.streamText({ model: chat, tools, prompt: 'hi', stopWhen: (ai.isStepCount ?? ai.stepCountIs)(5), maxRetries: 0, maxOutputTokens: 4096 });
    for await (const part of result.fullStream) {
      if (part.type === 'text-delta') onText(part.text);
      else if (part.type === 'error') throw part.error instanceof Error ? part.error : new Error(String(part.error?.message ?? part.error));
    }
  },
};

const floor = {
  name: 'sse-floor',
  label: 'fetch + SSE split + JSON.parse, the call gathered by hand (floor)',
  async load() {},
  async run({ model, baseURL, onText }) {
    const messages = [{ role: 'user', content: 'hi' }];
    const tools = [{ type: 'function', function: { name: 'lookup', description: DESCRIPTION, parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } } }];
    for (;;) {
      const body = JSON.stringify({ model, stream: true, stream_options: { include_usage: true }, messages, tools });
      const response = await fetch(`${baseURL}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` }, body });
      if (!response.ok) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = '';
      let call;
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const data = buffer.slice(buffer.indexOf('data: ') + 6, end);
          buffer = buffer.slice(end + 2);
          if (data === '[DONE]') continue;
          const delta = JSON.parse(data).choices?.[0]?.delta;
          if (typeof delta?.content === 'string') onText(delta.content);
          for (const piece of delta?.tool_calls ?? []) {
            call ??= { id: piece.id, arguments: '' };
            call.arguments += piece.function?.arguments ?? '';
          }
        }
      }
      if (!call) return;
      const output = await lookup(JSON.parse(call.arguments));
      messages.push({ role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: { name: 'lookup', arguments: call.arguments } }] }, { role: 'tool', tool_call_id: call.id, content: output });
    }
  },
};

const ALL = [rxToolLoop, pi, aiSdk, floor];

module.exports = { ALL, TOOL_MS };
