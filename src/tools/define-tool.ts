import type { JsonSchemaObject, StandardSchemaV1, Tool, ToolContext, ToolReturn } from '../types.js';

/** What `defineTool` takes: a tool whose input a Standard Schema validator checks (R24). */
export interface ToolDefinition<Schema extends StandardSchemaV1> {
  name: string;
  description: string;
  /** Validates each call's input before the handler runs; its issues are the model's error result. */
  schema: Schema;
  /** What the model is told; default: the validator's own JSON Schema (Standard JSON Schema, as zod 4 has). */
  inputSchema?: JsonSchemaObject;
  /** Gets the validator's output: a property, not a method, so a handler typed against another shape does not compile. */
  handler: (input: StandardSchemaV1.InferOutput<Schema>, context: ToolContext) => ToolReturn;
}

/**
 * A `Tool` whose handler's input type is the validator's output type, so a misspelt field is a compile
 * error, and whose input is validated before the handler runs (R24).
 *
 * ```ts
 * // z: zod 4's, or any other Standard Schema library's
 * const weather = defineTool({
 *   name: 'get_weather',
 *   description: 'Current weather for a city',
 *   schema: z.object({ city: z.string(), unit: z.enum(['C', 'F']).default('C') }),
 *   handler: ({ city, unit }) => `20 ${unit} in ${city}`, // city: string, unit: 'C' | 'F'
 * });
 * new ToolRegistry().register(weather);
 * ```
 */
export function defineTool<Schema extends StandardSchemaV1>(definition: ToolDefinition<Schema>): Tool {
  const { name, description, schema, inputSchema, handler } = definition;
  const tool: Tool = {
    name,
    description,
    schema,
    // the loop hands the handler the validator's output (check-input.ts), which is what this type says
    handler: (input, context) => handler(input as StandardSchemaV1.InferOutput<Schema>, context),
  };
  if (inputSchema !== undefined) tool.inputSchema = inputSchema;
  return tool;
}
