/**
 * The tool names that the model APIs accept (OpenAI's function names, Anthropic's tool names): 1 to 64
 * letters, digits, `_` or `-`. A name outside it makes every request that carries it fail, so the
 * registry refuses it and so does the loop's message check (R21).
 *
 * ```ts
 * isToolName('get_weather'); // true
 * isToolName('get weather'); // false: the API would reject the request
 * ```
 */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Whether `name` is a string that {@link TOOL_NAME} matches. */
export function isToolName(name: unknown): name is string {
  return typeof name === 'string' && TOOL_NAME.test(name);
}
