'use strict';
// W6's contenders: each runs one conversation against the loopback server (lib/w6-server.js) with its
// own HTTP providers, on each of the four APIs, and the two tools of lib/w6-wire.js.
//
//   run({ api, scenario, baseURL, tools }) -> Promise<{ chars, tools, usage }>
//
// `api` is 'openai' (Chat Completions), 'anthropic', 'responses' (OpenAI Responses) or 'gemini'; `scenario` one of
// W.SCENARIOS (its name is the request's model);
// `tools.lookup(input)` and `tools.write_file(input)` are the tools' bodies (they record their start and
// take `scenario.toolMs`); each contender wraps them in its own tool format. A run resolves with the
// text characters it streamed and fails when the loop ended in error.
//
// - rx-tool-loop: runEventedToolLoop + ToolRegistry over openAIChatProvider / anthropicProvider /
//   openAIResponsesProvider (P16) / geminiProvider (P20; a baseline without one sits that API out).
// - Pi: pi-agent-core's runAgentLoop with pi-ai's own providers (api 'openai-completions',
//   'anthropic-messages' and 'openai-responses'), the models' `baseUrl` the loopback server; no streamFn
//   (pi-ai's streamSimple).
// - AI SDK: streamText (fullStream) with @ai-sdk/openai's chat model (`openai.chat(id)`: Chat
//   Completions), its responses model (`openai.responses(id)`, `store: false` as rx-tool-loop's, so that
//   it sends the whole history too) and @ai-sdk/anthropic, all with `baseURL` the loopback server, and
//   `stopWhen: isStepCount(turns)`; on Gemini @ai-sdk/google's `createGoogleGenerativeAI({ baseURL })`.
// - @google/genai (Gemini only): the official SDK's `generateContentStream` (it has no loop of its own) in a
//   hand-written loop as eager as ours — each call's tool started as its chunk arrives (the SDK's docs run them
//   after the reply), the model turn sent back as its parts came (thought signatures on them), the results as
//   functionResponse parts — until a reply makes no call. So its tool start and conversation time match an
//   eager loop's; what it measures against rx-tool-loop is the CPU per chunk.
// - floor: fetch, read the body, split the events, JSON.parse each: what any client does per chunk. It
//   reads one reply (no loop, no tools): for the CPU per chunk only.
const W = require('../lib/w6-wire.js');
const { lib: current, versionOf } = require('../lib/env.js');

const API_KEY = 'w6-bench-key';
const ERROR_TEXT = (x) => String(x?.message ?? x).split('\n')[0];

// ---------------------------------------------------------------------------------------------
// rx-tool-loop

function rxRegistry(lib, tools) {
  const registry = new lib.ToolRegistry();
  for (const [name, spec] of Object.entries(W.TOOLS)) {
    registry.register({ name, description: spec.description, input: spec.input, handler: (input) => tools[name](input) });
  }
  return registry;
}

function forLibrary({ name, label, loadLibrary }) {
  let lib;
  const library = () => (lib ??= loadLibrary());
  return {
    name,
    label,
    async load() {
      library();
    },
    /** A build from before the Responses API or Gemini (the baseline) has no provider for it. */
    supports: (api) =>
      api === 'responses' ? typeof library().openAIResponsesProvider === 'function' : api === 'gemini' ? typeof library().geminiProvider === 'function' : true,
    run({ api, scenario, baseURL, tools }) {
      const options = { model: scenario.name, apiKey: API_KEY, maxRetries: 0 };
      const provider =
        api === 'openai'
          ? lib.openAIChatProvider({ ...options, baseURL: `${baseURL}/v1` })
          : api === 'responses'
            ? lib.openAIResponsesProvider({ ...options, baseURL: `${baseURL}/v1`, include: [] }) // no reasoning model: nothing to include
            : api === 'gemini'
              ? lib.geminiProvider({ ...options, baseURL: `${baseURL}/v1beta` })
              : lib.anthropicProvider({ ...options, baseURL });
      return new Promise((resolve, reject) => {
        let chars = 0;
        let end;
        lib
          .runEventedToolLoop({ provider, registry: rxRegistry(lib, tools), messages: [{ role: 'user', content: 'hi' }], maxTurns: 10 })
          .subscribe({
            next(event) {
              if (event.type === 'text_delta') chars += event.text.length;
              else if (event.type === 'loop_end') end = event;
            },
            error: reject,
            complete() {
              if (end?.reason !== 'stop') return reject(new Error(`the loop ended with ${end?.reason}: ${end?.assistant?.errorMessage ?? ''}`));
              resolve({ chars, usage: end.usage?.outputTokens });
            },
          });
      });
    },
  };
}

