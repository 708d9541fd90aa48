/**
 * The playground page (V1–V3): pick a marble scenario of marbles/ or type in an OpenAI-compatible endpoint,
 * run it and watch the loop drawn live as marbles; hover a marble for its whole event, scrub or replay the
 * run with the slider, and copy the run as a marble test (`recordMarbles`, T3).
 */
import 'virtual:scenarios';
import { config } from 'rxjs';
import type { MarbleRecording } from 'rx-tool-loop/testing';
import { render } from './draw';
import type { Drawn } from './draw';
import { runEndpoint } from './endpoint';
import { laneLine } from './recorder';
import type { Recorder } from './recorder';
import { runScenario } from './scenario-run';
import type { Check, ScenarioRun } from './scenario-run';
import { scenarios } from './shim/registry';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const ui = {
  tabScenario: $<HTMLButtonElement>('tab-scenario'),
  tabEndpoint: $<HTMLButtonElement>('tab-endpoint'),
  scenarioForm: $<HTMLElement>('scenario-form'),
  endpointForm: $<HTMLFormElement>('endpoint-form'),
  scenario: $<HTMLSelectElement>('scenario'),
  doc: $<HTMLElement>('scenario-doc'),
  baseURL: $<HTMLInputElement>('base-url'),
  model: $<HTMLInputElement>('model'),
  apiKey: $<HTMLInputElement>('api-key'),
  prompt: $<HTMLInputElement>('prompt'),
  frameMs: $<HTMLInputElement>('frame-ms'),
  frameMsOut: $<HTMLOutputElement>('frame-ms-out'),
  run: $<HTMLButtonElement>('run'),
  stop: $<HTMLButtonElement>('stop'),
  status: $<HTMLElement>('status'),
  scroll: $<HTMLElement>('diagram-scroll'),
  svg: document.getElementById('diagram') as unknown as SVGSVGElement,
  replay: $<HTMLButtonElement>('replay'),
  scrub: $<HTMLInputElement>('scrub'),
  scrubOut: $<HTMLOutputElement>('scrub-out'),
  legend: $<HTMLElement>('legend'),
  lines: $<HTMLElement>('lines'),
  copy: $<HTMLButtonElement>('copy'),
  copyStatus: $<HTMLElement>('copy-status'),
  testText: $<HTMLElement>('test-text'),
  tooltip: $<HTMLElement>('tooltip'),
};

type Mode = 'scenario' | 'endpoint';
let mode: Mode = 'scenario';
let current: { recorder: Recorder; scenario?: ScenarioRun; stop(): void } | undefined;
let running = false;
let following = true; // the slider follows the run
let replaying: ReturnType<typeof setInterval> | undefined;
let drawn: Drawn = new Map();
let pending = false;

// an error nobody handles is shown here, not thrown at the console (the recorder itself fails only through its Observable, T7)
config.onUnhandledError = (error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  if (current !== undefined) current.recorder.recordingError ??= message;
  status(`error: ${message}`, 'failed');
  requestDraw();
};

const params = new URLSearchParams(location.search);
for (const scenario of scenarios) ui.scenario.add(new Option(scenario.name, scenario.id));
ui.scenario.value = params.get('scenario') ?? scenarios[0]?.id ?? '';
if (params.has('frameMs')) ui.frameMs.value = params.get('frameMs')!;
showDoc();
showFrameMs();
setState('idle');
draw();
// T10: `?scenario=NAME&run=1` runs that scenario at once (a link to a run, a browser test)
if (params.get('run') === '1') start();

