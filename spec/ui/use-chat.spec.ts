/**
 * U6, the useChat half: the real `@ai-sdk/react` `useChat` (React 19, `DefaultChatTransport`), bundled here by esbuild,
 * in Chromium (Debian's, driven by playwright-core), against a node:http server on 127.0.0.1 that serves the loop through
 * `toUiMessageStream` and `writeSse` (U3). The page types a prompt, sees the text stream and a tool part, approves a call
 * (H8: `tool-approval-request`, the page's button, `addToolApprovalResponse`, the next request, `fromUiMessages`, turn 0
 * runs it), presses Stop during a slow reply and a slow tool — and the server's provider and tool see their teardown.
 */
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { Observable } from 'rxjs';
import type { UIMessage } from 'ai';
import { runEventedToolLoop, ToolRegistry } from '../../src/index.js';
import type { AgentMessage, ApprovalAnswer, Provider, ProviderEvent } from '../../src/index.js';
import { fromUiMessages, toUiMessageStream, writeSse } from '../../src/ui/index.js';
import { browserTest, executablePath } from '../support/chromium.js';

const root = join(__dirname, '..', '..');


/** What the server saw, in order: requests, the provider's and the tools' lives. */
const log: string[] = [];

/** Provider events on a timer, one every `ms`; unsubscribing is logged (the teardown the spec waits for). */
function paced(name: string, events: readonly ProviderEvent[], ms: number, forever?: () => ProviderEvent): Observable<ProviderEvent> {
  return new Observable<ProviderEvent>((subscriber) => {
    let at = 0;
    const timer = setInterval(() => {
      if (at < events.length) subscriber.next(events[at++]!);
      else if (forever !== undefined) subscriber.next(forever());
      else subscriber.complete();
    }, ms);
    return () => {
      clearInterval(timer);
      if (!subscriber.closed || at < events.length || forever !== undefined) log.push(`${name}: provider torn down`);
    };
  });
}

/** The model, scripted on what it is asked: the weather (a call that needs approval), its answer, a slow search, a reply. */
const provider: Provider = ({ messages }) => {
  const last = messages[messages.length - 1]!;
  const prompt = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  if (last.role === 'toolResult') return paced('answer', [{ type: 'message_start' }, { type: 'text_delta', text: 'It is ' }, { type: 'text_delta', text: last.content }, { type: 'text_delta', text: '.' }, { type: 'message_end', stopReason: 'stop' }], 20);
  if (prompt.includes('weather')) {
    return paced('weather', [
      { type: 'message_start' },
      { type: 'text_delta', text: 'Let me check ' },
      { type: 'text_delta', text: 'the weather.' },
      { type: 'tool_call_delta', index: 0, id: 'w1', name: 'weather', argumentsDelta: '{"city":' },
      { type: 'tool_call_delta', index: 0, argumentsDelta: '"Paris"}' },
      { type: 'tool_call', call: { id: 'w1', name: 'weather', input: { city: 'Paris' } } },
      { type: 'message_end', stopReason: 'toolUse', usage: { inputTokens: 12, outputTokens: 7 } },
    ], 20);
  }
  if (prompt.includes('slow')) {
    let n = 0;
    return paced('slow', [{ type: 'message_start' }, { type: 'tool_call', call: { id: 's1', name: 'slow_search', input: { query: 'everything' } } }, { type: 'text_delta', text: 'Searching' }], 30, () => ({ type: 'text_delta', text: ` ${++n}` }));
  }
  return paced('reply', [{ type: 'message_start' }, { type: 'text_delta', text: 'You are welcome.' }, { type: 'message_end', stopReason: 'stop' }], 20);
};

const registry = new ToolRegistry()
  .register({ name: 'weather', description: 'the weather in a city', input: { city: 'a city' }, handler: ({ city }) => (log.push(`weather ran for ${city}`), `sunny in ${city}`) })
  .register({
    name: 'slow_search',
    description: 'a search that takes its time',
    input: { query: 'what to find' },
    handler: (_input, { signal }) =>
      new Promise<string>((_resolve, reject) => {
        log.push('slow_search started');
        signal.addEventListener('abort', () => (log.push('slow_search torn down'), reject(new Error('aborted'))));
      }),
  });

async function body(request: IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of request) text += String(chunk);
  return JSON.parse(text);
}

/** The chat endpoint: one request, one run on the request's history and decisions, one SSE response. */
async function chat(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const { messages: uiMessages } = (await body(request)) as { messages: UIMessage[] };
  const { messages, decisions } = fromUiMessages(uiMessages);
  const answers: ApprovalAnswer[] = [];
  decisions.subscribe((answer) => answers.push(answer));
  log.push(`request: ${roles(messages)}${answers.length === 0 ? '' : `; decisions ${answers.map((a) => `${a.toolCallId}=${String(a.decision)}`).join(',')}`}`);
  const events$ = runEventedToolLoop({ provider, registry, messages, approvals: { needsApproval: (call) => call.name === 'weather', decisions } });
  writeSse(response, events$.pipe(toUiMessageStream()), { protocol: 'ui-message-stream' });
}