const rxToolLoop = forLibrary({ name: 'rx-tool-loop', label: 'rx-tool-loop (runEventedToolLoop + its providers)', loadLibrary: () => current });

// ---------------------------------------------------------------------------------------------
// Pi: pi-agent-core's runAgentLoop over pi-ai's providers

let core;
let piAi;

/** Pi's model record for one of the three APIs on the loopback server (W6, and W10's Chat Completions). */
function piModel(api, scenario, baseURL) {
  return {
    id: scenario.name,
    name: scenario.name,
    api: { openai: 'openai-completions', responses: 'openai-responses', anthropic: 'anthropic-messages' }[api],
    provider: api === 'anthropic' ? 'anthropic' : 'openai',
    baseUrl: api === 'anthropic' ? baseURL : `${baseURL}/v1`, // the Anthropic SDK adds /v1/messages
    reasoning: false,
    input: ['text'],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 200_000,
    maxTokens: 4096,
  };
}

function piTools(tools) {
  const { Type } = piAi;
  const schema = (spec) => Type.Object(Object.fromEntries(Object.keys(spec.input).map((key) => [key, Type.String()])));
  return Object.entries(W.TOOLS).map(([name, spec]) => ({
    name,
    label: name,
    description: spec.description,
    parameters: schema(spec),
    execute: async (_id, params) => ({ content: [{ type: 'text', text: await tools[name](params) }], details: {} }),
  }));
}

const pi = {
  name: 'pi-runAgentLoop',
  label: 'Pi: pi-agent-core runAgentLoop + pi-ai providers',
  /** P20 names Gemini's peers: the AI SDK's and Google's own. */
  supports: (api) => api !== 'gemini',
  async load() {
    core ??= await import('@mariozechner/pi-agent-core');
    piAi ??= await import('@mariozechner/pi-ai');
  },
  async run({ api, scenario, baseURL, tools }) {
    let chars = 0;
    let failure;
    let usage;
    const context = { systemPrompt: '', messages: [], tools: piTools(tools) };
    const config = { model: piModel(api, scenario, baseURL), apiKey: API_KEY, maxRetries: 0, convertToLlm: (messages) => messages, toolExecution: 'parallel' };
    const emit = (event) => {
      if (event.type === 'message_update' && event.assistantMessageEvent.type === 'text_delta') chars += event.assistantMessageEvent.delta.length;
      else if (event.type === 'message_end' && event.message.role === 'assistant') {
        if (event.message.stopReason === 'error' || event.message.stopReason === 'aborted') failure = event.message.errorMessage;
        usage = event.message.usage?.output;
      }
    };
    await core.runAgentLoop([{ role: 'user', content: 'hi', timestamp: Date.now() }], context, config, emit, undefined);
    if (failure !== undefined) throw new Error(`pi: ${ERROR_TEXT(failure)}`);
    return { chars, usage };
  },
};

// ---------------------------------------------------------------------------------------------
// the AI SDK: streamText over @ai-sdk/openai (chat) and @ai-sdk/anthropic

let ai;
let aiOpenAI;
let aiAnthropic;
let aiGoogle;

