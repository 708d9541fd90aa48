/**
 * V4: the playground in a real headless Chromium — Debian's `chromium` from the PATH, driven by
 * playwright-core (which never downloads a browser). The page is built and served on 127.0.0.1 here; it
 * runs the s04 scenario (marbles/01-s04-current-time) live (V1, V2); the lanes and the letters it draws
 * are the scenario's own lines; the copied marble test (V3, T3) records the scenario's loop line up to
 * the choice of letters, and passes when run; no console error; a screenshot for people to look at is
 * written to playground/screenshot.png (ignored by git). A second run goes to an OpenAI-compatible
 * server on loopback, started here. Needs `npm run build` first (`npm test` does it).
 */
import { readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { transform } from 'esbuild';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { TestScheduler } from 'rxjs/testing';
import type { RunHelpers } from 'rxjs/testing';
import type { ProviderEvent } from 'rx-tool-loop';
import { describeEvent } from 'rx-tool-loop/testing';
import { buildPlayground, playgroundDir, readScenario, root, scenarioIds } from '../playground/build.js';
import { serveFolder } from '../playground/server.js';
import type { Served } from '../playground/server.js';
import { browserTest, executablePath } from './support/chromium.js';

// the scenario's own loop line and legend, as it hands them to expectObservable
const mockScenarios: { name: string; body: (helpers: RunHelpers) => void }[] = [];
jest.mock('../marbles/support/scenario.js', () => ({
  scenario: (name: string, body: (helpers: RunHelpers) => void) => mockScenarios.push({ name, body }),
}));

const S04 = '01-s04-current-time';
const SCREENSHOT = join(playgroundDir, 'screenshot.png');
const AGENT_SCREENSHOT = join(playgroundDir, 'screenshot-agent-tool.png');


/** What a lane of the page draws: from its data attributes, and the marbles in it. */
interface DrawnLane {
  kind: string;
  label: string;
  line: string;
  runs: string;
  /** V5: how deep an agent tool's lanes are nested (0 at the top) */
  depth: number;
  marbles: { letter: string; frame: number; text: string }[];
}

function drawnLanes(page: Page): Promise<DrawnLane[]> {
  return page.$$eval('#diagram g.lane', (lanes) =>
    lanes.map((lane) => ({
      kind: lane.getAttribute('data-kind') ?? '',
      label: lane.getAttribute('data-label') ?? '',
      line: lane.getAttribute('data-line') ?? '',
      runs: lane.getAttribute('data-runs') ?? '',
      depth: Number(lane.getAttribute('data-depth') ?? 0),
      marbles: [...lane.querySelectorAll('g.marble')].map((marble) => ({
        letter: marble.getAttribute('data-letter') ?? '',
        frame: Number(marble.getAttribute('data-frame')),
        text: marble.querySelector('text')?.textContent ?? '|',
      })),
    })),
  );
}

/** Each notification of a marble line: its character and its frame (a group's members share its first frame; spaces are indentation, one frame each). */
function notifications(line: string): { letter: string; frame: number }[] {
  const found: { letter: string; frame: number }[] = [];
  let frame = 0;
  let group = -1;
  for (const c of line) {
    if (c === '(') group = frame;
    else if (c === ')') group = -1;
    else if (c !== ' ' && c !== '-') found.push({ letter: c, frame: group === -1 ? frame : group });
    frame++;
  }
  return found;
}

/** The copied test's recorded loop line, and what each of its letters stands for (the provider's events described, the loop's own given). */
function recorded(test: string): { diagram: string; values: Record<string, string> } {
  const diagram = /^\s+loop:\s+'([^']*)',$/m.exec(test)?.[1];
  const own = /^const loop = loopLegend\(events, (.*)\);$/m.exec(test)?.[1];
  const events = /^const events = \{\n([\s\S]*?)\n\} as const;$/m.exec(test)?.[1];
  if (diagram === undefined || own === undefined || events === undefined) throw new Error(`not a recorded test:\n${test}`);
  const values: Record<string, string> = {};
  for (const [, letter, json] of events.matchAll(/^\s+(\S+): (\{.*\}),$/gm)) values[letter!] = describeEvent(JSON.parse(json!) as ProviderEvent);
  return { diagram, values: { ...values, ...(JSON.parse(own) as Record<string, string>) } };
}

