import { z } from 'zod';
import type { FailureKind } from '../../src/providers/http/failure.js';
import { ToolRegistry, defineTool } from '../../src/index.js';
import type { AgentMessage, JsonSchemaObject, ProviderEvent, ProviderInput, StopReason, ToolCall, ToolSpec } from '../../src/index.js';

export const weatherSpec: ToolSpec = {
  name: 'get_weather',
  description: 'The weather in a city',
  input: { city: 'The city', unit: 'celsius or fahrenheit' },
};
export const timeSpec: ToolSpec = { name: 'current_time', description: 'Returns the current time as an ISO 8601 string', input: {} };

/** R24: the other two kinds of tool, as a registry hands them out — an inputSchema tool and a zod tool. */
export const addSchema: JsonSchemaObject = {
  type: 'object',
  properties: { a: { type: 'number' }, b: { type: 'number' } },
  required: ['a', 'b'],
  additionalProperties: false,
};
export const [addSpec, forecastSpec] = new ToolRegistry()
  .register({ name: 'add', description: 'Adds two numbers', inputSchema: addSchema, handler: () => '' })
  .register(
    defineTool({
      name: 'forecast',
      description: 'The forecast for a city',
      schema: z.object({ city: z.string(), days: z.number().int().optional() }),
      handler: () => '',
    }),
  )
  .getSpecs() as [ToolSpec, ToolSpec];
/** What zod 4 makes of the forecast tool's schema (Standard JSON Schema, draft 2020-12). */
export const forecastSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: { city: { type: 'string' }, days: { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 } },
  required: ['city'],
};

/** A history with every kind of message: text, two calls with a failed result, a call without text. */
export const history: AgentMessage[] = [
  { role: 'user', content: 'Weather in Paris and Tokyo?' },
  {
    role: 'assistant',
    content: 'Checking both.',
    stopReason: 'toolUse',
    toolCalls: [
      { id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
      { id: 'call_2', name: 'get_weather', input: { city: 'Tokyo' } },
    ],
  },
  { role: 'toolResult', toolCallId: 'call_1', toolName: 'get_weather', content: '18°C', isError: false, details: { raw: 18 } },
  { role: 'toolResult', toolCallId: 'call_2', toolName: 'get_weather', content: 'error: timeout', isError: true },
  { role: 'assistant', content: 'Paris is 18°C; Tokyo failed.', stopReason: 'stop' },
  { role: 'user', content: 'And the time?' },
  { role: 'assistant', content: '', stopReason: 'toolUse', toolCalls: [{ id: 'call_3', name: 'current_time', input: {} }] },
  { role: 'toolResult', toolCallId: 'call_3', toolName: 'current_time', content: '2026-01-01T00:00:00Z', isError: false },
];

export const question: ProviderInput = { messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [weatherSpec] };

export const start: ProviderEvent = { type: 'message_start' };
export const text = (value: string): ProviderEvent => ({ type: 'text_delta', text: value });
export const call = (id: string, name: string, input: ToolCall['input']): ProviderEvent => ({ type: 'tool_call', call: { id, name, input } });
export const end = (stopReason: StopReason): ProviderEvent => ({ type: 'message_end', stopReason });
/**
 * `message_end` with stop reason `error`; the message may be a jest matcher. With `failure` (L1: what a provider
 * says went wrong), the event carries it, its `message` the same; without, it carries none (a translator's own throw).
 */
export const failed = (errorMessage: unknown, failure?: FailureKind): ProviderEvent =>
  (failure === undefined
    ? { type: 'message_end', stopReason: 'error', errorMessage }
    : { type: 'message_end', stopReason: 'error', errorMessage, failure: { ...failure, message: errorMessage } }) as ProviderEvent;
