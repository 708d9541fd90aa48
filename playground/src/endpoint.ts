/**
 * A run on a real OpenAI-compatible endpoint (V1), drawn live (V2): `openAIChatProvider` with the URL,
 * model and key typed into the page (kept in the page only: never stored, sent nowhere but that URL),
 * a `current_time` tool, drawn on one clock, a frame every `frameMs` ms, from which the run is recorded
 * with `recordMarbles` for the copy (V3): the copied line is the drawn one.
 */
import { ToolRegistry, openAIChatProvider, runEventedToolLoop } from 'rx-tool-loop';
import { Recorder } from './recorder';

export interface EndpointSettings {
  baseURL: string;
  model: string;
  apiKey: string;
  prompt: string;
  frameMs: number;
}

export interface EndpointRun {
  recorder: Recorder;
  /** Aborts the run (its `signal`): it still ends with `turn_end` and `loop_end` `aborted`, and is recorded. */
  stop(): void;
}

export const SYSTEM = 'You are a concise assistant. Answer in one short sentence. Use the current_time tool when asked about the time.';

export function runEndpoint(settings: EndpointSettings, update: () => void, done: (error?: unknown) => void): EndpointRun {
  const { baseURL, model, apiKey, prompt, frameMs } = settings;
  const registry = new ToolRegistry().register({
    name: 'current_time',
    description: 'Returns the current time as an ISO 8601 string',
    input: {},
    handler: () => new Date().toISOString(),
  });
  const provider = openAIChatProvider({ baseURL: baseURL.replace(/\/+$/, ''), model, apiKey, system: SYSTEM, maxRetries: 1 });
  const abort = new AbortController();
  const recorder = new Recorder(frameClock(frameMs), { frameMs });
  const run = recorder.loop(
    runEventedToolLoop({ provider: recorder.provider(provider), registry, messages: [{ role: 'user', content: prompt }], signal: abort.signal }),
    'runEventedToolLoop',
  );
  const ticker = setInterval(() => {
    recorder.frame = recorder.now();
    update();
  }, Math.max(16, frameMs / 2));
  recorder.onChange = update;
  run.subscribe({
    error: (error: unknown) => {
      clearInterval(ticker);
      done(error);
    },
    complete: () => {
      clearInterval(ticker);
      recorder.frame = recorder.now();
      if (recorder.recording !== undefined) recorder.adoptLetters(recorder.recording.values);
      done();
    },
  });
  return { recorder, stop: () => abort.abort() };
}

/**
 * The page's clock: frames since now, `Math.floor(elapsed / frameMs)`, read once per synchronous burst, as
 * `recordMarbles` reads its own in real time. The lanes and the recording both take their frames from it.
 */
function frameClock(frameMs: number): () => number {
  const origin = Date.now();
  let burst: number | undefined;
  return () => {
    if (burst === undefined) {
      burst = Math.floor((Date.now() - origin) / frameMs);
      queueMicrotask(() => (burst = undefined));
    }
    return burst;
  };
}