const aiSdk = {
  name: 'ai-streamText',
  label: 'AI SDK streamText + @ai-sdk/openai (chat, responses) / @ai-sdk/anthropic / @ai-sdk/google',
  async load() {
    ai ??= await import('ai');
    aiOpenAI ??= await import('@ai-sdk/openai');
    aiAnthropic ??= await import('@ai-sdk/anthropic');
    aiGoogle ??= await import('@ai-sdk/google');
  },
  async run({ api, scenario, baseURL, tools }) {
    const openai = () => aiOpenAI.createOpenAI({ baseURL: `${baseURL}/v1`, apiKey: API_KEY });
    const model =
      api === 'openai'
        ? openai().chat(scenario.name)
        : api === 'responses'
          ? openai().responses(scenario.name)
          : api === 'gemini'
            ? aiGoogle.createGoogleGenerativeAI({ baseURL: `${baseURL}/v1beta`, apiKey: API_KEY })(scenario.name)
            : aiAnthropic.createAnthropic({ baseURL: `${baseURL}/v1`, apiKey: API_KEY })(scenario.name);
    // stateless, as rx-tool-loop's: with store (its default) the SDK sends earlier items as references
    const providerOptions = api === 'responses' ? { openai: { store: false } } : undefined;
    const toolSet = {};
    for (const [name, spec] of Object.entries(W.TOOLS)) {
      const properties = Object.fromEntries(Object.keys(spec.input).map((key) => [key, { type: 'string' }]));
      const inputSchema = ai.jsonSchema({ type: 'object', properties, required: Object.keys(spec.input), additionalProperties: false });
      toolSet[name] = ai.tool({ description: spec.description, inputSchema, execute: (input) => tools[name](input) });
    }
    const stop = (ai.isStepCount ?? ai.stepCountIs)(scenario.turns);
    const result = ai.streamText({ model, tools: toolSet, prompt: 'hi', stopWhen: stop, maxRetries: 0, maxOutputTokens: 4096, providerOptions });
    let chars = 0;
    let usage;
    for await (const part of result.fullStream) {
      if (part.type === 'text-delta') chars += part.text.length;
      else if (part.type === 'error') throw part.error instanceof Error ? part.error : new Error(ERROR_TEXT(part.error));
      else if (part.type === 'finish') usage = part.totalUsage?.outputTokens;
    }
    return { chars, usage };
  },
};

// ---------------------------------------------------------------------------------------------
// @google/genai: the official SDK's stream, in an eager hand-written function-calling loop

let genaiSdk;

const genai = {
  name: 'genai-generateContentStream',
  label: '@google/genai generateContentStream in a hand-written loop that starts each tool as its call arrives',
  supports: (api) => api === 'gemini',
  async load() {
    genaiSdk ??= await import('@google/genai');
  },
  async run({ scenario, baseURL, tools }) {
    const client = new genaiSdk.GoogleGenAI({ apiKey: API_KEY, httpOptions: { baseUrl: baseURL, apiVersion: 'v1beta' } });
    const functionDeclarations = Object.entries(W.TOOLS).map(([name, spec]) => ({
      name,
      description: spec.description,
      parametersJsonSchema: { type: 'object', properties: Object.fromEntries(Object.keys(spec.input).map((key) => [key, { type: 'string' }])), required: Object.keys(spec.input) },
    }));
    const contents = [{ role: 'user', parts: [{ text: 'hi' }] }];
    let chars = 0;
    let usage;
    for (let turn = 0; turn < 10; turn++) {
      const parts = [];
      const running = [];
      const stream = await client.models.generateContentStream({ model: scenario.name, contents, config: { tools: [{ functionDeclarations }] } });
      for await (const chunk of stream) {
        if (chunk.usageMetadata?.candidatesTokenCount !== undefined) usage = chunk.usageMetadata.candidatesTokenCount;
        for (const part of chunk.candidates?.[0]?.content?.parts ?? []) {
          parts.push(part);
          if (typeof part.text === 'string' && part.thought !== true) chars += part.text.length;
          const call = part.functionCall;
          if (call) running.push(Promise.resolve(tools[call.name](call.args)).then((output) => ({ functionResponse: { id: call.id, name: call.name, response: { output } } })));
        }
      }
      if (running.length === 0) return { chars, usage };
      contents.push({ role: 'model', parts }, { role: 'user', parts: await Promise.all(running) });
    }
    throw new Error('genai: more than 10 turns');
  },
};

