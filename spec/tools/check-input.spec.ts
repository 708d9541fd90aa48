/** R24: what a tool's input description lets through to its handler, and the results the model reads otherwise. */
import { lastValueFrom } from 'rxjs';
import { z } from 'zod';
import {
  StandardSchemaV1,
  Tool,
  ToolRegistry,
  ToolResultMessage,
  defineTool,
  runEventedToolLoop,
  scriptedProvider,
} from '../../src/index.js';
import { describeIssues } from '../../src/tools/check-input.js';
import { executeTool } from '../../src/tools/execute-tool.js';
import { answerTurn, call, callOf, collectSync, loopEndOf, toolTurn } from '../support/events.js';

/** A hand-written Standard Schema validator: what zod, valibot and arktype put under `~standard`. */
function double<Output>(validate: (value: unknown) => StandardSchemaV1.Result<Output> | Promise<StandardSchemaV1.Result<Output>>): StandardSchemaV1<unknown, Output> {
  return { '~standard': { version: 1, vendor: 'double', validate } };
}

const schemaTool = (schema: StandardSchemaV1, handler: Tool['handler'] = () => 'ran'): Tool => ({
  name: 't',
  description: 'the t tool',
  schema,
  inputSchema: { type: 'object' },
  handler,
});

function runSync(tool: Tool, input: unknown): ToolResultMessage {
  const { values, completed } = collectSync(new ToolRegistry().register(tool).run(callOf('c1', tool.name, input as Record<string, unknown>)));
  expect(completed).toBe(true);
  return values[0]!;
}

const run = (tool: Tool, input: unknown): Promise<ToolResultMessage> =>
  lastValueFrom(new ToolRegistry().register(tool).run(callOf('c1', tool.name, input as Record<string, unknown>)));

