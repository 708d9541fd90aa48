/**
 * A tool with a schema (R24): zod checks the model's input before the handler runs, and the handler's
 * input is typed from the schema. The scripted model first sends a bad call (a number for the city, a
 * day count of 0), reads the error result, and calls again correctly:
 *
 *   npx ts-node examples/schema-tool.ts
 */
import { Observable, filter, lastValueFrom, map, toArray } from 'rxjs';
import { z } from 'zod';
import type { LoopEvent, ToolResultMessage } from '../src/index.js';
import { ToolRegistry, defineTool, runEventedToolLoop, scriptedProvider } from '../src/index.js';

export const getForecast = defineTool({
  name: 'get_forecast',
  description: 'The weather forecast for a city',
  schema: z.object({
    city: z.string().describe('The city, e.g. Paris'),
    days: z.number().int().min(1).max(7).default(1).describe('How many days, 1 to 7'),
  }),
  // input: { city: string; days: number } — the schema's output, `days` filled in when the model left it out
  handler: ({ city, days }) => `${city}: sunny for the next ${days} day(s)`,
});

/** The model: a bad call, then (having read the error) a good one, then the answer. */
export function forecastModel() {
  const start = { type: 'message_start' } as const;
  const call = (id: string, input: Record<string, unknown>) => ({ type: 'tool_call', call: { id, name: 'get_forecast', input } }) as const;
  return scriptedProvider([
    [start, call('c1', { city: 75001, days: 0 }), { type: 'message_end', stopReason: 'toolUse' }],
    [start, call('c2', { city: 'Paris' }), { type: 'message_end', stopReason: 'toolUse' }],
    [start, { type: 'text_delta', text: 'Sunny in Paris tomorrow.' }, { type: 'message_end', stopReason: 'stop' }],
  ]);
}

export function runForecast(): Observable<LoopEvent> {
  return runEventedToolLoop({
    provider: forecastModel(),
    registry: new ToolRegistry().register(getForecast),
    messages: [{ role: 'user', content: 'Weather in Paris?' }],
  });
}

/** The results the model read, in order. */
export function forecastResults(): Promise<ToolResultMessage[]> {
  return lastValueFrom(
    runForecast().pipe(
      filter((event) => event.type === 'tool_result'),
      map((event) => event.message),
      toArray(),
    ),
  );
}

if (require.main === module) {
  forecastResults()
    .then((results) => results.forEach((result) => console.log(`${result.toolCallId}: ${result.content}${result.isError ? ' (isError)' : ''}`)))
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    });
}