// ---------------------------------------------------------------------------------------------
// the floor: one reply, read and parsed, nothing else

const floor = {
  name: 'sse-floor',
  label: 'fetch + SSE split + JSON.parse, one reply (floor)',
  cpuOnly: true,
  async load() {},
  async run({ api, scenario, baseURL }) {
    const request = {
      openai: { url: `${baseURL}/v1/chat/completions`, headers: { authorization: `Bearer ${API_KEY}` } },
      responses: { url: `${baseURL}/v1/responses`, headers: { authorization: `Bearer ${API_KEY}` } },
      anthropic: { url: `${baseURL}/v1/messages`, headers: { 'x-api-key': API_KEY, 'anthropic-version': '2023-06-01' } },
      gemini: { url: `${baseURL}/v1beta/models/${scenario.name}:streamGenerateContent?alt=sse`, headers: { 'x-goog-api-key': API_KEY } },
    }[api];
    const tools = Object.keys(W.TOOLS).map((name) => (api === 'openai' ? { type: 'function', function: { name } } : api === 'responses' ? { type: 'function', name } : { name }));
    const body =
      api === 'responses'
        ? { model: scenario.name, stream: true, store: false, max_output_tokens: 4096, input: [{ role: 'user', content: 'hi' }], tools }
        : api === 'gemini'
          ? { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], tools: [{ functionDeclarations: tools }] }
          : { model: scenario.name, stream: true, stream_options: api === 'openai' ? { include_usage: true } : undefined, max_tokens: 4096, messages: [{ role: 'user', content: 'hi' }], tools };
    const separator = api === 'gemini' ? '\r\n\r\n' : '\n\n'; // Gemini's events end with CRLF CRLF
    const response = await fetch(request.url, { method: 'POST', headers: { 'content-type': 'application/json', ...request.headers }, body: JSON.stringify(body) });
    if (!response.ok) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    let chars = 0;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf(separator)) >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + separator.length);
        const data = event.slice(event.indexOf('data: ') + 6);
        if (data === '[DONE]') continue;
        const json = JSON.parse(data);
        const piece =
          api === 'openai'
            ? json.choices?.[0]?.delta?.content
            : api === 'responses'
              ? json.type === 'response.output_text.delta'
                ? json.delta
                : undefined
              : api === 'gemini'
                ? json.candidates?.[0]?.content?.parts?.[0]?.text
                : json.delta?.text;
        if (typeof piece === 'string') chars += piece.length;
      }
    }
    return { chars, usage: undefined, oneReply: true };
  },
};

// ---------------------------------------------------------------------------------------------

const baseline = require('../lib/baseline.js').fromEnv();
const rxBaseline = baseline && forLibrary({ name: baseline.name, label: baseline.label, loadLibrary: () => require(baseline.entry) });

const ALL = [floor, rxToolLoop, rxBaseline, pi, aiSdk, genai].filter(Boolean);
const byName = new Map(ALL.map((c) => [c.name, c]));

function httpContender(name) {
  const found = byName.get(name);
  if (!found) throw new Error(`bench: no W6 contender named ${name} (have: ${[...byName.keys()].join(', ')})`);
  return found;
}

const versions = () => ({
  '@ai-sdk/openai': versionOf('@ai-sdk/openai'),
  '@ai-sdk/anthropic': versionOf('@ai-sdk/anthropic'),
  '@ai-sdk/google': versionOf('@ai-sdk/google'),
  '@google/genai': versionOf('@google/genai'),
  '@mariozechner/pi-ai': versionOf('@mariozechner/pi-ai'),
});

module.exports = { ALL, httpContender, versions, piModel };
