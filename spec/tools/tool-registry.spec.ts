import { runInNewContext } from 'node:vm';
import { Observable, lastValueFrom, of, throwError, toArray } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { ToolRegistry, ToolResultMessage } from '../../src/index.js';
import { callOf, collectSync, tool } from '../support/events.js';

const resultOf = (registry: ToolRegistry, name: string, input: unknown = {}): Promise<ToolResultMessage> =>
  lastValueFrom(registry.run({ id: 'c1', name, input: input as Record<string, unknown> }));

describe('ToolRegistry', () => {
  describe('R15 register / getSpecs', () => {
    it('throws an Error naming the tool for a duplicate name', () => {
      const registry = new ToolRegistry().register(tool('read', () => 'x'));
      expect(() => registry.register(tool('read', () => 'y'))).toThrow(/"read"/);
    });

    it('throws an Error for an empty or missing name', () => {
      expect(() => new ToolRegistry().register(tool('', () => 'x'))).toThrow(/non-empty name \(got ""\)/);
      expect(() => new ToolRegistry().register({ description: 'd', input: {} } as never)).toThrow(Error);
    });

    it('R21: throws an Error naming the tool for a name that the APIs reject', () => {
      const rule = 'is a tool name that the APIs reject: it must match ^[a-zA-Z0-9_-]{1,64}$';
      for (const name of ['get weather', 'fs.read', 'ls/dir', 'émoji', 'a'.repeat(65), 'tab\t']) {
        expect(() => new ToolRegistry().register(tool(name, () => 'x'))).toThrow(new Error(`ToolRegistry: "${name}" ${rule}`));
      }
      // the empty name keeps R15's own message
      expect(() => new ToolRegistry().register(tool('', () => 'x'))).toThrow(/non-empty name/);
      const registry = new ToolRegistry();
      for (const name of ['a', 'a'.repeat(64), 'get_weather', 'read-file', 'Tool9', '__proto__', 'constructor', 'toString']) {
        registry.register(tool(name, () => 'x'));
      }
      expect(registry.getSpecs()).toHaveLength(8);
    });

    it('throws an Error naming the tool when the handler or input is missing', () => {
      expect(() => new ToolRegistry().register({ name: 'h', description: '', input: {} } as never)).toThrow(/"h" has no handler/);
      expect(() => new ToolRegistry().register({ name: 'i', description: '', handler: () => '' } as never)).toThrow(/"i" needs an input/);
    });

    it('R15: register refuses a description that is not a string, with a TypeError naming the tool', () => {
      for (const description of [undefined, 3, null, { text: 'd' }]) {
        expect(() => new ToolRegistry().register({ ...tool('t', () => 'x'), description } as never)).toThrow(
          new TypeError(`ToolRegistry: tool "t" needs a string description (got ${description === undefined || description === null ? String(description) : JSON.stringify(description) + (typeof description === 'number' ? ', a number' : ', an object')})`),
        );
      }
    });

    it('R15: register refuses an input that is not a record of strings, naming the tool and the key', () => {
      expect(() => new ToolRegistry().register(tool('t', () => 'x', { city: 3 } as never))).toThrow(
        new TypeError('ToolRegistry: tool "t" needs input to be a record of strings (parameter name -> description): input.city is not a string (got 3, a number)'),
      );
      expect(() => new ToolRegistry().register(tool('t', () => 'x', ['city'] as never))).toThrow(
        new TypeError('ToolRegistry: tool "t" needs input to be a record of strings (parameter name -> description) (got ["city"], an array)'),
      );
      expect(() => new ToolRegistry().register(tool('t', () => 'x', 'city' as never))).toThrow(/tool "t" needs input to be a record of strings/);
    });

    it('R15: register refuses an inputSchema whose required is not an array of strings', () => {
      const withSchema = (inputSchema: unknown) => ({ name: 's', description: 'd', inputSchema, handler: () => 'x' }) as never;
      expect(() => new ToolRegistry().register(withSchema({ type: 'object', required: 'city' }))).toThrow(
        new TypeError('ToolRegistry: tool "s" has an inputSchema whose required is not an array of strings (got "city", a string)'),
      );
      expect(() => new ToolRegistry().register(withSchema({ type: 'object', required: ['city', 2] }))).toThrow(/tool "s" has an inputSchema whose required is not an array of strings/);
      expect(new ToolRegistry().register(withSchema({ type: 'object', required: ['city'] })).getSpecs()[0]!.inputSchema!.required).toEqual(['city']);
    });

    it('R15: register refuses a schema that does not survive JSON.stringify (a cycle, a BigInt)', () => {
      const cyclic: Record<string, unknown> = { type: 'object', properties: {} };
      (cyclic.properties as Record<string, unknown>).self = cyclic;
      const withSchema = (inputSchema: unknown) => ({ name: 's', description: 'd', inputSchema, handler: () => 'x' }) as never;
      expect(() => new ToolRegistry().register(withSchema(cyclic))).toThrow(/^ToolRegistry: tool "s" has an inputSchema that does not survive JSON.stringify: Converting circular structure/);
      expect(() => new ToolRegistry().register(withSchema({ type: 'object', properties: { n: { default: 1n } } }))).toThrow(
        new TypeError('ToolRegistry: tool "s" has an inputSchema that does not survive JSON.stringify: Do not know how to serialize a BigInt'),
      );
    });

    it('returns the specs without handlers, in registration order, as copies', () => {
      const registry = new ToolRegistry()
        .register(tool('b', () => '', { path: 'file to read' }))
        .register(tool('a', () => ''));
      const specs = registry.getSpecs();
      expect(specs).toEqual([
        { name: 'b', description: 'the b tool', input: { path: 'file to read' } },
        { name: 'a', description: 'the a tool', input: {} },
      ]);
      expect(() => (specs[0]!.input!.path = 'changed')).toThrow(TypeError);
      specs.pop();
      expect(registry.getSpecs()).toHaveLength(2);
      expect(registry.getSpecs()[0]!.input!.path).toBe('file to read');
      expect('handler' in registry.getSpecs()[0]!).toBe(false);
    });
  });

  it('R15: unregister removes a tool (its spec too) and says whether there was one; a later call is an unknown tool', async () => {
    const echo = tool('echo', (input) => input.text, { text: 'what' });
    const registry = new ToolRegistry().register(echo).register({ ...echo, name: 'other' });
    expect(registry.unregister('echo')).toBe(true);
    expect(registry.unregister('echo')).toBe(false);
    expect(registry.getSpecs().map((spec) => spec.name)).toEqual(['other']);
    expect(registry.get('echo')).toBeUndefined();
    const result = await resultOf(registry, 'echo', { text: 'x' });
    expect(result).toMatchObject({ content: 'unknown tool: echo', isError: true });
    registry.register(echo); // the name is free again
    expect(registry.getSpecs().map((spec) => spec.name)).toEqual(['other', 'echo']);
  });

  describe('R13 series-compatible tools', () => {
    it('registers and runs a tool written as in the series', async () => {
      const registry = new ToolRegistry();
      registry.register({
        name: 'echo',
        description: 'echo the text',
        input: { text: 'what to echo' },
        handler: (input: Record<string, string>) => `echo: ${input.text}`,
      });
      await expect(resultOf(registry, 'echo', { text: 'hi' })).resolves.toEqual({
        role: 'toolResult',
        toolCallId: 'c1',
        toolName: 'echo',
        content: 'echo: hi',
        isError: false,
      });
    });
  });

  describe('R15 run is cold and emits exactly one result', () => {
    it('runs the handler only on subscribe, once per subscription', () => {
      let runs = 0;
      const registry = new ToolRegistry().register(tool('count', () => String(++runs)));
      const run = registry.run(callOf('c1', 'count'));
      expect(runs).toBe(0);
      expect(collectSync(run).values.map((m) => m.content)).toEqual(['1']);
      expect(collectSync(run).values.map((m) => m.content)).toEqual(['2']);
    });

    it('emits one result and completes for every kind of handler', async () => {
      const registry = new ToolRegistry()
        .register(tool('sync', () => 's'))
        .register(tool('promise', async () => 'p'))
        .register(tool('observable', () => of('o1', 'o2')));
      for (const name of ['sync', 'promise', 'observable']) {
        const results = await lastValueFrom(registry.run(callOf('c', name)).pipe(toArray()));
        expect(results).toHaveLength(1);
      }
    });
  });

  describe('R15 run checks its arguments at call time', () => {
    const registry = new ToolRegistry().register(tool('a', () => 'A'));
    it.each([
      ['undefined', undefined, 'undefined'],
      ['a string', 'a', '"a", a string'],
      ['an object without an id', { name: 'a', input: {} }, '{"name":"a","input":{}}, an object'],
      ['an object whose name is not a string', { id: 'c1', name: 3, input: {} }, '{"id":"c1","name":3,"input":{}}, an object'],
    ])('R15: run with a call that is %s throws a TypeError at once', (_label, value, got) => {
      expect(() => registry.run(value as never)).toThrow(new TypeError(`ToolRegistry.run: call must be a ToolCall { id: string, name: string, input } (got ${got})`));
    });

    it.each([
      ['a string', 'stop', '"stop", a string'],
      ['a Map', new Map(), '{}, a Map'],
      ['null', null, 'null'],
    ])('R15: run with a signal that is %s throws a TypeError at once', (_label, signal, got) => {
      expect(() => registry.run(callOf('c1', 'a'), signal as never)).toThrow(new TypeError(`ToolRegistry.run: signal must be an AbortSignal (got ${got})`));
    });

    it('R15: run with a real call and signal (or none) is fine', () => {
      expect(collectSync(registry.run(callOf('c1', 'a'), new AbortController().signal)).values.map((m) => m.content)).toEqual(['A']);
      expect(collectSync(registry.run(callOf('c1', 'a'))).values.map((m) => m.content)).toEqual(['A']);
    });
  });

  describe('R14 tool outputs', () => {
    const registry = new ToolRegistry()
      .register(tool('string', () => 'plain'))
      .register(tool('output', () => ({ content: 'bad', isError: true, details: { code: 7 } })))
      .register(tool('promise', () => Promise.resolve('later')))
      .register(tool('promiseOutput', () => Promise.resolve({ content: 'later output' })))
      .register(tool('observable', () => of('first', { content: 'last', details: [1] })));

    it.each([
      ['string', { content: 'plain', isError: false }],
      ['output', { content: 'bad', isError: true, details: { code: 7 } }],
      ['promise', { content: 'later', isError: false }],
      ['promiseOutput', { content: 'later output', isError: false }],
      ['observable', { content: 'last', isError: false, details: [1] }],
    ])('%s', async (name, expected) => {
      await expect(resultOf(registry, name)).resolves.toEqual({ role: 'toolResult', toolCallId: 'c1', toolName: name, ...expected });
    });

    it('a value that is neither a string nor a ToolOutput is an error result', async () => {
      const bad = new ToolRegistry().register(tool('bad', () => 42 as unknown as string));
      await expect(resultOf(bad, 'bad')).resolves.toMatchObject({
        content: 'error: tool returned a number; expected a string or { content: string }',
        isError: true,
      });
    });
  });

  describe('R9 tool failures become results', () => {
    const registry = new ToolRegistry()
      .register(tool('throws', () => {
        throw new Error('disk full');
      }))
      .register(tool('rejects', () => Promise.reject(new Error('timeout upstream'))))
      .register(tool('errors', () => throwError(() => new Error('stream broke'))))
      .register(tool('throwsString', () => {
        throw 'plain string';
      }))
      .register(tool('empty', () => new Observable<string>((s) => s.complete())))
      .register(tool('needsPath', () => 'ran', { path: 'the file' }));

    it.each([
      ['unknown', 'unknown tool: unknown'],
      ['empty', 'error: tool produced no result'],
      ['needsPath', 'error: missing input: path'],
    ])('%s -> %s', async (name, content) => {
      await expect(resultOf(registry, name)).resolves.toEqual({
        role: 'toolResult',
        toolCallId: 'c1',
        toolName: name,
        content,
        isError: true,
      });
    });

    it.each([
      ['throws', 'error: disk full', { name: 'Error', message: 'disk full', stack: expect.stringContaining('Error: disk full') }],
      ['rejects', 'error: timeout upstream', { name: 'Error', message: 'timeout upstream', stack: expect.any(String) }],
      ['errors', 'error: stream broke', { name: 'Error', message: 'stream broke', stack: expect.any(String) }],
      ['throwsString', 'error: plain string', { name: 'Error', message: 'plain string' }],
    ])('%s -> %s, the cause kept in details.error (R25)', async (name, content, error) => {
      const result = await resultOf(registry, name);
      expect(result).toEqual({ role: 'toolResult', toolCallId: 'c1', toolName: name, content, isError: true, details: { error } });
      expect(JSON.parse(JSON.stringify(result))).toEqual(result); // plain JSON: a history stays saveable (C5)
    });

    it('R25: the cause of an error of another class keeps its name, and a thrown object its JSON as message', async () => {
      const registry = new ToolRegistry()
        .register(tool('typed', () => { throw new TypeError('bad type'); }))
        .register(tool('object', () => { throw { code: 42 }; }));
      expect((await resultOf(registry, 'typed')).details).toEqual({ error: { name: 'TypeError', message: 'bad type', stack: expect.any(String) } });
      expect(await resultOf(registry, 'object')).toMatchObject({ content: 'error: {"code":42}', details: { error: { name: 'Error', message: '{"code":42}' } } });
    });

    it('a thenable whose then throws is an error result', async () => {
      const thenable = { then: () => { throw new Error('bad thenable'); } } as unknown as PromiseLike<string>;
      const registry = new ToolRegistry().register(tool('odd', () => thenable));
      await expect(resultOf(registry, 'odd')).resolves.toMatchObject({ content: 'error: bad thenable', isError: true });
    });

    it('reads the message of an error from another realm', async () => {
      const foreign = runInNewContext('new Error("far away")') as unknown;
      const registry = new ToolRegistry().register(tool('far', () => Promise.reject(foreign)));
      expect(foreign instanceof Error).toBe(false);
      await expect(resultOf(registry, 'far')).resolves.toMatchObject({ content: 'error: far away', isError: true });
    });

    it('does not run the handler when a listed input is missing', async () => {
      const handler = jest.fn(() => 'ran');
      const strict = new ToolRegistry().register(tool('strict', handler, { a: 'first', b: 'second' }));
      await expect(resultOf(strict, 'strict', { a: 1 })).resolves.toMatchObject({ content: 'error: missing input: b' });
      expect(handler).not.toHaveBeenCalled();
    });
  });

  describe('R17 hostile names and inputs', () => {
    it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])('%s is unknown until registered, then a real tool', async (name) => {
      const registry = new ToolRegistry();
      await expect(resultOf(registry, name)).resolves.toMatchObject({ content: `unknown tool: ${name}`, isError: true });
      registry.register(tool(name, () => `I am ${name}`));
      await expect(resultOf(registry, name)).resolves.toMatchObject({ content: `I am ${name}`, isError: false });
      expect(registry.getSpecs().map((spec) => spec.name)).toEqual([name]);
    });

    it.each([
      ['null', null],
      ['an array', ['a']],
      ['a string', 'text'],
    ])('input that is %s is an error result and the handler does not run', async (_label, input) => {
      const handler = jest.fn(() => 'ran');
      const registry = new ToolRegistry().register(tool('t', handler));
      const result = await resultOf(registry, 't', input);
      expect(result.content).toMatch(/^error: invalid input/);
      expect(result.isError).toBe(true);
      expect(handler).not.toHaveBeenCalled();
    });
  });

  describe('R11 teardown', () => {
    it('unsubscribing aborts the handler signal and unsubscribes an Observable tool', () => {
      let signal: AbortSignal | undefined;
      new TestScheduler((a, b) => expect(a).toEqual(b)).run(({ cold, expectObservable, expectSubscriptions }) => {
        const work = cold<string>('-----x|');
        const registry = new ToolRegistry().register(
          tool('slow', (_input, context) => {
            signal = context.signal;
            return work;
          }),
        );
        expectObservable(registry.run(callOf('c1', 'slow')), '^--!').toBe('---');
        expectSubscriptions(work.subscriptions).toBe('^--!');
      });
      expect(signal?.aborted).toBe(true);
    });

    it('the signal stays quiet when the tool finishes', async () => {
      let signal: AbortSignal | undefined;
      const registry = new ToolRegistry().register(
        tool('quick', async (_input, context) => {
          signal = context.signal;
          return 'done';
        }),
      );
      await resultOf(registry, 'quick');
      expect(signal?.aborted).toBe(false);
    });

    it('aborting run(call, signal) ends with error: aborted and aborts the handler', async () => {
      const controller = new AbortController();
      let seen: AbortSignal | undefined;
      const registry = new ToolRegistry().register(
        tool('hang', (_input, context) => {
          seen = context.signal;
          return new Promise<string>(() => undefined);
        }),
      );
      const result = lastValueFrom(registry.run(callOf('c1', 'hang'), controller.signal));
      controller.abort();
      await expect(result).resolves.toEqual({
        role: 'toolResult',
        toolCallId: 'c1',
        toolName: 'hang',
        content: 'error: aborted',
        isError: true,
      });
      expect(seen?.aborted).toBe(true);
    });
  });
});
