/**
 * R32, T2: a payload edit fails a scenario. Every marble scenario in marbles/ runs here as drawn (it passes),
 * then once with each of its calls' input edited in memory, then once with every value its marble tools give
 * edited: each edit fails it, on the line of the event that carries the payload.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { isObservable, map } from 'rxjs';
import type { RunHelpers } from 'rxjs/testing';
import type { ProviderEvent, ToolReturn } from 'rx-tool-loop';
import type { MarbleTool } from 'rx-tool-loop/testing';
import { runScenario } from '../../marbles/support/scenario.js';

type ToolCallEvent = Extract<ProviderEvent, { type: 'tool_call' }>;

/** The calls the scenario file made (its provider events), and its bodies: what the mocks below collect. */
const mockMade: { calls: ToolCallEvent[]; bodies: { name: string; body: (helpers: RunHelpers) => void }[] } = { calls: [], bodies: [] };
/** While on, every string a marble tool gives (and every `content`) gets ` (edited)`; `emitted` counts them. */
const mockResults = { edit: false, emitted: 0 };

jest.mock('../../marbles/support/scenario.js', () => {
  const actual = jest.requireActual<typeof import('../../marbles/support/scenario.js')>('../../marbles/support/scenario.js');
  return { ...actual, scenario: (name: string, body: (helpers: RunHelpers) => void) => mockMade.bodies.push({ name, body }) };
});

jest.mock('rx-tool-loop/testing', () => {
  const actual = jest.requireActual<typeof import('rx-tool-loop/testing')>('rx-tool-loop/testing');
  const edited = (value: unknown): unknown => {
    if (!mockResults.edit) return value;
    if (typeof value === 'string') {
      mockResults.emitted++;
      return `${value} (edited)`;
    }
    if (typeof value === 'object' && value !== null && typeof (value as { content?: unknown }).content === 'string') {
      mockResults.emitted++;
      // a spread keeps a progress value's own symbol
      return { ...value, content: `${(value as { content: string }).content} (edited)` };
    }
    return value;
  };
  return {
    ...actual,
    call: (...args: Parameters<typeof actual.call>) => {
      const event = actual.call(...args) as ToolCallEvent;
      mockMade.calls.push(event);
      return event;
    },
    marbleTools: (table: Record<string, MarbleTool>) =>
      actual.marbleTools(
        Object.fromEntries(
          Object.entries(table).map(([name, tool]): [string, MarbleTool] => [
            name,
            (input, context) => {
              const given = typeof tool === 'function' ? tool(input, context) : tool;
              return (isObservable(given) ? given.pipe(map(edited)) : edited(given)) as ToolReturn;
            },
          ]),
        ),
      ),
  };
});

const folder = join(__dirname, '..', '..', 'marbles');
const files = readdirSync(folder).filter((name) => name.endsWith('.marble.ts'));

/** Runs the scenario's bodies; the error of the first that fails, `undefined` when all pass. */
function failure(bodies: typeof mockMade.bodies): Error | undefined {
  for (const { body } of bodies) {
    try {
      runScenario(body);
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
  }
  return undefined;
}

/** Edits one value of the input in place (a string gets ` (edited)`, else a key is added); returns the undo. */
function editInput(input: Record<string, unknown>): () => void {
  const key = Object.keys(input).find((k) => typeof input[k] === 'string');
  if (key === undefined) {
    input['edited'] = true;
    return () => delete input['edited'];
  }
  const was = input[key];
  input[key] = `${String(was)} (edited)`;
  return () => (input[key] = was);
}

let resultEdits = 0;
afterAll(() => {
  // the tools of most scenarios answer (the others are denied, cancelled or time out): the check has bite
  expect(resultEdits).toBeGreaterThanOrEqual(20);
});

describe.each(files)('%s', (file) => {
  mockMade.calls = [];
  mockMade.bodies = [];
  require(join(folder, file));
  const { calls, bodies } = mockMade;

  it('R32: as drawn, it passes', () => {
    expect(bodies.length).toBeGreaterThan(0);
    expect(failure(bodies)).toBeUndefined();
  });

  if (calls.length > 0) {
    it.each(calls.map((event, i) => [`${i + 1} (${event.call.name})`, event] as const))('R32, T2: editing the input of call %s fails it', (_, event) => {
      const undo = editInput(event.call.input);
      try {
        const error = failure(bodies);
        expect(error).toBeDefined();
        // the diff shows the call's new line (JSON inside JSON: its quotes escaped)
        expect(error!.message).toContain(`${event.call.name} {`);
        expect(error!.message).toContain('edited');
      } finally {
        undo();
      }
    });
  }

  it('R32, T2: editing what its tools give fails it, where a tool answers', () => {
    mockResults.edit = true;
    mockResults.emitted = 0;
    let error: Error | undefined;
    try {
      error = failure(bodies);
    } finally {
      mockResults.edit = false;
    }
    if (mockResults.emitted === 0) return; // no marble tool answered in this scenario
    resultEdits++;
    expect(error).toBeDefined();
    expect(error!.message).toContain(' (edited)');
  });
});
