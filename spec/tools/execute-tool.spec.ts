/** R23: executeTool says `tool_start` when a call's handler really starts, and only then. */
import { Observable, Subject, of, take } from 'rxjs';
import { StandardSchemaV1, Tool, ToolReturn, toolProgress } from '../../src/index.js';
import { ToolProgress, executeTool } from '../../src/tools/execute-tool.js';
import { callOf, collectSync, tool } from '../support/events.js';

/** A hand-written Standard Schema validator. */
function double(validate: (value: unknown) => StandardSchemaV1.Result<unknown> | Promise<StandardSchemaV1.Result<unknown>>): StandardSchemaV1 {
  return { '~standard': { version: 1, vendor: 'double', validate } };
}

const schemaTool = (schema: StandardSchemaV1, handler: Tool['handler']): Tool => ({ name: 't', description: 'the t tool', schema, inputSchema: { type: 'object' }, handler });

/** Each progress as a short line: `tool_start ID`, `tool_update CONTENT`, `settled CONTENT` (`approval ID`: H8, never without hooks). */
const line = (progress: ToolProgress): string => {
  if (progress.type === 'tool_start' || progress.type === 'approval') return `${progress.type} ${progress.call.id}`;
  return progress.type === 'tool_update' ? `tool_update ${progress.content}` : `settled ${progress.message.content}`;
};

/** Subscribes and collects; the Promise resolves once it completes. */
function play(source: Observable<ToolProgress>): { lines: string[]; done: Promise<string[]> } {
  const lines: string[] = [];
  const done = new Promise<string[]>((resolve, reject) =>
    source.subscribe({ next: (progress) => lines.push(line(progress)), error: reject, complete: () => resolve(lines) }),
  );
  return { lines, done };
}

