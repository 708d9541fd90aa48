/** R24: what `register` accepts and what `getSpecs` tells the model, for each kind of tool. */
import { z } from 'zod';
import { JsonSchemaObject, StandardSchemaV1, Tool, ToolRegistry, defineTool } from '../../src/index.js';

const handler = () => 'ok';
const validator: StandardSchemaV1 = { '~standard': { version: 1, vendor: 'double', validate: (value) => ({ value }) } };
const addSchema: JsonSchemaObject = {
  type: 'object',
  properties: { a: { type: 'number' }, b: { type: 'number' } },
  required: ['a', 'b'],
  additionalProperties: false,
};

describe('R24 getSpecs: one shape per kind of tool', () => {
  it('a series-style tool is { name, description, input }, exactly as in version 1', () => {
    const specs = new ToolRegistry().register({ name: 'read', description: 'Reads a file', input: { path: 'The file' }, handler }).getSpecs();
    expect(specs).toEqual([{ name: 'read', description: 'Reads a file', input: { path: 'The file' } }]);
    expect(Object.keys(specs[0]!)).toEqual(['name', 'description', 'input']);
  });

  it('an inputSchema tool is { name, description, inputSchema }, the schema as given (a frozen copy)', () => {
    const given = structuredClone(addSchema);
    const specs = new ToolRegistry().register({ name: 'add', description: 'Adds', inputSchema: given, handler }).getSpecs();
    expect(specs).toEqual([{ name: 'add', description: 'Adds', inputSchema: addSchema }]);
    expect(Object.keys(specs[0]!)).toEqual(['name', 'description', 'inputSchema']);
    expect(specs[0]!.inputSchema).not.toBe(given);
    expect(() => ((specs[0]!.inputSchema!.required as string[]).length = 0)).toThrow(TypeError);
    given.required = [];
    expect(specs[0]!.inputSchema!.required).toEqual(['a', 'b']);
  });

  it('a schema tool with an inputSchema is told that inputSchema', () => {
    const registry = new ToolRegistry().register({ name: 'add', description: 'Adds', schema: validator, inputSchema: addSchema, handler });
    expect(registry.getSpecs()).toEqual([{ name: 'add', description: 'Adds', inputSchema: addSchema }]);
  });

  it("a schema tool without one is told its validator's Standard JSON Schema (draft 2020-12)", () => {
    const targets: unknown[] = [];
    const described: StandardSchemaV1 = {
      '~standard': {
        ...validator['~standard'],
        jsonSchema: {
          input: (options: { target: string }) => (targets.push(options), { type: 'object', properties: { q: { type: 'string' } } }),
          output: () => ({}),
        },
      } as StandardSchemaV1['~standard'],
    };
    const registry = new ToolRegistry().register({ name: 'search', description: 'Searches', schema: described, handler });
    expect(registry.getSpecs()).toEqual([{ name: 'search', description: 'Searches', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } }]);
    expect(targets).toEqual([{ target: 'draft-2020-12' }]);
  });

  it('with zod 4: the JSON Schema zod makes of the input', () => {
    const weather = defineTool({
      name: 'get_weather',
      description: 'Current weather for a city',
      schema: z.object({ city: z.string().describe('The city'), unit: z.enum(['C', 'F']).optional() }),
      handler: ({ city }) => city,
    });
    const [spec] = new ToolRegistry().register(weather).getSpecs();
    expect(spec).toEqual({
      name: 'get_weather',
      description: 'Current weather for a city',
      inputSchema: expect.objectContaining({
        type: 'object',
        properties: { city: { type: 'string', description: 'The city' }, unit: { type: 'string', enum: ['C', 'F'] } },
        required: ['city'],
      }) as unknown,
    });
  });

  it('keeps registration order across kinds', () => {
    const registry = new ToolRegistry()
      .register({ name: 'b', description: '', inputSchema: { type: 'object' }, handler })
      .register({ name: 'a', description: '', input: {}, handler })
      .register({ name: 'c', description: '', schema: validator, inputSchema: { type: 'object' }, handler });
    expect(registry.getSpecs().map((spec) => spec.name)).toEqual(['b', 'a', 'c']);
  });
});

describe('R24 register refuses a tool whose input it cannot describe, naming it', () => {
  it.each<[string, Partial<Tool>, RegExp]>([
    ['a schema with no JSON Schema', { schema: validator }, /^ToolRegistry: tool "t" has a schema without a JSON Schema for the model: give it an inputSchema/],
    ['a schema that is not a Standard Schema', { schema: { parse: () => ({}) } as never, inputSchema: { type: 'object' } }, /"t" has a schema that is not a Standard Schema validator/],
    ['a Standard Schema of another version', { schema: { '~standard': { version: 2, vendor: 'x', validate: () => ({ value: 1 }) } } as never, inputSchema: { type: 'object' } }, /"t" has a schema that is not a Standard Schema/],
    ['an inputSchema that does not describe an object', { inputSchema: { type: 'string' } as never }, /"t" needs a JSON Schema object with type 'object' to tell the model \(got \{"type":"string"\}, an object\)/],
    ['an inputSchema that is not an object', { inputSchema: 'object' as never }, /"t" needs a JSON Schema object with type 'object'/],
    ['a validator whose JSON Schema is not an object schema', { schema: z.string() }, /"t" needs a JSON Schema object with type 'object'/],
    ['an inputSchema that is not JSON', { inputSchema: { type: 'object', default: () => 1 } }, /"t" has an inputSchema that is not plain JSON/],
    ['input and inputSchema', { input: {}, inputSchema: { type: 'object' } }, /"t" describes its input twice \(input, inputSchema\)/],
    ['input and schema', { input: {}, schema: validator }, /"t" describes its input twice \(input, schema\)/],
    ['nothing at all', {}, /"t" needs an input object \(parameter name -> description\), an inputSchema or a schema/],
  ])('%s', (_label, parts, message) => {
    const registry = new ToolRegistry();
    expect(() => registry.register({ name: 't', description: '', handler, ...parts } as Tool)).toThrow(message);
    expect(registry.getSpecs()).toEqual([]);
    expect(registry.get('t')).toBeUndefined();
  });

  it('a validator whose JSON Schema conversion throws', () => {
    const throwing = {
      '~standard': { ...validator['~standard'], jsonSchema: { input: () => { throw new Error('cannot represent a transform'); }, output: () => ({}) } },
    } as StandardSchemaV1;
    expect(() => new ToolRegistry().register({ name: 't', description: '', schema: throwing, handler })).toThrow(
      'ToolRegistry: tool "t" has a schema whose JSON Schema could not be made: cannot represent a transform',
    );
  });
});
