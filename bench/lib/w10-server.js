'use strict';
// W10's loopback model server, in a child process of its own (its CPU is not the client's: the
// workload's `process.cpuUsage()` counts the contender and its HTTP client alone). It answers POST
// /v1/chat/completions with OpenAI Chat Completions SSE at a model's pace: one event every `PACE_MS`
// (50 a second) per stream, each stream on its own timer, a late timer writing what is due at once.
//
// A conversation is two turns: turn 1 streams TEXT text chunks, then one `lookup` call in three chunks
// (id and name, then two pieces of arguments), the finish and usage chunks and [DONE]; turn 2 (the
// history holds the tool's result) streams TEXT text chunks, the finish, usage and [DONE]. Each text
// chunk is unique: ` x<conversation>.<turn>.<k>` (the conversation is in the model's name, `w10-<n>`), so
// the client can pair the bytes it received with the text event its consumer saw.
//
// The hold: a model named `w10-hold-<n>` stops turn 1 after HOLD text chunks until GET /release. The
// workload holds every conversation there, reads its memory with all of them open, then releases them.
// Every request is checked (the tool declared, streaming, the history's call answered); a bad one gets a
// 400 and the contender fails.
const http = require('node:http');

const PACE_MS = 20;
const TEXT = 10;
const HOLD = 5;

const chunk = (model, delta, finish = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-w10', object: 'chat.completion.chunk', created: 0, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** The SSE events of one reply (strings), and the index after which a held reply waits. */
function reply(model, conversation, turn, includeUsage) {
  const events = [];
  for (let k = 0; k < TEXT; k++) events.push(chunk(model, k === 0 ? { role: 'assistant', content: ` x${conversation}.${turn}.${k}` } : { content: ` x${conversation}.${turn}.${k}` }));
  if (turn === 1) {
    events.push(chunk(model, { tool_calls: [{ index: 0, id: `call_w10_${conversation}`, type: 'function', function: { name: 'lookup', arguments: '' } }] }));
    events.push(chunk(model, { tool_calls: [{ index: 0, function: { arguments: '{"query":' } }] }));
    events.push(chunk(model, { tool_calls: [{ index: 0, function: { arguments: '"weather in Paris"}' } }] }));
  }
  events.push(chunk(model, {}, turn === 1 ? 'tool_calls' : 'stop'));
  if (includeUsage) events.push(`data: ${JSON.stringify({ id: 'chatcmpl-w10', object: 'chat.completion.chunk', created: 0, model, choices: [], usage: { prompt_tokens: 20, completion_tokens: TEXT + 5, total_tokens: TEXT + 25 } })}\n\n`);
  events.push('data: [DONE]\n\n');
  return events;
}

/** The conversation and turn of a request, or an error. */
function check(request) {
  const match = /^w10-(hold-)?(\d+)$/.exec(request?.model ?? '');
  if (!match) return { error: `unknown model ${request?.model}` };
  if (request.stream !== true) return { error: 'not a streaming request' };
  const tools = (request.tools ?? []).map((tool) => tool.function?.name).join(',');
  if (tools !== 'lookup') return { error: `tools declared: ${tools || 'none'}` };
  const conversation = Number(match[2]);
  const results = (request.messages ?? []).filter((message) => message.role === 'tool');
  if (results.length > 1) return { error: `${results.length} tool results` };
  if (results.length === 1 && results[0].tool_call_id !== `call_w10_${conversation}`) return { error: `a result for ${results[0].tool_call_id}` };
  return { conversation, turn: results.length + 1, hold: match[1] !== undefined, includeUsage: request.stream_options?.include_usage === true };
}

function serve() {
  let held = [];
  let served = 0;
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/release') {
      const waiting = held;
      held = [];
      for (const resume of waiting) resume();
      res.end(String(waiting.length));
      return;
    }
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (piece) => (body += piece));
    req.on('end', () => {
      let request;
      try {
        request = JSON.parse(body);
      } catch {}
      const checked = req.url === '/v1/chat/completions' ? check(request) : { error: `unexpected request ${req.method} ${req.url}` };
      if (checked.error) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { type: 'invalid_request_error', message: `w10 server: ${checked.error}` } }));
        return;
      }
      served++;
      const events = reply(request.model, checked.conversation, checked.turn, checked.includeUsage);
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
      res.flushHeaders();
      let i = 0;
      let first = performance.now();
      let closed = false;
      let holding = checked.hold && checked.turn === 1;
      res.on('close', () => (closed = true));
      const tick = () => {
        if (closed) return;
        while (i < events.length && first + i * PACE_MS <= performance.now() + 0.05) {
          if (holding && i === HOLD) {
            holding = false;
            held.push(() => {
              first = performance.now() - i * PACE_MS + PACE_MS; // go on at the pace, one interval after the release
              setTimeout(tick, PACE_MS);
            });
            return;
          }
          res.write(events[i++]);
        }
        if (i < events.length) setTimeout(tick, Math.max(0, first + i * PACE_MS - performance.now()));
        else res.end();
      };
      tick();
    });
  });
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 120_000;
  server.requestTimeout = 0;
  server.on('connection', (socket) => socket.setNoDelay(true));
  server.listen({ port: 0, host: '127.0.0.1', backlog: 16_384 }, () => process.send({ type: 'listening', port: server.address().port }));
  process.on('message', (message) => {
    if (message?.type === 'stop') {
      process.send({ type: 'stopped', served, cpu: process.cpuUsage() });
      server.close();
      server.closeAllConnections();
      process.disconnect();
    }
  });
  process.on('disconnect', () => process.exit(0)); // the parent went away: so does the server
}

/** Starts the server in a child process; resolves with its base URL and `stop()` once it listens. */
function start() {
  const { fork } = require('node:child_process');
  const child = fork(__filename, ['--serve'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`w10 server: the server process ended (code ${code}) before it listened`)));
    child.once('message', (message) => {
      child.removeAllListeners('exit');
      resolve({
        baseURL: `http://127.0.0.1:${message.port}`,
        pid: child.pid,
        /** Stops the server; resolves with the requests it served and its CPU time (µs). */
        stop: () =>
          new Promise((done) => {
            let stopped;
            child.once('message', (m) => (stopped = m));
            child.once('exit', () => done(stopped));
            child.send({ type: 'stop' });
          }),
      });
    });
  });
}

module.exports = { start, PACE_MS, TEXT, HOLD };

if (require.main === module && process.argv[2] === '--serve') serve();