describe('executeTool: tool_start (R23)', () => {
  describe('comes first, before the handler runs', () => {
    const kinds: [string, () => ToolReturn, number, string[]][] = [
      ['a synchronous value', () => 'ok', Infinity, ['settled ok']],
      ['a Promise', () => Promise.resolve('ok'), Infinity, ['settled ok']],
      ['a Promise, with a timeout', () => Promise.resolve('ok'), 1_000, ['settled ok']],
      ['an Observable', () => of(toolProgress('half'), 'ok'), Infinity, ['tool_update half', 'settled ok']],
      ['an Observable, with a timeout', () => of('first', 'ok'), 1_000, ['tool_update first', 'settled ok']],
      [
        'a handler that throws',
        () => {
          throw new Error('broke');
        },
        Infinity,
        ['settled error: broke'],
      ],
    ];

    it.each(kinds)('R23: %s', async (_label, returns, timeoutMs, after) => {
      const call = callOf('c1', 'work', { n: 1 });
      const seen: ToolProgress[] = [];
      const heard: ToolProgress[][] = [];
      const work = tool('work', () => {
        heard.push([...seen]);
        return returns();
      });
      await new Promise<void>((resolve) =>
        executeTool(work, call, timeoutMs).subscribe({ next: (progress) => seen.push(progress), complete: () => resolve() }),
      );
      // the handler ran once, when tool_start, and nothing else, had been emitted
      expect(heard).toEqual([[{ type: 'tool_start', call }]]);
      expect(seen[0]!.type === 'tool_start' && seen[0]!.call).toBe(call);
      expect(seen.map(line)).toEqual(['tool_start c1', ...after]);
    });

    it('R23: synchronously, in the frame of the subscribe, for a call that can start at once', () => {
      const { values, completed } = collectSync(executeTool(tool('now', () => 'noon'), callOf('c1', 'now')));
      expect(values.map(line)).toEqual(['tool_start c1', 'settled noon']);
      expect(completed).toBe(true);
    });
  });

  describe('never comes for a call whose handler does not run', () => {
    const handler = jest.fn(() => 'ran');
    beforeEach(() => handler.mockClear());

    it.each([
      ['R23: an unknown tool', undefined, {}, 'unknown tool: t'],
      ['R23, R17: an input that is not an object (null)', tool('t', handler), null, 'error: invalid input: expected an object, got null'],
      ['R23, R17: an input that is not an object (an array)', tool('t', handler), [1], 'error: invalid input: expected an object, got an array'],
      ['R23, R17: an input that is not an object (a string)', tool('t', handler), 'x', 'error: invalid input: expected an object, got a string'],
      ['R23, R17: a missing key of the input map', tool('t', handler, { path: 'a path' }), {}, 'error: missing input: path'],
      ['R23, R17: a missing key that inputSchema requires', { ...tool('t', handler), input: undefined, inputSchema: { type: 'object' as const, required: ['q'] } }, { q: undefined }, 'error: missing input: q'],
      ['R23, R24: a validator\'s issues', schemaTool(double(() => ({ issues: [{ message: 'Required', path: ['city'] }] })), handler), {}, 'error: invalid input: city: Required'],
      [
        'R23, R24: a validator that throws',
        schemaTool(
          double(() => {
            throw new Error('validator broke');
          }),
          handler,
        ),
        {},
        'error: validator broke',
      ],
      ['R23, R24: a validator that answers neither value nor issues', schemaTool(double(() => 42 as unknown as StandardSchemaV1.Result<unknown>), handler), {}, 'error: schema validator returned a number; expected { value } or { issues }'],
    ])('%s', (_label, t, input, content) => {
      const { values, completed } = collectSync(executeTool(t as Tool | undefined, callOf('c1', 't', input as Record<string, unknown>)));
      expect(values.map(line)).toEqual([`settled ${content}`]);
      expect(completed).toBe(true);
      expect(handler).not.toHaveBeenCalled();
    });
  });

  describe('an asynchronous validator', () => {
    /** A validator whose verdict the test gives. */
    function pending() {
      let answer!: (result: StandardSchemaV1.Result<unknown> | Promise<never>) => void;
      const schema = double(() => new Promise<StandardSchemaV1.Result<unknown>>((resolve) => (answer = resolve)));
      return { schema, answer: (result: StandardSchemaV1.Result<unknown> | Promise<never>) => answer(result) };
    }

    it('R23: tool_start only after its verdict, and the handler gets its output', async () => {
      const { schema, answer } = pending();
      const handler = jest.fn((input: Record<string, unknown>) => `ran on ${JSON.stringify(input)}`);
      const { lines, done } = play(executeTool(schemaTool(schema, handler), callOf('c1', 't', { a: 1 })));
      await Promise.resolve();
      await Promise.resolve();
      expect(lines).toEqual([]); // still validating: nothing started
      expect(handler).not.toHaveBeenCalled();
      answer({ value: { a: 1, checked: true } });
      await expect(done).resolves.toEqual(['tool_start c1', 'settled ran on {"a":1,"checked":true}']);
      expect(handler).toHaveBeenCalledTimes(1);
    });

    it('R23: no tool_start when it refuses the input, or rejects', async () => {
      const handler = jest.fn(() => 'ran');
      const refuses = pending();
      const refused = play(executeTool(schemaTool(refuses.schema, handler), callOf('c1', 't')));
      refuses.answer({ issues: [{ message: 'Unknown city', path: ['city'] }] });
      await expect(refused.done).resolves.toEqual(['settled error: invalid input: city: Unknown city']);

      const rejects = pending();
      const rejected = play(executeTool(schemaTool(rejects.schema, handler), callOf('c2', 't')));
      rejects.answer(Promise.reject(new Error('lookup failed')));
      await expect(rejected.done).resolves.toEqual(['settled error: lookup failed']);
      expect(handler).not.toHaveBeenCalled();
    });

    it('R23: unsubscribing before the verdict: no tool_start, and the handler never runs', async () => {
      const { schema, answer } = pending();
      const handler = jest.fn(() => 'ran');
      const lines: string[] = [];
      const subscription = executeTool(schemaTool(schema, handler), callOf('c1', 't')).subscribe((progress) => lines.push(line(progress)));
      subscription.unsubscribe();
      answer({ value: {} });
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(lines).toEqual([]);
      expect(handler).not.toHaveBeenCalled();
    });
  });

  describe('unsubscribing while tool_start is delivered', () => {
    it.each<[string, () => ToolReturn]>([
      ['a synchronous value', () => 'ran'],
      ['a Promise', () => Promise.resolve('ran')],
      ['an Observable', () => new Subject<string>()],
    ])('R23: %s: the handler never runs', (_label, returns) => {
      const handler = jest.fn(returns);
      const { values, completed } = collectSync(executeTool(tool('t', handler), callOf('c1', 't'), 1_000).pipe(take(1)));
      expect(values.map(line)).toEqual(['tool_start c1']);
      expect(completed).toBe(true);
      expect(handler).not.toHaveBeenCalled();
    });

    it('R23: after an asynchronous validator\'s verdict too', async () => {
      const handler = jest.fn(() => 'ran');
      const later = double(async (value) => ({ value }));
      const lines: string[] = [];
      await new Promise<void>((resolve) =>
        executeTool(schemaTool(later, handler), callOf('c1', 't'))
          .pipe(take(1))
          .subscribe({ next: (progress) => lines.push(line(progress)), complete: resolve }),
      );
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(lines).toEqual(['tool_start c1']);
      expect(handler).not.toHaveBeenCalled();
    });
  });
});

