'use strict';
// W6's loopback model server, in a child process of its own: its CPU is not the client's, so
// `process.cpuUsage()` in the workload process counts the contenders' work alone (the HTTP client
// included: every contender reads the reply through Node's fetch). The child listens on 127.0.0.1 (a
// port the system picks), answers POST /v1/chat/completions (OpenAI), POST /v1/messages
// (Anthropic), POST /v1/responses (OpenAI Responses) and POST /v1beta/models/MODEL:streamGenerateContent?alt=sse
// (Gemini) with the replies of w6-wire.js, one server-sent event per timer tick (`paceMs`), and
// records per request when it wrote each call's last byte and the reply's end, on the system's
// monotonic clock (process.hrtime, the same clock in both processes), in ms since an epoch the parent
// gives it. The parent starts it (`start()`), collects the records (`take()`) and stops it (`stop()`).
//
// Each request is checked: a known scenario (the `model`; Gemini's is in the path), the two tools declared, and a history
// whose tool results answer exactly the calls of the earlier turns (the turn is 1 + results / 2); on
// Gemini, whose calls have no ids, by their names, and each turn's call A with its thought signature.
// A request that fails the check gets a 400, and the contender fails.
const { fork } = require('node:child_process');
const http = require('node:http');
const W = require('./w6-wire.js');

// ---------------------------------------------------------------------------------------------
// the child

function serve(epoch) {
  const since = () => Number(process.hrtime.bigint() - epoch) / 1e6;
  let records = [];
  // replies still being written, and the takes waiting for them (a client may be done before the
  // server is: rx-tool-loop's OpenAI provider ends the reply at the usage chunk, before [DONE])
  let writing = 0;
  let waiting = [];
  const settled = () => {
    if (writing > 0) return;
    for (const id of waiting) process.send({ type: 'records', id, records });
    if (waiting.length > 0) records = [];
    waiting = [];
  };

  const server = http.createServer((req, res) => {
    const cpu = process.cpuUsage();
    const arrived = since();
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (piece) => (body += piece));
    req.on('end', () => {
      const { api, model } = route(req.url);
      let request;
      try {
        request = JSON.parse(body);
      } catch {
        request = undefined;
      }
      const checked = api && request ? check(api, request, model) : { error: `unexpected request ${req.method} ${req.url}` };
      if (checked.error) {
        records.push({ api, error: checked.error });
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { type: 'invalid_request_error', message: `w6 server: ${checked.error}` } }));
        return;
      }
      const { scenario, turn, includeUsage } = checked;
      const events = W.reply(api, scenario, turn, { includeUsage });
      const record = { api, scenario: scenario.name, turn, includeUsage, arrived, chunks: events.length, bytes: 0, at: {} };
      records.push(record);
      writing++;
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
      res.flushHeaders();
      // event k is due at first + k × paceMs: a late timer writes what is due at once (one write per
      // event still), so every reply takes the same time whatever the timers' jitter, for every contender
      let i = 0;
      let closed = false;
      res.on('close', () => (closed = true));
      const first = since();
      record.at.first = first;
      const tick = () => {
        if (closed) {
          record.aborted = true;
          writing--;
          settled();
          return;
        }
        while (i < events.length && first + i * scenario.paceMs <= since() + 0.05) {
          const { sse, tag } = events[i++];
          record.bytes += sse.length;
          res.write(sse);
          if (tag) record.at[tag] = since(); // the call's last byte is written (handed to the socket)
        }
        if (i < events.length) {
          setTimeout(tick, Math.max(0, first + i * scenario.paceMs - since()));
        } else {
          res.end();
          record.at.end = since();
          const used = process.cpuUsage(cpu);
          record.serverCpuUs = used.user + used.system;
          writing--;
          settled();
        }
      };
      tick();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.on('connection', (socket) => socket.setNoDelay(true));
  server.listen(0, '127.0.0.1', () => process.send({ type: 'listening', port: server.address().port }));

  process.on('message', (message) => {
    if (message?.type === 'take') {
      waiting.push(message.id);
      settled();
    } else if (message?.type === 'stop') {
      server.close();
      server.closeAllConnections?.();
      process.disconnect();
    }
  });
  process.on('disconnect', () => process.exit(0)); // the parent went away: so does the server
}

/**
 * The API a request's path (and query) is for — POST /v1/chat/completions (OpenAI Chat Completions),
 * /v1/messages (Anthropic), /v1/responses (OpenAI Responses), /v1beta/models/MODEL:streamGenerateContent?alt=sse
 * (Gemini) — and, for Gemini, the model the path names.
 */
