import { deepFreeze, isStandardSchema, jsonSchemaOf } from '../tools/tool-spec.js';
import type { JsonSchemaObject, StandardSchemaV1 } from '../types.js';
import { errorText, isPlainObject, shown } from '../util/values.js';

/**
 * J1–J4: the typed answer a loop is asked for — a Standard Schema validator (`schema`: it validates the
 * answer, and its own JSON Schema is what the model is told, as for tools, R24), or only a JSON Schema
 * (`jsonSchema`: then only `required` and the types are checked locally). Exactly one of the two, unless
 * `jsonSchema` is what the model is told about a `schema` that describes itself in no JSON Schema.
 * `name` (default `'answer'`) names the schema to the API.
 *
 * ```ts
 * const output: OutputSpec<typeof weather> = { schema: weather }; // weather = z.object({ city: z.string(), celsius: z.number() })
 * ```
 */
export interface OutputSpec<S extends StandardSchemaV1 = StandardSchemaV1> {
  schema?: S;
  jsonSchema?: JsonSchemaObject;
  name?: string;
}

/** J4: the type of a typed answer, `loop_end.output`: the validator's output type (`unknown` with only a JSON Schema). */
export type OutputOf<S extends StandardSchemaV1> = StandardSchemaV1.InferOutput<S>;

/** The answer the loop asks for, checked at call time: what the provider is told, and the validator, if any. */
export interface OutputSettings {
  /** What each answer turn's `ProviderInput.output` is (J1): a frozen copy. */
  readonly request: { readonly name: string; readonly schema: JsonSchemaObject };
  /** The validator that decides, or none: only `required` and the types of `request.schema` are checked. */
  readonly schema: StandardSchemaV1 | undefined;
}

/**
 * R20, J1: `output` checked when the loop is made, so a bad one is a `TypeError` that names it, never a failed
 * run: an object with a `schema` that is a Standard Schema validator or a `jsonSchema` (both only when the
 * validator has no JSON Schema of its own), a JSON Schema of an object (`type: 'object'`, as every API's
 * structured output takes) that JSON can write, and a non-empty `name` of letters, digits, `_` and `-`.
 *
 * ```ts
 * outputSettings({ schema: z.object({ city: z.string() }) }, 'runEventedToolLoop');
 * // { request: { name: 'answer', schema: { type: 'object', properties: { city: … }, required: ['city'], … } }, schema }
 * outputSettings({}, 'runEventedToolLoop'); // TypeError: runEventedToolLoop: output needs a schema or a jsonSchema (got {}, an object)
 * ```
 */
export function outputSettings(output: unknown, who: string): OutputSettings {
  const wrong = (what: string, value: unknown) => new TypeError(`${who}: output${what} (got ${shown(value)})`);
  if (!isPlainObject(output)) throw wrong(' must be an object { schema?, jsonSchema?, name? }', output);
  const { schema, jsonSchema, name = 'answer' } = output as OutputSpec;
  if (typeof name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(name)) {
    throw wrong('.name must be 1 to 64 letters, digits, _ or - (what the model APIs take)', name);
  }
  if (schema === undefined && jsonSchema === undefined) throw wrong(' needs a schema or a jsonSchema', output);
  if (schema !== undefined && !isStandardSchema(schema)) {
    throw wrong('.schema must be a Standard Schema validator (a ~standard with version 1 and a validate function)', schema);
  }
  let told: unknown = jsonSchema;
  if (schema !== undefined) {
    const own = jsonSchemaOf(schema, (problem) => new TypeError(`${who}: output.schema ${problem.replace(/^has a schema whose /, '')}`));
    if (own !== undefined && jsonSchema !== undefined) {
      throw wrong(' takes a schema or a jsonSchema, not both: this schema has a JSON Schema of its own', output);
    }
    if (own === undefined && jsonSchema === undefined) {
      throw wrong('.schema has no JSON Schema to tell the model: give a jsonSchema with it, or use a validator that implements Standard JSON Schema (zod 4 does)', schema);
    }
    told = own ?? jsonSchema;
  }
  const field = jsonSchema !== undefined ? 'jsonSchema' : 'schema';
  if (!isPlainObject(told) || told.type !== 'object') {
    throw wrong(`.${field} must describe an object (a JSON Schema with type 'object', as the APIs' structured output takes)`, told);
  }
  const { required } = told;
  if (required !== undefined && (!Array.isArray(required) || !required.every((key) => typeof key === 'string'))) {
    throw wrong(`.${field}'s required must be an array of strings`, required);
  }
  let copy: JsonSchemaObject;
  try {
    copy = JSON.parse(JSON.stringify(told)) as JsonSchemaObject; // every request writes it as JSON
  } catch (error) {
    throw new TypeError(`${who}: output.${field} must be plain JSON: ${errorText(error)}`);
  }
  return { request: deepFreeze({ name, schema: copy }), schema };
}