describe('executeTool: an Observable tool that sends a value that is no result (R9, R14)', () => {
  it.each([Infinity, 1_000])('R9, R14: (timeout %s) the value held back is progress, the result is the failure, the source is torn down and the signal aborted', async (timeoutMs) => {
    let torn = false;
    let signal: AbortSignal | undefined;
    const work = tool('work', (_input, context) => {
      signal = context.signal;
      // 42: a value the types forbid, as a JavaScript tool may send it
      return new Observable<unknown>((subscriber) => {
        subscriber.next('first');
        subscriber.next(42);
        subscriber.next('never seen');
        return () => {
          torn = true;
        };
      }) as unknown as ToolReturn;
    });
    const { done } = play(executeTool(work, callOf('c1', 'work', {}), timeoutMs));
    expect(await done).toEqual(['tool_start c1', 'tool_update first', 'settled error: tool returned a number; expected a string or { content: string }']);
    expect(torn).toBe(true);
    expect(signal?.aborted).toBe(true);
  });

  it.each([Infinity, 1_000])('R9, R14: (timeout %s) a tool that finishes by itself keeps its signal unaborted', async (timeoutMs) => {
    let signal: AbortSignal | undefined;
    const work = tool('work', (_input, context) => {
      signal = context.signal;
      return of('first', 'ok');
    });
    expect(await play(executeTool(work, callOf('c1', 'work', {}), timeoutMs)).done).toEqual(['tool_start c1', 'tool_update first', 'settled ok']);
    expect(signal?.aborted).toBe(false);
  });
});

describe('executeTool: an Observable tool value that is no result (R9, R14)', () => {
  it('R9: the value held back before it is progress, then the call fails, and the tool is torn down with its signal aborted', () => {
    let signal: AbortSignal | undefined;
    let more = false;
    const bad = tool('bad', (_input, context) => {
      signal = context.signal;
      return new Observable<unknown>((subscriber) => {
        subscriber.next('first');
        subscriber.next(42);
        more = !subscriber.closed;
      }) as ToolReturn; // a handler in plain JS can return any values
    });
    const { values, completed } = collectSync(executeTool(bad, callOf('c1', 'bad')));
    expect(values.map(line)).toEqual(['tool_start c1', 'tool_update first', 'settled error: tool returned a number; expected a string or { content: string }']);
    expect(completed).toBe(true);
    expect(more).toBe(false);
    expect(signal?.aborted).toBe(true);
  });
});