ui.scenario.addEventListener('change', showDoc);
ui.frameMs.addEventListener('input', showFrameMs);
ui.tabScenario.addEventListener('click', () => setMode('scenario'));
ui.tabEndpoint.addEventListener('click', () => setMode('endpoint'));
ui.endpointForm.addEventListener('submit', (event) => {
  event.preventDefault();
  start();
});
ui.run.addEventListener('click', start);
ui.stop.addEventListener('click', () => current?.stop());
ui.scrub.addEventListener('input', () => {
  stopReplay();
  following = Number(ui.scrub.value) >= Number(ui.scrub.max);
  draw();
});
ui.replay.addEventListener('click', replay);
ui.copy.addEventListener('click', () => void copy());
ui.svg.addEventListener('mousemove', hover);
ui.svg.addEventListener('mouseleave', () => (ui.tooltip.hidden = true));
window.addEventListener('resize', () => draw());

function setMode(next: Mode): void {
  if (running) return;
  mode = next;
  ui.tabScenario.classList.toggle('active', mode === 'scenario');
  ui.tabEndpoint.classList.toggle('active', mode === 'endpoint');
  ui.scenarioForm.hidden = mode !== 'scenario';
  ui.endpointForm.hidden = mode !== 'endpoint';
}

function showDoc(): void {
  const scenario = scenarios.find((s) => s.id === ui.scenario.value);
  ui.doc.replaceChildren();
  if (scenario === undefined) return;
  const file = document.createElement('code');
  file.textContent = `marbles/${scenario.id}.marble.ts`;
  ui.doc.append(file, ' — ');
  // the doc comment's `code` as code, its *emphasis* as plain words
  scenario.doc.split('`').forEach((part, i) => {
    if (i % 2 === 0) ui.doc.append(part.replace(/\*([^*]+)\*/g, '$1'));
    else {
      const code = document.createElement('code');
      code.textContent = part;
      ui.doc.append(code);
    }
  });
}

function frameMs(): number {
  return Math.max(1, Number(ui.frameMs.value) || 120);
}

function showFrameMs(): void {
  ui.frameMsOut.textContent = `${frameMs()} ms / frame`;
}

function setState(state: 'idle' | 'running' | 'done' | 'failed'): void {
  document.body.dataset['state'] = state;
  running = state === 'running';
  ui.run.disabled = running;
  ui.stop.disabled = !running;
  ui.scenario.disabled = running;
  for (const input of [ui.baseURL, ui.model, ui.apiKey, ui.prompt]) input.disabled = running;
}

function status(message: string, tone: 'info' | 'ok' | 'failed' = 'info'): void {
  ui.status.textContent = message;
  ui.status.className = `status ${tone}`;
}

function start(): void {
  if (running) return;
  stopReplay();
  following = true;
  ui.copyStatus.textContent = '';
  ui.testText.textContent = '';
  setState('running');
  const done = (error?: unknown) => {
    const failed = error !== undefined;
    setState(failed ? 'failed' : 'done');
    if (failed) status(`stopped: ${error instanceof Error ? error.message : String(error)}`, 'failed');
    else status(`done in ${current?.recorder.frame ?? 0} frames`, 'ok');
    draw();
  };
  try {
    if (mode === 'scenario') {
      const scenario = scenarios.find((s) => s.id === ui.scenario.value);
      if (scenario === undefined) throw new Error('no such scenario');
      status(`running ${scenario.id} …`);
      current = undefined;
      const run = runScenario(scenario, frameMs, requestDraw, done);
      current = { recorder: run.recorder, scenario: run, stop: run.stop };
    } else {
      const settings = { baseURL: ui.baseURL.value.trim(), model: ui.model.value.trim(), apiKey: ui.apiKey.value, prompt: ui.prompt.value, frameMs: frameMs() };
      status(`calling ${settings.model} at ${settings.baseURL} …`);
      const run = runEndpoint(settings, requestDraw, done);
      current = { recorder: run.recorder, stop: run.stop };
    }
  } catch (error) {
    done(error);
  }
  draw();
}

function requestDraw(): void {
  if (pending) return;
  pending = true;
  requestAnimationFrame(() => {
    pending = false;
    draw();
  });
}

