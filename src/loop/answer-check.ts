import { issuesText } from '../tools/check-input.js';
import type { StandardSchemaV1 } from '../types.js';
import { errorText, isPlainObject } from '../util/values.js';
import type { OutputSettings } from './output-spec.js';
import { type Validation, validateStandard } from '../util/standard-validate.js';

/** J2: what an answer's text is worth — the typed value, or the issues that make it no answer (`PATH: MESSAGE; …`). */
export type AnswerVerdict = { valid: true; value: unknown } | { valid: false; issues: string };

/**
 * J2: the answer in `text`, parsed as JSON and validated: by the `schema` when there is one (its output is the
 * value), else by the JSON Schema's `required` and types alone. Issues read `PATH: MESSAGE`, joined by `; `,
 * the root named after the output (`answer: not JSON: Unexpected token …`). Synchronous unless the validator
 * returns a Promise; a validator that throws, rejects or answers no result is an issue too, named.
 *
 * ```ts
 * checkAnswer('{"city":1}', output);    // { valid: false, issues: 'city: Invalid input: expected string, received number' }
 * checkAnswer('{"city":"Oslo"}', output); // { valid: true, value: { city: 'Oslo' } }
 * ```
 */
export function checkAnswer(text: string, output: OutputSettings): AnswerVerdict | Promise<AnswerVerdict> {
  const root = output.request.name;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { valid: false, issues: `${root}: not JSON: ${errorText(error)}` };
  }
  if (output.schema === undefined) {
    const issues = jsonIssues(value, output.request.schema, []);
    return issues.length === 0 ? { valid: true, value } : { valid: false, issues: issuesText(issues, root) };
  }
  const validation = validateStandard(output.schema, value);
  return validation instanceof Promise ? validation.then((settled) => verdict(settled, root)) : verdict(validation, root);
}

function verdict(validation: Validation, root: string): AnswerVerdict {
  switch (validation.kind) {
    case 'valid':
      return { valid: true, value: validation.value };
    case 'invalid':
      return validation.issues.length === 0 ? { valid: false, issues: `${root}: invalid` } : { valid: false, issues: issuesText(validation.issues, root) };
    case 'failed':
      return { valid: false, issues: `${root}: the schema's validator failed: ${errorText(validation.error)}` };
  }
}

/**
 * `jsonSchema` alone (J2): the issues of `value` against the schema's `type` and `required`, followed into
 * `properties` and `items` — nothing else of JSON Schema is checked here (the API's structured output holds the rest).
 */
function jsonIssues(value: unknown, schema: unknown, path: PropertyKey[]): StandardSchemaV1.Issue[] {
  if (!isPlainObject(schema)) return [];
  const types = typeof schema.type === 'string' ? [schema.type] : Array.isArray(schema.type) ? schema.type.filter((t): t is string => typeof t === 'string') : [];
  const actual = jsonType(value);
  if (types.length > 0 && !types.some((type) => type === actual || (type === 'number' && actual === 'integer'))) {
    return [{ message: `expected ${types.join(' or ')}, got ${actual}`, path }];
  }
  const issues: StandardSchemaV1.Issue[] = [];
  if (isPlainObject(value)) {
    if (Array.isArray(schema.required)) {
      for (const key of schema.required) if (typeof key === 'string' && !(key in value)) issues.push({ message: 'required', path: [...path, key] });
    }
    if (isPlainObject(schema.properties)) {
      for (const [key, property] of Object.entries(schema.properties)) if (key in value) issues.push(...jsonIssues(value[key], property, [...path, key]));
    }
  } else if (Array.isArray(value) && isPlainObject(schema.items)) {
    value.forEach((item, index) => issues.push(...jsonIssues(item, schema.items, [...path, index])));
  }
  return issues;
}

/** A JSON value's type as JSON Schema names it (`integer` for a whole number, which `number` admits too). */
function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}
