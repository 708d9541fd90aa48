/**
 * T3, the round trip: recording each marble scenario of the project inside `TestScheduler.run` gives
 * exactly its `loop` line and legend, up to the choice of letters (same frames, groups, marks and
 * descriptions). Every scenario in marbles/ runs here once more, its loop recorded on the side.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { MarbleRecording } from 'rx-tool-loop/testing';
import { expected } from '../../marbles/support/scenario.js';

const mockRecordings: MarbleRecording[] = [];

// every loop a scenario makes is recorded as it runs: a tap into a Subject that the recorder listens to,
// so the scenario's own subscription is the only one (a loop it unsubscribes is never recorded)
jest.mock('rx-tool-loop', () => {
  const actual = jest.requireActual<typeof import('rx-tool-loop')>('rx-tool-loop');
  const { recordMarbles } = jest.requireActual<typeof import('rx-tool-loop/testing')>('rx-tool-loop/testing');
  const { Subject, tap } = jest.requireActual<typeof import('rxjs')>('rxjs');
  return {
    ...actual,
    runEventedToolLoop: (options: Parameters<typeof actual.runEventedToolLoop>[0]) => {
      const seen = new Subject<import('rx-tool-loop').LoopEvent>();
      recordMarbles(seen).subscribe((recording) => mockRecordings.push(recording));
      return actual.runEventedToolLoop(options).pipe(tap(seen));
    },
    conversation: (options: Parameters<typeof actual.conversation>[0]) => (prompts: Parameters<ReturnType<typeof actual.conversation>>[0]) => {
      const seen = new Subject<import('rx-tool-loop').ConversationEvent>();
      recordMarbles(seen).subscribe((recording) => mockRecordings.push(recording));
      return actual.conversation(options)(prompts).pipe(tap(seen));
    },
  };
});

const folder = join(__dirname, '..', '..', 'marbles');
const scenarios = readdirSync(folder).filter((name) => name.endsWith('.marble.ts'));
let checked = 0;

beforeEach(() => {
  mockRecordings.length = 0;
  expected.length = 0;
});

afterEach(() => {
  // the last recording is the scenario's own loop: an agent tool's inner loop (A4) completes before it
  const recording = mockRecordings[mockRecordings.length - 1];
  const [loop] = expected; // each scenario's first expectation is its loop line
  if (recording === undefined || loop === undefined) return; // unsubscribed on purpose: the run never completes
  expect(renamed(recording, loop.legend)).toBe(loop.diagram);
  checked++;
});

afterAll(() => {
  // all but the scenarios that unsubscribe mid-run (12, and 30's cancelled agent tool)
  expect(checked).toBe(scenarios.length - 2);
});

describe.each(scenarios)('recording %s', (file) => {
  // the scenario's own test, registered here; afterEach compares its recording with its loop line
  require(join(folder, file));
});

/** The recorded line with the legend's letters where the descriptions match (unknown ones stay as they are). */
function renamed({ diagram, values }: MarbleRecording, legend: Record<string, unknown>): string {
  const letterOf = new Map(Object.entries(legend).map(([letter, description]) => [String(description), letter]));
  return [...diagram].map((char) => (char in values ? (letterOf.get(values[char]!) ?? char) : char)).join('');
}
