import { errorText, isPlainObject, shown } from '../util/values.js';
import type { JsonSchemaObject, StandardJSONSchemaV1, StandardSchemaV1, Tool, ToolSpec } from '../types.js';

/**
 * R24: what the model is told about `tool`, checked once, at registration. A series-style tool (`input`)
 * keeps its version 1 spec `{ name, description, input }`; any other tool becomes `{ name, description,
 * inputSchema }`: its own `inputSchema`, else its validator's Standard JSON Schema. Throws an `Error` naming
 * the tool when its input is described in no way, in two ways, or in a way the model cannot be told; a
 * `TypeError` naming it for what every model API refuses: a `description` that is not a string, an `input`
 * that is not a record of strings, a JSON Schema whose `required` is not an array of strings or that
 * `JSON.stringify` cannot write (a cycle, a BigInt). The spec is a deep, frozen copy, so handing it out is safe.
 *
 * ```ts
 * specOf({ name: 'read', description: 'Reads a file', input: { path: 'The file' }, handler });
 * // { name: 'read', description: 'Reads a file', input: { path: 'The file' } }
 * specOf({ name: 'weather', description: 'The weather', schema: z.object({ city: z.string() }), handler });
 * // { name: 'weather', description: 'The weather', inputSchema: { $schema: '…', type: 'object', properties: { city: { type: 'string' } }, required: ['city'], … } }
 * ```
 */
export function specOf(tool: Tool): ToolSpec {
  const { name, description } = tool;
  const fail = (problem: string) => new Error(`ToolRegistry: tool "${name}" ${problem}`);
  const wrong: Wrong = (problem, ...value) => new TypeError(`ToolRegistry: tool "${name}" ${problem}${value.length === 0 ? '' : ` (got ${shown(value[0])})`}`);
  // what every model API refuses, refused here rather than in every request (left open in version 2, now decided)
  if (typeof description !== 'string') throw wrong('needs a string description', description);
  const given = (['input', 'inputSchema', 'schema'] as const).filter((key) => tool[key] !== undefined);
  // `schema` may come with an `inputSchema` (what the model is told); any other pair is ambiguous
  if (given.includes('input') && given.length > 1) {
    throw fail(`describes its input twice (${given.join(', ')}): give input, inputSchema or schema`);
  }

  if (tool.schema !== undefined) {
    if (!isStandardSchema(tool.schema)) {
      throw fail(`has a schema that is not a Standard Schema validator (no '~standard' with version 1 and a validate function)`);
    }
    const inputSchema = tool.inputSchema ?? jsonSchemaOf(tool.schema, fail);
    if (inputSchema === undefined) {
      throw fail(
        'has a schema without a JSON Schema for the model: give it an inputSchema, or use a validator that implements Standard JSON Schema',
      );
    }
    return Object.freeze({ name, description, inputSchema: objectSchema(inputSchema, fail, wrong) });
  }
  if (tool.inputSchema !== undefined) return Object.freeze({ name, description, inputSchema: objectSchema(tool.inputSchema, fail, wrong) });
  const { input } = tool;
  if (input === undefined || input === null) throw fail('needs an input object (parameter name -> description), an inputSchema or a schema');
  if (!isPlainObject(input)) throw wrong('needs input to be a record of strings (parameter name -> description)', input);
  for (const key of Object.keys(input)) {
    if (typeof input[key] !== 'string') throw wrong(`needs input to be a record of strings (parameter name -> description): input.${key} is not a string`, input[key]);
  }
  return Object.freeze({ name, description, input: Object.freeze({ ...input }) });
}

/** A `TypeError` naming the tool and the problem, and showing the wrong value when there is one. */
type Wrong = (problem: string, ...value: [unknown?]) => TypeError;

/** Whether `value` is a Standard Schema validator: a `~standard` with version 1 and a `validate` function. */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  const props = (value as Partial<StandardSchemaV1>)['~standard'];
  return typeof props === 'object' && props !== null && props.version === 1 && typeof props.validate === 'function';
}

/** The validator's own JSON Schema of its input, when it implements Standard JSON Schema; else undefined (J1 asks it too). */
export function jsonSchemaOf(schema: StandardSchemaV1, fail: (problem: string) => Error): unknown {
  const converter = (schema['~standard'] as Partial<StandardJSONSchemaV1.Props>).jsonSchema;
  if (typeof converter?.input !== 'function') return undefined;
  try {
    return converter.input({ target: 'draft-2020-12' });
  } catch (error) {
    throw fail(`has a schema whose JSON Schema could not be made: ${errorText(error)}`);
  }
}

/**
 * A deep copy of a JSON Schema object (`type: 'object'`), frozen; an `Error` for anything else, and a
 * `TypeError` for what every API refuses: a `required` that is not an array of strings, a schema that
 * `JSON.stringify` (every request) cannot write — a cycle, a BigInt.
 */
function objectSchema(value: unknown, fail: (problem: string) => Error, wrong: Wrong): JsonSchemaObject {
  if (!isPlainObject(value) || value.type !== 'object') {
    throw fail(`needs a JSON Schema object with type 'object' to tell the model (got ${shown(value)})`);
  }
  const { required } = value;
  if (required !== undefined && (!Array.isArray(required) || !required.every((key) => typeof key === 'string'))) {
    throw wrong('has an inputSchema whose required is not an array of strings', required);
  }
  try {
    JSON.stringify(value);
  } catch (error) {
    throw wrong(`has an inputSchema that does not survive JSON.stringify: ${errorText(error)}`);
  }
  let copy: JsonSchemaObject;
  try {
    copy = structuredClone(value) as JsonSchemaObject;
  } catch {
    throw fail('has an inputSchema that is not plain JSON');
  }
  return deepFreeze(copy);
}

/** `value`, frozen all the way down. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}
