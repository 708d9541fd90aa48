/**
 * U7: `npm run ui`'s chat in a real headless Chromium (Debian's `chromium` from the PATH, driven by
 * playwright-core): the page types a prompt and sees the tool call and the streamed answer; the stop button
 * aborts the request and the server's loop is unsubscribed, its tool torn down. The server runs here, on
 * 127.0.0.1, as examples/ui.ts starts it; the script prints its URL (a spec spawns it).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Observable } from 'rxjs';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { ToolRegistry } from 'rx-tool-loop';
import { UiServer, scriptedModel, startUi } from '../../examples/ui.js';
import { browserTest, executablePath } from '../support/chromium.js';

const root = join(__dirname, '..', '..');


describe('examples/ui.ts (npm run ui)', () => {
  let browser: Browser | undefined;
  let server: UiServer | undefined;
  const seen: string[] = [];
  const errors: string[] = [];

  beforeAll(async () => {
    // the demo's tool, watched: it takes a second unless it is torn down first
    const registry = () =>
      new ToolRegistry().register({
        name: 'current_time',
        description: 'Returns the current time as an ISO 8601 string',
        input: {},
        handler: (_input, context) =>
          new Observable<string>((subscriber) => {
            seen.push('tool started');
            context.signal.addEventListener('abort', () => seen.push('tool signal aborted'));
            const timer = setTimeout(() => {
              subscriber.next('2026-01-01T00:00:00Z');
              subscriber.complete();
            }, 1_000);
            return () => clearTimeout(timer);
          }),
      });
    server = await startUi({ provider: scriptedModel, registry });
    if (executablePath !== undefined) browser = await chromium.launch({ executablePath });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  async function open(): Promise<Page> {
    const page = await browser!.newPage();
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    await page.goto(server!.url);
    return page;
  }

  browserTest(
    'U7: typing a prompt shows the tool call with its state, then the streamed answer; a second prompt continues the conversation',
    async () => {
      const page = await open();
      // every text the answer shows on its way, as the page renders it
      await page.evaluate(() => {
        const texts: string[] = [];
        (window as unknown as { texts: string[] }).texts = texts;
        new MutationObserver(() => {
          const text = document.querySelector('.turn .text')?.textContent ?? '';
          if (text !== '' && texts.at(-1) !== text) texts.push(text);
        }).observe(document.querySelector('#log')!, { subtree: true, childList: true, characterData: true });
      });
      await page.fill('#prompt', 'What time is it?');
      await page.click('#send');
      await page.waitForSelector('.tools li[data-state="running"]');
      await page.waitForFunction(() => document.querySelector('#status')?.textContent === 'done');
      expect(await page.textContent('.turn .text')).toBe('The tool says it is 2026-01-01T00:00:00Z.');
      // streamed: the answer grew word by word before it was whole
      const texts = await page.evaluate(() => (window as unknown as { texts: string[] }).texts);
      const whole = 'The tool says it is 2026-01-01T00:00:00Z.';
      expect(texts.at(-1)).toBe(whole);
      // shown in several steps (a busy machine may deliver two words at once), each a longer start of the answer
      expect(texts.length).toBeGreaterThanOrEqual(3);
      texts.forEach((text, index) => expect(whole.startsWith(text) && (index === 0 || text.length > texts[index - 1]!.length)).toBe(true));
      expect(await page.textContent('.tools li')).toBe('current_time — done');
      await page.fill('#prompt', 'And now?');
      await page.click('#send');
      await page.waitForFunction(() => document.querySelectorAll('.turn').length === 2 && document.querySelector('#status')?.textContent === 'done');
      expect(await page.textContent('.turn:nth-of-type(2) .text')).toBe('The tool says it is 2026-01-01T00:00:00Z.');
      expect(errors).toEqual([]);
      await page.close();
    },
    60_000,
  );

  browserTest(
    "U7: the stop button aborts the request: the server's loop is unsubscribed and its tool torn down",
    async () => {
      seen.length = 0;
      const page = await open();
      await page.fill('#prompt', 'What time is it?');
      await page.click('#send');
      await page.waitForSelector('.tools li[data-state="running"]');
      await page.click('#stop');
      await page.waitForFunction(() => document.querySelector('#status')?.textContent === 'stopped');
      const start = Date.now();
      while (!seen.includes('tool signal aborted') && Date.now() - start < 5_000) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(seen).toEqual(['tool started', 'tool signal aborted']);
      expect(await page.isEnabled('#send')).toBe(true);
      expect(errors).toEqual([]);
      await page.close();
    },
    60_000,
  );

  it('U7: npm run ui prints a 127.0.0.1 URL that serves the page', async () => {
    const child = spawn(process.execPath, [require.resolve('ts-node/dist/bin.js'), 'examples/ui.ts'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.setEncoding('utf8');
        child.stdout.on('data', (chunk: string) => {
          out += chunk;
          const match = /rx-tool-loop chat: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
          if (match) resolve(match[1]!);
        });
        child.on('exit', (code) => reject(new Error(`examples/ui.ts exited with ${code}: ${out}`)));
      });
      const html = await (await fetch(url)).text();
      expect(html).toContain('<script src="/page.js"></script>');
      expect((await fetch(`${url}page.js`)).headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    } finally {
      process.kill(child.pid!);
    }
  }, 60_000);
});
