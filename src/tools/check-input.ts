import { isPlainObject, kindOf } from '../util/values.js';
import type { StandardSchemaV1, Tool } from '../types.js';
import { type Validation, validateStandard } from '../util/standard-validate.js';

/**
 * What the input check says about one call: run the handler with `input`, answer with `content` without
 * running it, or fail as the tool would (`error: MESSAGE`: a validator that throws is a tool failure).
 */
export type InputCheck =
  | { kind: 'valid'; input: Record<string, unknown> }
  | { kind: 'rejected'; content: string }
  | { kind: 'failed'; error: unknown };

/** An asynchronous validator's verdict, still to come. */
export interface PendingInputCheck {
  kind: 'pending';
  check: PromiseLike<InputCheck>;
}

/**
 * R9, R17, R24: may the handler run on `input`, and with what? With a `schema`, the validator alone
 * decides and the handler gets its output; without, the input must be a plain object holding every key
 * that `input` lists or `inputSchema.required` names. Synchronous unless the validator returns a Promise.
 *
 * ```ts
 * checkInput({ ...tool, input: { path: 'the file' } }, {});       // { kind: 'rejected', content: 'error: missing input: path' }
 * checkInput({ ...tool, schema: z.object({ city: z.string() }) }, { city: 1 });
 * // { kind: 'rejected', content: 'error: invalid input: city: Invalid input: expected string, received number' }
 * ```
 */
export function checkInput(tool: Tool, input: unknown): InputCheck | PendingInputCheck {
  if (tool.schema !== undefined) return validate(tool.schema, input);
  if (!isPlainObject(input)) return { kind: 'rejected', content: `error: invalid input: expected an object, got ${kindOf(input)}` };
  for (const key of requiredKeys(tool)) {
    if (!Object.prototype.hasOwnProperty.call(input, key) || input[key] === undefined) {
      return { kind: 'rejected', content: `error: missing input: ${key}` };
    }
  }
  return { kind: 'valid', input };
}

/**
 * `error: invalid input: PATH: MESSAGE` for each issue, joined by `; `; PATH is the issue's path keys
 * joined by `.`, or `input` for the root (R24).
 *
 * ```ts
 * describeIssues([{ message: 'Required', path: ['city'] }, { message: 'Expected object' }]);
 * // 'error: invalid input: city: Required; input: Expected object'
 * ```
 */
export function describeIssues(issues: ReadonlyArray<StandardSchemaV1.Issue>): string {
  if (issues.length === 0) return 'error: invalid input';
  return `error: invalid input: ${issuesText(issues, 'input')}`;
}

/**
 * `PATH: MESSAGE` for each issue, joined by `; `: PATH is the issue's path keys joined by `.`, or `root` for
 * the root — a tool's input (R24) and a typed answer (J2) say their issues alike.
 *
 * ```ts
 * issuesText([{ message: 'Required', path: ['city'] }, { message: 'Expected object' }], 'answer');
 * // 'city: Required; answer: Expected object'
 * ```
 */
export function issuesText(issues: ReadonlyArray<StandardSchemaV1.Issue>, root: string): string {
  return issues.map((issue) => `${pathOf(issue, root)}: ${String(issue?.message)}`).join('; ');
}

function pathOf(issue: StandardSchemaV1.Issue, root: string): string {
  const path = Array.isArray(issue?.path) ? (issue.path as ReadonlyArray<PropertyKey | StandardSchemaV1.PathSegment>) : [];
  if (path.length === 0) return root;
  return path.map((segment) => String(typeof segment === 'object' && segment !== null ? segment.key : segment)).join('.');
}

function validate(schema: StandardSchemaV1, input: unknown): InputCheck | PendingInputCheck {
  const validation = validateStandard(schema, input);
  // a synchronous validator stays synchronous: no Promise hop for most tools (R12)
  return validation instanceof Promise ? { kind: 'pending', check: validation.then(inputCheck) } : inputCheck(validation);
}

function inputCheck(validation: Validation): InputCheck {
  switch (validation.kind) {
    case 'valid':
      return { kind: 'valid', input: validation.value as Record<string, unknown> };
    case 'invalid':
      return { kind: 'rejected', content: describeIssues(validation.issues) };
    case 'failed':
      return { kind: 'failed', error: validation.error };
  }
}

/** The keys a tool without a `schema` needs: those of `input`, or `inputSchema.required`. */
function requiredKeys(tool: Tool): string[] {
  const listed = tool.input === undefined || tool.input === null ? [] : Object.keys(tool.input);
  const required: unknown = tool.inputSchema?.required;
  return Array.isArray(required) ? [...listed, ...required.filter((key): key is string => typeof key === 'string')] : listed;
}