function draw(): void {
  const recorder = current?.recorder;
  const end = recorder?.frame ?? 0;
  ui.scrub.max = String(end);
  if (following) ui.scrub.value = String(end);
  const upTo = Math.min(Number(ui.scrub.value), end);
  ui.scrubOut.textContent = `frame ${upTo} of ${end}`;
  ui.scrub.disabled = recorder === undefined;
  ui.replay.disabled = recorder === undefined || running;
  const cursor = running || upTo < end;
  const view = { inputs: recorder?.lanes ?? [], operator: recorder?.operator ?? 'runEventedToolLoop', upTo, end, cursor, ...(recorder?.loopLane ? { loop: recorder.loopLane } : {}) };
  drawn = render(ui.svg, view, ui.scroll.clientWidth);
  if (following && running) ui.scroll.scrollLeft = ui.scroll.scrollWidth;
  drawLegend(recorder, upTo);
  drawLines();
}

function drawLegend(recorder: Recorder | undefined, upTo: number): void {
  ui.legend.replaceChildren();
  if (recorder === undefined) {
    ui.legend.append(paragraph('Run a scenario: its letters and what each stands for show here.', 'muted'));
    return;
  }
  // the loop's letters (shared by its provider calls and tool runs), then each cold line's own
  const lanes = [...(recorder.loopLane ? [recorder.loopLane] : []), ...recorder.lanes.filter((lane) => lane.kind !== 'input')];
  const seen = new Map<string, { letter: string; description: string; tone: string }>();
  for (const lane of lanes) for (const mark of lane.marks) if (mark.kind === 'N' && mark.frame <= upTo && !seen.has(mark.letter)) seen.set(mark.letter, mark);
  const list = document.createElement('ul');
  list.className = 'legend-list';
  for (const { letter, description, tone } of seen.values()) list.append(legendItem(letter, description, tone));
  ui.legend.append(list);
  for (const lane of recorder.lanes.filter((l) => l.kind === 'input' && l.subscribed <= upTo)) {
    const own = new Map<string, string>();
    for (const mark of lane.marks) if (mark.kind === 'N') own.set(mark.letter, mark.description);
    if (own.size === 0) continue;
    const title = paragraph(`${lane.label} (cold line)`, 'legend-sub');
    const sub = document.createElement('ul');
    sub.className = 'legend-list';
    for (const [letter, description] of own) sub.append(legendItem(letter, description, 'value'));
    ui.legend.append(title, sub);
  }
}

function legendItem(letter: string, description: string, tone: string): HTMLLIElement {
  const item = document.createElement('li');
  const ball = document.createElement('span');
  ball.className = `ball tone-${tone}`;
  ball.textContent = letter;
  const words = document.createElement('code');
  words.textContent = description;
  item.append(ball, words);
  return item;
}

function drawLines(): void {
  ui.lines.replaceChildren();
  const recorder = current?.recorder;
  const recording = recorder?.recording;
  const expected = current?.scenario?.expected;
  const rows: [string, string, boolean | undefined][] = [];
  if (expected !== undefined) rows.push(['scenario', expected.line, undefined]);
  if (recorder?.loopLane !== undefined) rows.push(['drawn', laneLine(recorder.loopLane), expected === undefined || running ? undefined : laneLine(recorder.loopLane) === expected.line]);
  if (recording !== undefined) rows.push(['recordMarbles', recording.diagram, expected === undefined ? undefined : renamed(recording, expected.legend) === expected.line]);
  const table = document.createElement('table');
  table.className = 'lines';
  for (const [what, line, ok] of rows) {
    const tr = table.insertRow();
    tr.insertCell().textContent = what;
    const cell = tr.insertCell();
    const code = document.createElement('code');
    code.textContent = line;
    cell.append(code);
    const mark = tr.insertCell();
    mark.textContent = ok === undefined ? '' : ok ? '✓' : '✗';
    mark.className = ok === undefined ? '' : ok ? 'ok' : 'failed';
    if (what === 'recordMarbles' && ok) mark.title = 'the same line as the scenario, up to the choice of letters';
  }
  if (rows.length > 0) ui.lines.append(table);
  const checks: Check[] = current?.scenario?.checks ?? [];
  if (checks.length > 0) {
    const good = checks.filter((check) => check.ok).length;
    ui.lines.append(paragraph(`${good} of ${checks.length} subscription lines as the scenario draws them${good === checks.length ? ' ✓' : ''}`, good === checks.length ? 'ok' : 'failed'));
    for (const check of checks.filter((c) => !c.ok)) ui.lines.append(paragraph(`${check.what}: expected ${check.expected}, got frames ${check.actual}`, 'failed'));
  }
  if (recorder !== undefined && !running && recording === undefined) {
    ui.lines.append(paragraph(recorder.recordingError ?? 'The loop never completed (it was unsubscribed), so there is no recording to copy.', 'muted'));
  }
  ui.copy.disabled = recording === undefined || running;
  if (recording !== undefined && ui.testText.textContent !== recording.test) ui.testText.textContent = recording.test;
}

