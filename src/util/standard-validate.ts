import type { StandardSchemaV1 } from '../types.js';
import { isPromiseLike, kindOf } from './values.js';

/** What a Standard Schema validator said of a value: its output, its issues, or why it said nothing usable. */
export type Validation =
  | { kind: 'valid'; value: unknown }
  | { kind: 'invalid'; issues: ReadonlyArray<StandardSchemaV1.Issue> }
  | { kind: 'failed'; error: unknown };

/**
 * Asks `schema` about `value` (R24 for a tool's input, J2 for an answer): synchronous when the validator is — no
 * Promise hop for most tools (R12) — else a Promise that never rejects. A validator that throws, rejects or answers
 * something that is neither `{ value }` nor `{ issues }` is `failed`, with an error that says what it answered.
 *
 * ```ts
 * validateStandard(z.object({ city: z.string() }), { city: 'Oslo' }); // { kind: 'valid', value: { city: 'Oslo' } }
 * ```
 */
export function validateStandard(schema: StandardSchemaV1, value: unknown): Validation | Promise<Validation> {
  let result: unknown;
  try {
    result = schema['~standard'].validate(value);
  } catch (error) {
    return { kind: 'failed', error };
  }
  if (!isPromiseLike(result)) return validation(result);
  // Promise.resolve: a thenable whose `then` throws rejects instead of throwing here
  return Promise.resolve(result).then(validation, (error: unknown): Validation => ({ kind: 'failed', error }));
}

function validation(result: unknown): Validation {
  if (typeof result !== 'object' || result === null) {
    return { kind: 'failed', error: new TypeError(`schema validator returned ${kindOf(result)}; expected { value } or { issues }`) };
  }
  const { issues, value } = result as { issues?: unknown; value?: unknown };
  if (issues === undefined) return { kind: 'valid', value }; // the validator's output, whatever its type
  if (!Array.isArray(issues)) return { kind: 'failed', error: new TypeError(`schema validator returned issues that are ${kindOf(issues)}, not an array`) };
  return { kind: 'invalid', issues: issues as StandardSchemaV1.Issue[] };
}
