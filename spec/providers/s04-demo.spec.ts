import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { LoopbackServer, closedPort, fixture } from './loopback-server';

const root = join(__dirname, '..', '..');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `npm run s04 -- ARGS`, as a child process (asynchronous: the loopback server lives in this one). */
function s04(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [require.resolve('ts-node/dist/bin.js'), 'examples/s04.ts', ...args], {
      cwd: root,
      env: { ...process.env, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const transcript = `s04: Evented Tool Loop

[user]
现在几点？

message_start
tool_call: current_time
tool_result: 2026-01-01T00:00:00Z
message_end: toolUse
message_start
text_delta: 现在是 
text_delta: 2026-01-01T00:00:00Z
text_delta: 。
message_end: stop

[assistant]
content: 现在是 2026-01-01T00:00:00Z。
stopReason: stop

[state]
user -> assistant -> toolResult -> assistant
`;

let server: LoopbackServer;
beforeAll(async () => {
  server = await LoopbackServer.start();
});
afterAll(() => server.stop());
beforeEach(() => server.reset());

describe('npm run s04 against a real API', () => {
  it('--provider openai talks to --base-url with --model and the key from OPENAI_API_KEY', async () => {
    server.reply({ body: fixture('openai/s04-tool-call.sse') }, { body: fixture('openai/s04-answer.sse') });
    const run = await s04(['--provider', 'openai', '--base-url', `${server.url}/v1`, '--model', 'gpt-test'], { OPENAI_API_KEY: 'sk-demo-key' });
    expect(run).toEqual({ code: 0, stdout: transcript, stderr: '' });
    expect(server.requests.map((request) => [request.path, request.headers.authorization, request.json.model])).toEqual([
      ['/v1/chat/completions', 'Bearer sk-demo-key', 'gpt-test'],
      ['/v1/chat/completions', 'Bearer sk-demo-key', 'gpt-test'],
    ]);
  }, 30_000);

  it('P18: --api ai-sdk runs the same conversation through @ai-sdk/openai and languageModelProvider, on --base-url with --model and the key from OPENAI_API_KEY', async () => {
    server.reply({ body: fixture('openai/s04-tool-call.sse') }, { body: fixture('openai/s04-answer.sse') });
    const run = await s04(['--api', 'ai-sdk', '--base-url', `${server.url}/v1`, '--model', 'gpt-test'], { OPENAI_API_KEY: 'sk-demo-key' });
    expect(run).toEqual({ code: 0, stdout: transcript, stderr: '' });
    expect(server.requests.map((request) => [request.path, request.headers.authorization, request.json.model])).toEqual([
      ['/v1/chat/completions', 'Bearer sk-demo-key', 'gpt-test'],
      ['/v1/chat/completions', 'Bearer sk-demo-key', 'gpt-test'],
    ]);
  }, 30_000);

  it('P13: --api responses talks to --base-url/responses with --model and the key from OPENAI_API_KEY, statelessly', async () => {
    server.reply({ body: fixture('openai-responses/s04-tool-call.sse') }, { body: fixture('openai-responses/s04-answer.sse') });
    const run = await s04(['--api', 'responses', '--base-url', `${server.url}/v1`, '--model', 'gpt-test'], { OPENAI_API_KEY: 'sk-demo-key' });
    expect(run).toEqual({ code: 0, stdout: transcript, stderr: '' });
    expect(server.requests.map((request) => [request.path, request.headers.authorization, request.json.model, request.json.store])).toEqual([
      ['/v1/responses', 'Bearer sk-demo-key', 'gpt-test', false],
      ['/v1/responses', 'Bearer sk-demo-key', 'gpt-test', false],
    ]);
    expect((server.requests[1]!.json.input as unknown[]).length).toBe(3); // the question, the call, its result
  }, 30_000);

  it('--api is for OpenAI only: a usage error with the usage line', async () => {
    const run = await s04(['--provider', 'anthropic', '--api', 'responses', '--model', 'm'], {});
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^s04: --api is for --provider openai\nusage: npm run s04 \[-- --provider openai\|anthropic\|gemini \[--api chat\|responses\|ai-sdk\]/);
  }, 30_000);

  it('P17: --provider gemini talks to --base-url/models/MODEL:streamGenerateContent with the key from GEMINI_API_KEY', async () => {
    // Gemini's wire: one data: line an event, CRLF CRLF between events, no terminal event
    const data = (parts: object[], finishReason?: string) =>
      `data: ${JSON.stringify({ candidates: [{ content: { role: 'model', parts }, ...(finishReason !== undefined && { finishReason }), index: 0 }], usageMetadata: { promptTokenCount: 20, candidatesTokenCount: 5, totalTokenCount: 25 } })}\r\n\r\n`;
    server.reply(
      { body: data([{ functionCall: { name: 'current_time', args: {} }, thoughtSignature: 'c2lnLXMwNA==' }], 'STOP') },
      { body: [data([{ text: '现在是 ' }]), data([{ text: '2026-01-01T00:00:00Z' }]), data([{ text: '。' }], 'STOP')] },
    );
    const run = await s04(['--provider', 'gemini', '--base-url', `${server.url}/v1beta`, '--model', 'gemini-test'], { GEMINI_API_KEY: 'gemini-demo-key' });
    expect(run).toEqual({ code: 0, stdout: transcript, stderr: '' });
    expect(server.requests.map((request) => [request.path, request.headers['x-goog-api-key']])).toEqual([
      ['/v1beta/models/gemini-test:streamGenerateContent?alt=sse', 'gemini-demo-key'],
      ['/v1beta/models/gemini-test:streamGenerateContent?alt=sse', 'gemini-demo-key'],
    ]);
    expect((server.requests[1]!.json.contents as { parts: object[] }[])[1]!.parts).toEqual([{ functionCall: { name: 'current_time', args: {} }, thoughtSignature: 'c2lnLXMwNA==' }]);
  }, 30_000);

  it('--provider anthropic talks to --base-url with --model and the key from ANTHROPIC_API_KEY', async () => {
    server.reply({ body: fixture('anthropic/s04-tool-use.sse') }, { body: fixture('anthropic/s04-answer.sse') });
    const run = await s04(['--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test'], { ANTHROPIC_API_KEY: 'sk-ant-demo-key' });
    expect(run).toEqual({ code: 0, stdout: transcript, stderr: '' });
    expect(server.requests.map((request) => [request.path, request.headers['x-api-key'], request.json.model])).toEqual([
      ['/v1/messages', 'sk-ant-demo-key', 'claude-test'],
      ['/v1/messages', 'sk-ant-demo-key', 'claude-test'],
    ]);
  }, 30_000);

  it('an unreachable endpoint prints one line to stderr and exits non-zero', async () => {
    const port = await closedPort();
    const run = await s04(['--provider', 'openai', '--base-url', `http://127.0.0.1:${port}/v1`, '--model', 'm'], {});
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `s04: request to http://127.0.0.1:${port}/v1/chat/completions failed: fetch failed (connect ECONNREFUSED 127.0.0.1:${port})\n`,
    );
  }, 30_000);

  it('a provider without --model is a usage error', async () => {
    const run = await s04(['--provider', 'anthropic'], {});
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^s04: --provider anthropic needs --model\nusage: /);
  }, 30_000);
});