function roles(messages: readonly AgentMessage[]): string {
  return messages.map((m) => (m.role === 'toolResult' ? `toolResult ${m.content}` : m.role)).join(', ');
}

let server: Server;
let browser: Browser | undefined;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  // the page as an application bundles it; `ai` is @ai-sdk/react's own copy, the one useChat runs on
  const nestedAi = join(root, 'node_modules/@ai-sdk/react/node_modules/ai');
  const bundled = await build({
    entryPoints: [join(__dirname, 'support/use-chat-page.ts')],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'chrome120',
    define: { 'process.env.NODE_ENV': '"production"' },
    ...(existsSync(nestedAi) ? { alias: { ai: nestedAi } } : {}),
    logLevel: 'silent',
  });
  const script = bundled.outputFiles[0]!.text;
  server = createServer((request, response) => {
    if (request.method === 'POST' && request.url === '/api/chat') return void chat(request, response).catch((error: unknown) => response.writeHead(500).end(String(error)));
    if (request.url === '/page.js') return void response.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><meta charset="utf-8"><div id="root"></div><script src="/page.js"></script>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  if (executablePath === undefined) return;
  browser = await chromium.launch({ executablePath });
  page = await browser.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => message.type() === 'error' && pageErrors.push(message.text()));
  await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Waits until the server's log holds `entry`. */
async function logged(entry: string): Promise<void> {
  for (let waited = 0; !log.includes(entry); waited += 20) {
    if (waited > 5_000) throw new Error(`the server never logged "${entry}"; it logged: ${log.join(' | ')}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const assistantText = () => page.locator('.message[data-role=assistant]').last().locator('.text').allTextContents();

describe('useChat in Chromium against the loop (U6)', () => {
  browserTest('U6: a prompt streams its text and a tool part; the call waits for approval, the page approves it, the next request runs it (H8)', async () => {
    await page.fill('#prompt', 'What is the weather in Paris?');
    await page.click('#send');
    const weather = page.locator('.tool[data-tool=weather]');
    await weather.and(page.locator('[data-state=approval-requested]')).waitFor({ timeout: 5_000 });
    expect(await assistantText()).toEqual(['Let me check the weather.']);
    await page.locator('#status', { hasText: 'ready' }).waitFor({ timeout: 5_000 });
    expect(log).toEqual(['request: user']); // the first run ended at the approval: the tool did not run
    await page.click('.approve');
    await weather.and(page.locator('[data-state=output-available]')).waitFor({ timeout: 5_000 });
    await page.locator('#status', { hasText: 'ready' }).waitFor({ timeout: 5_000 });
    expect(await weather.locator('.output').textContent()).toBe('sunny in Paris');
    expect(await assistantText()).toEqual(['Let me check the weather.', 'It is sunny in Paris.']);
    expect(log).toEqual(['request: user', 'request: user, assistant; decisions w1=true', 'weather ran for Paris']);
    expect(await page.locator('.message[data-role=assistant]').count()).toBe(1); // the answer continued the same message
  }, 30_000);

  browserTest('U6: Stop during a slow reply and a slow tool — the server\'s provider and tool see their teardown; the next prompt goes on from there', async () => {
    log.length = 0;
    await page.fill('#prompt', 'a slow search please');
    await page.click('#send');
    await page.locator('.tool[data-tool=slow_search][data-state=input-available]').waitFor({ timeout: 5_000 });
    await page.locator('.message[data-role=assistant] .text', { hasText: 'Searching 1 2' }).last().waitFor({ timeout: 5_000 });
    expect(log).toEqual(['request: user, assistant, toolResult sunny in Paris, assistant, user', 'slow_search started']);
    await page.click('#stop');
    await logged('slow: provider torn down');
    await logged('slow_search torn down');
    await page.locator('#status', { hasText: 'ready' }).waitFor({ timeout: 5_000 });
    // the stopped call has no output in the page: the next request gives it R11's result, and the history is valid
    await page.fill('#prompt', 'thanks');
    await page.click('#send');
    await page.locator('.message[data-role=assistant] .text', { hasText: 'You are welcome.' }).waitFor({ timeout: 5_000 });
    expect(log).toContain('request: user, assistant, toolResult sunny in Paris, assistant, user, assistant, toolResult error: aborted, user');
    expect(pageErrors).toEqual([]);
  }, 30_000);
});