function route(url) {
  const gemini = /^\/v1beta\/models\/([^/:?]+):streamGenerateContent\?alt=sse$/.exec(url);
  if (gemini) return { api: 'gemini', model: decodeURIComponent(gemini[1]) };
  return { api: { '/v1/chat/completions': 'openai', '/v1/messages': 'anthropic', '/v1/responses': 'responses' }[url] };
}

/** Checks a request; returns its scenario, turn and whether the client asked for the usage, or an error. */
function check(api, request, model = request.model) {
  if (api === 'gemini') return checkGemini(request, model);
  const scenario = W.SCENARIOS[request.model];
  if (!scenario) return { error: `unknown model ${request.model}` };
  if (request.stream !== true) return { error: 'not a streaming request' };
  const tools = (request.tools ?? []).map((tool) => (api === 'openai' ? tool.function?.name : tool.name)).sort();
  // the Responses API: stateless requests only, the whole history in `input` (no stored response to refer to)
  if (api === 'responses' && (request.store !== false || request.previous_response_id != null)) return { error: 'not a stateless request (store: false, no previous_response_id)' };
  if (tools.join(',') !== 'lookup,write_file') return { error: `tools declared: ${tools.join(',') || 'none'}` };
  const results = [];
  const calls = [];
  for (const message of (api === 'responses' ? request.input : request.messages) ?? []) {
    if (api === 'responses') {
      if (message.type === 'function_call_output') results.push(message.call_id);
      if (message.type === 'function_call') calls.push(message.call_id);
    } else if (api === 'openai') {
      if (message.role === 'tool') results.push(message.tool_call_id);
      if (message.role === 'assistant') for (const call of message.tool_calls ?? []) calls.push(call.id);
    } else if (Array.isArray(message.content)) {
      for (const block of message.content) {
        if (block.type === 'tool_result') results.push(block.tool_use_id);
        if (block.type === 'tool_use') calls.push(block.id);
      }
    }
  }
  const turn = 1 + results.length / 2;
  if (!Number.isInteger(turn) || turn > scenario.turns) return { error: `${results.length} tool results in the history` };
  const expected = [];
  for (let t = 1; t < turn; t++) expected.push(W.ids(api, t).a, W.ids(api, t).b);
  const same = (list) => list.slice().sort().join(',') === expected.slice().sort().join(',');
  if (!same(results) || !same(calls)) return { error: `the history's calls (${calls}) and results (${results}) are not the earlier turns' (${expected})` };
  const includeUsage = api !== 'openai' || request.stream_options?.include_usage === true; // the other two APIs always send it
  return { scenario, turn, includeUsage };
}

/**
 * P20: a Gemini request (the path says the model and that it streams): the two tools as functionDeclarations,
 * a history whose functionResponses answer the earlier turns' calls (by name: the wire's calls have no id),
 * and each earlier turn's call A sent back with its thought signature, unchanged, as the API requires.
 */
function checkGemini(request, model) {
  const scenario = W.SCENARIOS[model];
  if (!scenario) return { error: `unknown model ${model}` };
  const declared = (request.tools ?? []).flatMap((tool) => tool.functionDeclarations ?? []).map((declaration) => declaration.name).sort();
  if (declared.join(',') !== 'lookup,write_file') return { error: `tools declared: ${declared.join(',') || 'none'}` };
  const calls = [];
  const results = [];
  const signatures = [];
  for (const content of request.contents ?? []) {
    for (const part of content.parts ?? []) {
      if (content.role === 'model' && part.functionCall) {
        calls.push(part.functionCall.name);
        if (part.functionCall.name === 'lookup') signatures.push(part.thoughtSignature);
      }
      if (content.role === 'user' && part.functionResponse) results.push(part.functionResponse.name);
    }
  }
  const turn = 1 + results.length / 2;
  if (!Number.isInteger(turn) || turn > scenario.turns) return { error: `${results.length} function responses in the history` };
  const expected = [];
  for (let t = 1; t < turn; t++) expected.push('lookup', 'write_file');
  const same = (list) => list.slice().sort().join(',') === expected.slice().sort().join(',');
  if (!same(results) || !same(calls)) return { error: `the history's calls (${calls}) and responses (${results}) are not the earlier turns' (${expected})` };
  const unsigned = signatures.findIndex((signature, n) => signature !== W.geminiSignature(n + 1));
  if (unsigned >= 0) return { error: `Function call is missing a thought_signature in functionCall parts (turn ${unsigned + 1}'s lookup)` };
  return { scenario, turn, includeUsage: true };
}