describe('R24 a schema tool: the validator alone decides', () => {
  it.each([
    ['one issue', [{ message: 'Required', path: ['city'] }], 'error: invalid input: city: Required'],
    ['a nested path', [{ message: 'Too long', path: ['stops', 0, 'name'] }], 'error: invalid input: stops.0.name: Too long'],
    ['path segments as { key }', [{ message: 'Too long', path: [{ key: 'stops' }, { key: 1 }] }], 'error: invalid input: stops.1: Too long'],
    ['the root, no path', [{ message: 'Expected an object' }], 'error: invalid input: input: Expected an object'],
    ['the root, an empty path', [{ message: 'Expected an object', path: [] }], 'error: invalid input: input: Expected an object'],
    [
      'several issues, joined by "; "',
      [{ message: 'Required', path: ['city'] }, { message: 'Too small', path: ['days'] }],
      'error: invalid input: city: Required; days: Too small',
    ],
  ])('%s', (_label, issues, content) => {
    const handler = jest.fn(() => 'ran');
    const result = runSync(schemaTool(double(() => ({ issues })), handler), {});
    expect(result).toEqual({ role: 'toolResult', toolCallId: 'c1', toolName: 't', content, isError: true });
    expect(handler).not.toHaveBeenCalled();
  });

  it('the handler gets the validator\'s output, not the model\'s input', () => {
    const trimmed = double((value) => ({ value: { city: String((value as { city: string }).city).trim(), days: 1 } }));
    const handler = jest.fn((input: Record<string, unknown>) => JSON.stringify(input));
    expect(runSync(schemaTool(trimmed, handler), { city: '  Paris ' }).content).toBe('{"city":"Paris","days":1}');
    expect(handler.mock.calls[0]![0]).toEqual({ city: 'Paris', days: 1 });
  });

  it('a validator that throws is a tool failure: error: MESSAGE', () => {
    const handler = jest.fn(() => 'ran');
    const broken = double(() => {
      throw new Error('validator broke');
    });
    expect(runSync(schemaTool(broken, handler), {})).toMatchObject({ content: 'error: validator broke', isError: true });
    expect(handler).not.toHaveBeenCalled();
  });

  it('a validator that answers neither value nor issues is a tool failure', () => {
    const odd = double(() => 42 as unknown as StandardSchemaV1.Result<unknown>);
    expect(runSync(schemaTool(odd), {}).content).toBe('error: schema validator returned a number; expected { value } or { issues }');
  });

  it('the validator decides even what R17 would refuse: it sees null and its issue is the result', () => {
    const seen: unknown[] = [];
    const objectOnly = double((value) => {
      seen.push(value);
      return typeof value === 'object' && value !== null ? { value } : { issues: [{ message: 'Expected an object' }] };
    });
    expect(runSync(schemaTool(objectOnly), null).content).toBe('error: invalid input: input: Expected an object');
    expect(seen).toEqual([null]);
  });

  it('no required-key check of its own: the validator may fill in what the model left out', () => {
    const defaults = double(() => ({ value: { city: 'Paris' } }));
    const tool: Tool = { ...schemaTool(defaults, (input) => input.city), inputSchema: { type: 'object', required: ['city'] } };
    expect(runSync(tool, {}).content).toBe('Paris');
  });

  it('a synchronous validator keeps the tool synchronous, also inside a loop of many turns (R12)', () => {
    const ok = double((value) => ({ value }));
    const registry = new ToolRegistry().register(schemaTool(ok, () => 'ok'));
    const turns = Array.from({ length: 2000 }, () => toolTurn(call('t', {})));
    const events = collectSync(runEventedToolLoop({ provider: scriptedProvider([...turns, answerTurn('done')]), registry, messages: [], maxTurns: 2001 }));
    expect(events.completed).toBe(true);
    expect(loopEndOf(events.values).reason).toBe('stop');
  });

  describe('an asynchronous validator is awaited inside the tool', () => {
    it('its issues are the result, and the handler does not run', async () => {
      const handler = jest.fn(() => 'ran');
      const later = double(async () => ({ issues: [{ message: 'Unknown city', path: ['city'] }] }));
      await expect(run(schemaTool(later, handler), { city: 'Atlantis' })).resolves.toMatchObject({
        content: 'error: invalid input: city: Unknown city',
        isError: true,
      });
      expect(handler).not.toHaveBeenCalled();
    });

    it('its output reaches the handler, whatever the handler returns', async () => {
      const later = double(async (value) => ({ value: { ...(value as object), checked: true } }));
      await expect(run(schemaTool(later, (input) => JSON.stringify(input)), { a: 1 })).resolves.toMatchObject({ content: '{"a":1,"checked":true}', isError: false });
      await expect(run(schemaTool(later, async (input) => `async ${input.checked}`), {})).resolves.toMatchObject({ content: 'async true' });
      await expect(run(schemaTool(later, () => ({ content: 'output', details: 1 })), {})).resolves.toMatchObject({ content: 'output', details: 1 });
    });

    it('a rejection is a tool failure, and so is a handler that then throws', async () => {
      const rejects = double(() => Promise.reject(new Error('lookup failed')));
      await expect(run(schemaTool(rejects), {})).resolves.toMatchObject({ content: 'error: lookup failed', isError: true });
      const ok = double(async (value) => ({ value }));
      const throws = () => {
        throw new Error('handler broke');
      };
      await expect(run(schemaTool(ok, throws), {})).resolves.toMatchObject({ content: 'error: handler broke', isError: true });
    });

    it('its wait does not count toward the tool timeout (R16, R23): the timeout starts at tool_start', async () => {
      jest.useFakeTimers();
      try {
        const after = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));
        // the validator takes 50 ms, longer than the 20 ms timeout; then the handler has its 20 ms
        const slowCheck = double((value) => after(50, { value }));
        const play = async (handlerMs: number) => {
          const started = Date.now();
          const seen: string[] = [];
          const tool = schemaTool(slowCheck, () => after(handlerMs, 'ran'));
          executeTool(tool, callOf('c1', 't'), 20).subscribe((progress) => {
            seen.push(`${Date.now() - started} ${progress.type === 'settled' ? progress.message.content : progress.type}`);
          });
          await jest.advanceTimersByTimeAsync(200);
          return seen;
        };
        expect(await play(15)).toEqual(['50 tool_start', '65 ran']);
        expect(await play(30)).toEqual(['50 tool_start', '70 error: tool timed out after 20 ms']);
      } finally {
        jest.useRealTimers();
      }
    });

    it('unsubscribing while it validates never runs the handler and aborts nothing that started', async () => {
      let resolve!: (result: StandardSchemaV1.Result<unknown>) => void;
      const pending = double(() => new Promise<StandardSchemaV1.Result<unknown>>((r) => (resolve = r)));
      const handler = jest.fn(() => 'ran');
      const subscription = new ToolRegistry().register(schemaTool(pending, handler)).run(callOf('c1', 't')).subscribe();
      subscription.unsubscribe();
      resolve({ value: {} });
      await Promise.resolve();
      await Promise.resolve();
      expect(handler).not.toHaveBeenCalled();
    });
  });

  describe('with zod 4', () => {
    const weather = defineTool({
      name: 'get_weather',
      description: 'Current weather for a city',
      schema: z.object({ city: z.string(), days: z.number().int().min(1).default(1) }),
      handler: ({ city, days }) => `${city}: sunny for ${days} day(s)`,
    });

    it('a good call runs the handler on the parsed input (defaults filled in)', () => {
      expect(runSync(weather, { city: 'Paris' })).toMatchObject({ content: 'Paris: sunny for 1 day(s)', isError: false });
    });

    it.each([
      [{}, 'error: invalid input: city: Invalid input: expected string, received undefined'],
      [{ city: 'Paris', days: 0 }, 'error: invalid input: days: Too small: expected number to be >=1'],
      [{ days: 0 }, 'error: invalid input: city: Invalid input: expected string, received undefined; days: Too small: expected number to be >=1'],
      [null, 'error: invalid input: input: Invalid input: expected object, received null'],
    ])('%j -> %s', (input, content) => {
      expect(runSync(weather, input)).toMatchObject({ content, isError: true });
    });

    it('an async refinement is awaited', async () => {
      const known = defineTool({
        name: 'known_city',
        description: 'd',
        schema: z.object({ city: z.string().refine(async (city) => city !== 'Atlantis', 'No such city') }),
        handler: ({ city }) => city,
      });
      await expect(run(known, { city: 'Atlantis' })).resolves.toMatchObject({ content: 'error: invalid input: city: No such city', isError: true });
      await expect(run(known, { city: 'Oslo' })).resolves.toMatchObject({ content: 'Oslo', isError: false });
    });
  });
});