/** The recorded line with the scenario's letters where the descriptions match (spec/testing/round-trip.spec.ts). */
function renamed({ diagram, values }: { diagram: string; values: Record<string, string> }, legend: Record<string, unknown>): string {
  const letterOf = new Map(Object.entries(legend).map(([letter, description]) => [String(description), letter]));
  return [...diagram].map((char) => (char in values ? (letterOf.get(values[char]!) ?? char) : char)).join('');
}

/** Runs a test file the page wrote, under this jest: its one test body, with this file's require and expect. */
async function runRecordedTest(test: string): Promise<void> {
  const { code } = await transform(test, { loader: 'ts', format: 'cjs' });
  let body: (() => void) | undefined;
  const run = new Function('require', 'test', 'expect', code) as (r: NodeRequire, t: (name: string, fn: () => void) => void, e: typeof expect) => void;
  run(require, (_name, fn) => (body = fn), expect);
  expect(body).toBeDefined();
  body!();
}

async function setFrameMs(page: Page, ms: number): Promise<void> {
  await page.$eval('#frame-ms', (input, value) => {
    (input as HTMLInputElement).value = String(value);
    input.dispatchEvent(new Event('input'));
  }, ms);
}

async function runToEnd(page: Page): Promise<string> {
  await page.click('#run');
  await page.waitForFunction(() => document.body.dataset['state'] !== 'running', null, { timeout: 20_000 });
  return page.evaluate(() => document.body.dataset['state'] ?? '');
}