// ---------------------------------------------------------------------------------------------
// the parent

/** Starts the server in a child process; resolves with its handle once it listens. */
function start() {
  const epoch = process.hrtime.bigint();
  const child = fork(__filename, ['--serve', String(epoch)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [] });
  const waiting = new Map();
  let nextId = 0;
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`w6 server: the server process ended (code ${code}) before it listened`)));
    child.on('message', (message) => {
      if (message.type === 'records') {
        waiting.get(message.id)?.(message.records);
        waiting.delete(message.id);
      } else if (message.type === 'listening') {
        child.removeAllListeners('exit');
        resolve({
          baseURL: `http://127.0.0.1:${message.port}`,
          /** ms since the epoch, on the server's clock */
          now: () => Number(process.hrtime.bigint() - epoch) / 1e6,
          /** The records of the requests since the last take, in order. */
          take: () =>
            new Promise((done) => {
              const id = nextId++;
              waiting.set(id, done);
              child.send({ type: 'take', id });
            }),
          stop: () =>
            new Promise((done) => {
              child.once('exit', done);
              child.send({ type: 'stop' });
            }),
        });
      }
    });
  });
}

// ---------------------------------------------------------------------------------------------
// the same replies without a socket, for (a') in workload.js

/**
 * A stand-in for the server inside the workload process: `install()` replaces the global `fetch` (which
 * every contender reads its replies through: rx-tool-loop's providers, the `openai` and
 * `@anthropic-ai/sdk` clients inside pi-ai, the AI SDK's providers) with one that checks the request as
 * the server does and answers with the same events from memory, one per macrotask (setImmediate), so
 * that each event is a read of its own; `uninstall()` puts the real one back. No pacing: what is
 * measured is CPU. Its own work per event (encode one string, enqueue it) runs in the same process and
 * is counted for every contender alike; the floor's figure bounds it.
 */
function inMemory() {
  const epoch = process.hrtime.bigint();
  const since = () => Number(process.hrtime.bigint() - epoch) / 1e6;
  const encoder = new TextEncoder();
  let records = [];
  let real;
  const fakeFetch = async (url, init) => {
    // a client may hand fetch a Request (as @google/genai does) rather than a URL and its init
    const asked = url instanceof Request ? url : undefined;
    const where = new URL(asked ? asked.url : String(url));
    const { api, model } = route(where.pathname + where.search);
    let request;
    try {
      request = JSON.parse(init?.body ?? (asked ? await asked.text() : undefined));
    } catch {
      request = undefined;
    }
    const checked = api && request ? check(api, request, model) : { error: `unexpected request to ${url}` };
    if (checked.error) {
      records.push({ api, error: checked.error });
      return new Response(JSON.stringify({ error: { type: 'invalid_request_error', message: `w6 in memory: ${checked.error}` } }), { status: 400, headers: { 'content-type': 'application/json' } });
    }
    const { scenario, turn, includeUsage } = checked;
    const events = W.reply(api, scenario, turn, { includeUsage });
    const record = { api, scenario: scenario.name, turn, includeUsage, chunks: events.length, bytes: 0, at: { first: since() }, serverCpuUs: 0 };
    records.push(record);
    let i = 0;
    const body = new ReadableStream({
      async pull(controller) {
        await new Promise((resolve) => setImmediate(resolve));
        if (i === events.length) {
          record.at.end = since();
          return controller.close();
        }
        const { sse, tag } = events[i++];
        record.bytes += sse.length;
        controller.enqueue(encoder.encode(sse));
        if (tag) record.at[tag] = since();
      },
      cancel() {
        if (i < events.length) record.aborted = true;
      },
    });
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream; charset=utf-8' } });
  };
  return {
    baseURL: 'http://127.0.0.1:9', // never reached: the global fetch answers
    now: since,
    take: async () => {
      const taken = records;
      records = [];
      return taken;
    },
    install() {
      real = globalThis.fetch;
      globalThis.fetch = fakeFetch;
    },
    uninstall() {
      globalThis.fetch = real;
    },
  };
}

module.exports = { start, check, inMemory };

if (require.main === module && process.argv[2] === '--serve') serve(BigInt(process.argv[3]));