describe('R24 tools without a schema: only the plain-object check and the required keys', () => {
  it('an inputSchema tool: every name in required must be there; anything else passes as the model sent it', () => {
    const handler = jest.fn((input: Record<string, unknown>) => JSON.stringify(input));
    const tool: Tool = {
      name: 'add',
      description: 'Adds two numbers',
      inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
      handler,
    };
    expect(runSync(tool, { a: 1 })).toMatchObject({ content: 'error: missing input: b', isError: true });
    expect(runSync(tool, { a: 1, b: undefined })).toMatchObject({ content: 'error: missing input: b', isError: true });
    expect(runSync(tool, { a: 'one', b: [2], c: 3 })).toMatchObject({ content: '{"a":"one","b":[2],"c":3}', isError: false });
    expect(runSync(tool, ['a']).content).toBe('error: invalid input: expected an object, got an array');
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('an inputSchema without required needs nothing', () => {
    const tool: Tool = { name: 'now', description: 'd', inputSchema: { type: 'object', properties: {} }, handler: () => 'noon' };
    expect(runSync(tool, {}).content).toBe('noon');
  });

  it('R13: a series-style tool works as in version 1', () => {
    const echo: Tool = { name: 'echo', description: 'd', input: { text: 'what to echo' }, handler: (input: Record<string, string>) => input.text! };
    expect(runSync(echo, { text: 'hi' }).content).toBe('hi');
    expect(runSync(echo, {}).content).toBe('error: missing input: text');
    expect(runSync(echo, null).content).toBe('error: invalid input: expected an object, got null');
  });
});

describe('describeIssues', () => {
  it('runs the doc comment example', () => {
    expect(describeIssues([{ message: 'Required', path: ['city'] }, { message: 'Expected object' }])).toBe(
      'error: invalid input: city: Required; input: Expected object',
    );
  });
});