describe('V4: the playground in headless Chromium (V1–V5)', () => {
  let served: Served | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;
  let page: Page;
  const errors: string[] = [];

  beforeAll(async () => {
    if (executablePath === undefined) return;
    served = await serveFolder(await buildPlayground());
    browser = await chromium.launch({ executablePath });
    context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(served.url).origin });
    page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => errors.push(`page: ${error.message}`));
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await served?.close();
  });

  afterEach(() => {
    expect(errors).toEqual([]);
  });

  if (executablePath === undefined) {
    it.skip('needs a chromium executable on the PATH (.ci/run installs it with apt-get install chromium)', () => undefined);
  }

  browserTest(
    'V1, V2: runs s04 live; draws its provider calls, its tool run and the loop as the scenario draws them; hovering shows the event',
    async () => {
      await page.goto(served!.url);
      expect(await page.title()).toBe('rx-tool-loop playground');
      const options = await page.$$eval('#scenario option', (all) => all.map((option) => (option as HTMLOptionElement).value));
      expect(options).toContain(S04);
      expect(options).toEqual(scenarioIds()); // every scenario of marbles/ can be run in the page
      await page.selectOption('#scenario', S04);
      await setFrameMs(page, 40);
      const started = Date.now();
      await page.click('#run');
      // live: the loop's line is drawn while the run goes, a part of it at a time
      const partly = await page.waitForFunction(
        () => {
          const drawnSoFar = document.querySelectorAll('.lane-loop g.marble').length;
          return drawnSoFar > 0 && { drawnSoFar, state: document.body.dataset['state'] };
        },
        null,
        { timeout: 10_000, polling: 10 },
      );
      const seen = (await partly.jsonValue()) as { drawnSoFar: number; state: string };
      expect(seen.state).toBe('running');
      expect(seen.drawnSoFar).toBeLessThan(14);
      await page.waitForFunction(() => document.body.dataset['state'] !== 'running', null, { timeout: 20_000 });
      expect(await page.evaluate(() => document.body.dataset['state'])).toBe('done');
      const frames = Number(/done in (\d+) frames/.exec((await page.textContent('#status')) ?? '')?.[1]);
      expect(frames).toBe(18);
      expect(Date.now() - started).toBeGreaterThanOrEqual(frames * 40 * 0.8); // a frame every 40 ms: live, not at once

      const diagram = Object.fromEntries(readScenario(S04).diagram);
      const lanes = await drawnLanes(page);
      expect(lanes.map(({ kind, label, line, runs }) => ({ kind, label, line, runs: kind === 'loop' ? '' : runs }))).toEqual([
        { kind: 'provider', label: 'turn1', line: diagram['turn1'], runs: diagram['turn1Runs'] },
        { kind: 'tool', label: 'current_time', line: diagram['currentTime'], runs: diagram['currentTimeRuns'] },
        { kind: 'provider', label: 'turn2', line: diagram['turn2'], runs: diagram['turn2Runs'] },
        { kind: 'loop', label: 'loop', line: diagram['loop'], runs: '' },
      ]);
      // the marbles drawn: each letter of each line, at its frame, the letter written in the circle
      for (const lane of lanes) {
        expect(lane.marbles.map(({ letter, frame }) => ({ letter, frame }))).toEqual(notifications(lane.line));
        for (const marble of lane.marbles) expect(marble.text).toBe(marble.letter);
      }
      expect(lanes[3]!.marbles.map((m) => m.letter).join('')).toBe('1sc\u03b3RuE2steFL|');

      // the legend: the scenario's letters, each with its describeEvent line
      const legend = await page.$$eval('#legend li', (items) => items.map((item) => item.textContent));
      expect(legend).toContain('\u03b3tool_start current_time');
      expect(legend).toContain('Rtool_result current_time: 2026-01-01T00:00:00Z');

      // hovering a marble shows the whole event
      await page.hover('.lane-loop g.marble[data-letter="c"]');
      const tip = await page.textContent('#tooltip');
      expect(await page.isVisible('#tooltip')).toBe(true);
      expect(tip).toContain('tool_call current_time');
      expect(tip).toContain('"type": "tool_call"');
      expect(tip).toContain('"name": "current_time"');
      await page.mouse.move(2, 2);

      // the slider replays: at frame 5 only what happened by then is drawn
      await page.$eval('#scrub', (input) => {
        (input as HTMLInputElement).value = '5';
        input.dispatchEvent(new Event('input'));
      });
      const early = await drawnLanes(page);
      expect(early.map((lane) => lane.label)).toEqual(['turn1', 'current_time', 'loop']);
      expect(early[2]!.marbles.map((m) => m.letter).join('')).toBe('1sc\u03b3R');
      await page.$eval('#scrub', (input) => {
        (input as HTMLInputElement).value = (input as HTMLInputElement).max;
        input.dispatchEvent(new Event('input'));
      });
      await page.screenshot({ path: SCREENSHOT, fullPage: true });
      expect(statSync(SCREENSHOT).size).toBeGreaterThan(10_000);
    },
    30_000,
  );

  browserTest(
    'T10: ?scenario=NAME&run=1 runs that scenario at once, drawn with the scenario\'s own letters (its legend)',
    async () => {
      const id = '04-parallel-out-of-order';
      await page.goto(`${served!.url}?scenario=${id}&run=1&frameMs=1`);
      await page.waitForFunction(() => document.body.dataset['state'] === 'done', null, { timeout: 20_000 });
      const diagram = Object.fromEntries(readScenario(id).diagram);
      const loop = (await drawnLanes(page)).find((lane) => lane.kind === 'loop');
      expect(loop?.line).toBe(diagram['loop']);
      const legend = await page.$$eval('#legend li', (items) => items.map((item) => item.textContent));
      expect(legend).toContain('\u03b1tool_start slow');
      expect(legend).toContain('\u03b2tool_start fast');
    },
    30_000,
  );

  browserTest(
    'V5, A4: scenario 28 draws the researcher agent\'s inner loop as a nested lane under its call, its provider calls and its search as lanes of their own; a screenshot',
    async () => {
      const id = '28-agent-tool';
      await page.goto(`${served!.url}?scenario=${id}&run=1&frameMs=5`);
      await page.waitForFunction(() => document.body.dataset['state'] === 'done', null, { timeout: 30_000 });
      const diagram = Object.fromEntries(readScenario(id).diagram);
      const lanes = await drawnLanes(page);
      expect(lanes.map(({ kind, label, depth, runs }) => ({ kind, label, depth, runs: kind === 'loop' || kind === 'inner' ? '' : runs }))).toEqual([
        { kind: 'provider', label: 'turn1', depth: 0, runs: diagram['turn1Runs'] },
        { kind: 'tool', label: 'researcher', depth: 0, runs: '---^----------------------!' },
        { kind: 'inner', label: 'researcher loop', depth: 1, runs: '' },
        { kind: 'provider', label: 'researcher call 1', depth: 1, runs: diagram['research1Runs'] },
        { kind: 'tool', label: 'search', depth: 1, runs: diagram['searchRuns'] },
        { kind: 'provider', label: 'researcher call 2', depth: 1, runs: diagram['research2Runs'] },
        { kind: 'provider', label: 'turn2', depth: 0, runs: diagram['turn2Runs'] },
        { kind: 'loop', label: 'loop', depth: 0, runs: '' },
      ]);
      // the inner loop's lane: its own events (not the forwarded updates), from the call's start to its loop_end
      const inner = lanes[2]!;
      expect(inner.marbles[0]!.frame).toBe(3);
      expect(inner.marbles[inner.marbles.length - 1]!.text).toBe('|');
      const legend = await page.$$eval('#legend li', (items) => items.map((item) => item.textContent));
      expect(legend.some((item) => item?.endsWith('tool_call search {"q":"coffee health"}'))).toBe(true);
      expect(legend.some((item) => item?.endsWith('tool_update researcher: tool_call search {"q":"coffee health"}'))).toBe(true);
      expect((await drawnLanes(page)).find((lane) => lane.kind === 'loop')?.line).toBe(diagram['loop']);
      await page.screenshot({ path: AGENT_SCREENSHOT, fullPage: true });
      expect(statSync(AGENT_SCREENSHOT).size).toBeGreaterThan(10_000);
    },
    40_000,
  );

  browserTest(
    'V3: "Copy as marble test" copies the recordMarbles test of the run: the scenario\'s loop line up to the letters, and it passes',
    async () => {
      await page.goto(`${served!.url}?scenario=${S04}&frameMs=20`);
      expect(await runToEnd(page)).toBe('done');
      await page.click('#copy');
      await page.waitForFunction(() => document.getElementById('copy-status')?.textContent?.startsWith('copied'), null, { timeout: 5_000 });
      const copied = await page.evaluate(() => navigator.clipboard.readText());
      expect(copied).toBe(await page.textContent('#test-text'));
      expect(copied).toContain('Recorded by recordMarbles');

      require(join(root, 'marbles', `${S04}.marble.ts`));
      const [own] = mockScenarios;
      let loop: { line: string; legend: Record<string, unknown> } | undefined;
      new TestScheduler(() => undefined).run((helpers) =>
        own!.body({
          ...helpers,
          expectObservable: () => ({ toBe: (line: string, legend?: unknown) => void (loop ??= { line, legend: legend as Record<string, unknown> }), toEqual: () => undefined }),
          expectSubscriptions: () => ({ toBe: () => undefined }),
        }),
      );
      expect(loop!.line).toBe('1s-(c\u03b3R)u(E2)s-t-e(FL|)');
      const recording = recorded(copied);
      expect(renamed(recording, loop!.legend)).toBe(loop!.line);
      await runRecordedTest(copied);
    },
    30_000,
  );

  browserTest(
    'V1, V2: every scenario of marbles/ runs in the page and draws its own loop line and subscription lines',
    async () => {
      await page.goto(`${served!.url}?frameMs=1`);
      const results = await page.evaluate(async () => {
        const select = document.getElementById('scenario') as HTMLSelectElement;
        const ended = () =>
          new Promise<void>((resolve) => {
            const observer = new MutationObserver(() => {
              if (document.body.dataset['state'] === 'running') return;
              observer.disconnect();
              resolve();
            });
            observer.observe(document.body, { attributes: true, attributeFilter: ['data-state'] });
          });
        const found: Record<string, string> = {};
        for (const option of [...select.options]) {
          select.value = option.value;
          select.dispatchEvent(new Event('change'));
          const end = ended();
          document.getElementById('run')!.click();
          await end;
          const cells = [...document.querySelectorAll('#lines tr')].map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent));
          const subscriptions = [...document.querySelectorAll('#lines p')].map((p) => p.textContent).join(' ');
          found[option.value] = `${document.body.dataset['state']} ${cells.map((c) => `${c[0]} ${c[2]}`).join(', ')}; ${subscriptions}`;
        }
        return found;
      });
      for (const id of scenarioIds()) {
        // 12 and 30 unsubscribe mid-run: nothing completes, so nothing is recorded
        const recorded = id.startsWith('12-') || id.startsWith('30-') ? '' : ', recordMarbles \u2713';
        expect(`${id}: ${results[id]}`).toMatch(new RegExp(`^${id}: done scenario , drawn \u2713${recorded}; (\\d+) of \\1 subscription lines as the scenario draws them \u2713`));
      }
    },
    60_000,
  );

  browserTest(
    'V1: a run on an OpenAI-compatible endpoint typed into the page (a server on loopback), drawn live and recorded',
    async () => {
      const fake = await fakeOpenAI();
      try {
        await page.goto(served!.url);
        await page.click('#tab-endpoint');
        await page.fill('#base-url', `${fake.url}/v1`);
        await page.fill('#model', 'gpt-4o-mini');
        await page.fill('#api-key', 'sk-playground-test');
        await page.fill('#prompt', 'What time is it?');
        await setFrameMs(page, 50);
        expect(await runToEnd(page)).toBe('done');
        expect(fake.requests.map((request) => request.headers.authorization)).toEqual(['Bearer sk-playground-test', 'Bearer sk-playground-test']);
        const lanes = await drawnLanes(page);
        expect(lanes.map((lane) => `${lane.kind} ${lane.label}`)).toEqual(['provider call 1', 'tool current_time', 'provider call 2', 'loop loop']);
        const loop = lanes[3]!;
        expect(loop.marbles.map((m) => m.letter).join('')).toMatch(/^1s.*L\|$/);
        // the drawn line is the recorded one, letter for letter
        const rows = await page.$$eval('#lines tr', (all) => all.map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent)));
        const recordedLine = rows.find(([what]) => what === 'recordMarbles')?.[1];
        expect(recordedLine).toBe(loop.line);
        expect(await page.evaluate(() => JSON.stringify(localStorage) + JSON.stringify(sessionStorage) + document.cookie)).not.toContain('sk-playground');
        await runRecordedTest((await page.textContent('#test-text')) ?? '');
      } finally {
        await fake.close();
      }
    },
    30_000,
  );
});

/** An OpenAI-compatible server on 127.0.0.1 that replays the s04 fixtures (a current_time call, then the answer), a chunk every 60 ms, to any origin. */
async function fakeOpenAI(): Promise<{ url: string; requests: IncomingMessage[]; close(): Promise<void> }> {
  const streams = ['s04-tool-call.sse', 's04-answer.sse'].map((name) => readFileSync(join(root, 'spec', 'fixtures', 'openai', name), 'utf8'));
  const requests: IncomingMessage[] = [];
  const cors = { 'access-control-allow-origin': '*', 'access-control-allow-headers': 'authorization, content-type', 'access-control-allow-methods': 'POST' };
  const server: Server = createServer((request, response) => {
    if (request.method === 'OPTIONS') return void response.writeHead(204, cors).end();
    request.resume();
    request.on('end', async () => {
      const stream = streams[requests.push(request) - 1];
      if (stream === undefined) return void response.writeHead(500, cors).end('{"error":{"message":"no more replies"}}');
      response.writeHead(200, { ...cors, 'content-type': 'text/event-stream' });
      for (const event of stream.split(/(?<=\n\n)/)) {
        response.write(event);
        await new Promise((resolve) => setTimeout(resolve, 60));
      }
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
