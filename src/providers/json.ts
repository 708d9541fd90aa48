import { isPlainObject } from '../util/values.js';
import type { JsonSchemaObject, ToolSpec } from '../types.js';
import { WireError } from './http/error-text.js';

/** A series-style tool's inputs as the JSON Schema object the APIs expect: every listed input a required string (P2). */
export interface InputSchema extends JsonSchemaObject {
  type: 'object';
  properties: Record<string, { type: 'string'; description: string }>;
  required: string[];
}

/**
 * The JSON Schema a provider sends for a tool (R24, P2): its `inputSchema` as it is, or else its
 * series-style `input` map with every listed input a required string.
 *
 * ```ts
 * inputSchema({ name: 'read', description: 'Reads a file', input: { path: 'The file' } });
 * // { type: 'object', properties: { path: { type: 'string', description: 'The file' } }, required: ['path'] }
 * inputSchema({ name: 'add', description: 'Adds', inputSchema: { type: 'object', properties: { a: { type: 'number' } } } });
 * // { type: 'object', properties: { a: { type: 'number' } } }
 * ```
 */
export function inputSchema(spec: ToolSpec): JsonSchemaObject {
  return spec.inputSchema ?? stringInputs(spec.input ?? {});
}

/**
 * ```ts
 * stringInputs({ path: 'The file' });
 * // { type: 'object', properties: { path: { type: 'string', description: 'The file' } }, required: ['path'] }
 * ```
 */
export function stringInputs(input: Record<string, string>): InputSchema {
  // fromEntries defines own properties, so an input called `__proto__` stays an input
  const properties = Object.fromEntries(
    Object.entries(input).map(([name, description]) => [name, { type: 'string', description } as const]),
  );
  return { type: 'object', properties, required: Object.keys(input) };
}

/**
 * Parses a tool call's streamed arguments: `""` means no arguments; anything but a JSON object is a
 * `WireError` naming the tool.
 *
 * ```ts
 * parseArguments('{"city":"Paris"}', 'get_weather', 'call_1'); // { city: 'Paris' }
 * parseArguments('', 'current_time', 'call_2');                // {}
 * parseArguments('{"city":"Par', 'get_weather', 'call_3');     // throws: invalid JSON in the arguments of tool call get_weather (call_3): …
 * ```
 */
export function parseArguments(json: string, name: string, id: string): Record<string, unknown> {
  if (json.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new WireError(`invalid JSON in the arguments of tool call ${name} (${id}): ${(error as Error).message}`);
  }
  if (!isPlainObject(value)) {
    throw new WireError(`the arguments of tool call ${name} (${id}) are not a JSON object: ${json.slice(0, 200)}`);
  }
  return value as Record<string, unknown>;
}

/**
 * One event's `data` as JSON; a `WireError` quoting the start of it when it is not.
 *
 * ```ts
 * parseEventData('{"type":"ping"}'); // { type: 'ping' }
 * parseEventData('{"type":');        // throws: invalid JSON in the stream: {"type":
 * ```
 */
export function parseEventData(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    throw new WireError(`invalid JSON in the stream: ${data.slice(0, 200)}`);
  }
}