/** The recorded line with the scenario's letters where the descriptions match, as spec/testing/round-trip.spec.ts compares them. */
function renamed({ diagram, values }: MarbleRecording, legend: Record<string, string>): string {
  const letterOf = new Map(Object.entries(legend).map(([letter, description]) => [description, letter]));
  return [...diagram].map((char) => (char in values ? (letterOf.get(values[char]!) ?? char) : char)).join('');
}

async function copy(): Promise<void> {
  const test = current?.recorder.recording?.test;
  if (test === undefined) return;
  try {
    await navigator.clipboard.writeText(test);
    ui.copyStatus.textContent = 'copied: save it as a .spec.ts file and run it with jest';
    ui.copyStatus.className = 'ok';
  } catch {
    ui.copyStatus.textContent = 'the clipboard is not available here: copy the test below';
    ui.copyStatus.className = 'muted';
    (ui.testText.parentElement as HTMLDetailsElement).open = true;
  }
}

function replay(): void {
  const end = current?.recorder.frame ?? 0;
  stopReplay();
  following = false;
  let frame = 0;
  ui.scrub.value = '0';
  draw();
  replaying = setInterval(() => {
    frame++;
    ui.scrub.value = String(frame);
    if (frame >= end) {
      stopReplay();
      following = true;
    }
    draw();
  }, frameMs());
}

function stopReplay(): void {
  if (replaying !== undefined) clearInterval(replaying);
  replaying = undefined;
}

function hover(event: MouseEvent): void {
  const target = (event.target as Element).closest('[data-mark]');
  const found = target === null ? undefined : drawn.get(target.getAttribute('data-mark')!);
  if (found === undefined) {
    ui.tooltip.hidden = true;
    return;
  }
  const { lane, mark } = found;
  ui.tooltip.replaceChildren();
  const head = document.createElement('div');
  head.className = 'tip-head';
  const ball = document.createElement('span');
  ball.className = `ball tone-${mark.tone}`;
  ball.textContent = mark.letter;
  const title = document.createElement('code');
  title.textContent = mark.description;
  head.append(ball, title);
  const where = paragraph(`${lane.label} · frame ${mark.frame}`, 'tip-where');
  const body = document.createElement('pre');
  body.textContent = typeof mark.detail === 'string' ? JSON.stringify(mark.detail) : JSON.stringify(mark.detail, null, 2);
  ui.tooltip.append(head, where, body);
  ui.tooltip.hidden = false;
  const { innerWidth, innerHeight } = window;
  const box = ui.tooltip.getBoundingClientRect();
  const left = Math.min(event.clientX + 16, innerWidth - box.width - 8);
  const top = event.clientY + 16 + box.height > innerHeight ? Math.max(8, event.clientY - box.height - 12) : event.clientY + 16;
  ui.tooltip.style.left = `${Math.max(8, left)}px`;
  ui.tooltip.style.top = `${top}px`;
}

function paragraph(content: string, className: string): HTMLParagraphElement {
  const p = document.createElement('p');
  p.className = className;
  p.textContent = content;
  return p;
}

