/** J1, R20: `output` is checked when the loop is made — a bad one is a TypeError naming it, never a failed run. */
import { z } from 'zod';
import { JsonSchemaObject, StandardSchemaV1, ToolRegistry, conversation, runEventedToolLoop, scriptedProvider } from '../../src/index.js';
import { outputSettings } from '../../src/loop/output-spec.js';

const base = { provider: scriptedProvider([]), registry: new ToolRegistry(), messages: [] };
const bare: StandardSchemaV1 = { '~standard': { version: 1, vendor: 'by-hand', validate: (value) => ({ value }) } };
const jsonSchema: JsonSchemaObject = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
const make = (output: unknown) => () => runEventedToolLoop({ ...base, output: output as { schema: StandardSchemaV1 } });

describe('J1 output, checked at call time', () => {
  it('J1: a zod schema is told as its own JSON Schema (an object), named answer by default, frozen', () => {
    const settings = outputSettings({ schema: z.object({ city: z.string() }) }, 'runEventedToolLoop');
    expect(settings.request).toMatchObject({ name: 'answer', schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } });
    expect(Object.isFrozen(settings.request.schema)).toBe(true);
    expect(outputSettings({ jsonSchema, name: 'weather_report' }, 'x')).toEqual({ request: { name: 'weather_report', schema: jsonSchema }, schema: undefined });
    // a validator with no JSON Schema of its own is told the jsonSchema given with it
    expect(outputSettings({ schema: bare, jsonSchema }, 'x').request.schema).toEqual(jsonSchema);
  });

  it('J1: neither schema nor jsonSchema, or not an object: a TypeError naming output', () => {
    expect(make({})).toThrow(new TypeError('runEventedToolLoop: output needs a schema or a jsonSchema (got {}, an object)'));
    expect(make('answer')).toThrow(new TypeError('runEventedToolLoop: output must be an object { schema?, jsonSchema?, name? } (got "answer", a string)'));
    expect(make({ schema: { parse: () => 1 } })).toThrow(/^runEventedToolLoop: output\.schema must be a Standard Schema validator/);
  });

  it('J1: a schema with no JSON Schema of its own and no jsonSchema: a TypeError that says what to give', () => {
    expect(make({ schema: bare })).toThrow(TypeError);
    expect(make({ schema: bare })).toThrow(/output\.schema has no JSON Schema to tell the model: give a jsonSchema with it/);
  });

  it('J1: a schema with a JSON Schema of its own and a jsonSchema too: exactly one, a TypeError', () => {
    expect(make({ schema: z.object({ city: z.string() }), jsonSchema })).toThrow(/^runEventedToolLoop: output takes a schema or a jsonSchema, not both/);
  });

  it('J1: a schema that is not of an object, a bad required, JSON that cannot be written, a bad name: TypeErrors naming the field', () => {
    expect(make({ schema: z.string() })).toThrow(/^runEventedToolLoop: output\.schema must describe an object \(a JSON Schema with type 'object'/);
    expect(make({ jsonSchema: { type: 'array' } })).toThrow(/^runEventedToolLoop: output\.jsonSchema must describe an object/);
    expect(make({ jsonSchema: { type: 'object', required: 'city' } })).toThrow("runEventedToolLoop: output.jsonSchema's required must be an array of strings (got \"city\", a string)");
    expect(make({ jsonSchema: { type: 'object', big: 1n } })).toThrow(/^runEventedToolLoop: output\.jsonSchema must be plain JSON: /);
    expect(make({ jsonSchema, name: 'a b' })).toThrow(/^runEventedToolLoop: output\.name must be 1 to 64 letters, digits, _ or -/);
    expect(make({ jsonSchema, name: '' })).toThrow(TypeError);
  });

  it('J1: conversation() checks output the same way, in its own name', () => {
    expect(() => conversation({ provider: base.provider, registry: base.registry, output: {} })).toThrow(/^conversation: output needs a schema or a jsonSchema/);
  });

  it('J1: the settings are a copy: changing the jsonSchema afterwards changes nothing', () => {
    const given: JsonSchemaObject = { type: 'object', properties: { city: { type: 'string' } } };
    const settings = outputSettings({ jsonSchema: given }, 'x');
    given.properties!.city = { type: 'number' };
    expect(settings.request.schema.properties).toEqual({ city: { type: 'string' } });
  });
});
