/**
 * R24, checked by the compiler (`tsc` type-checks spec/ in `npm test`; jest does not run this file):
 * `defineTool` types the handler's input as the validator's output, so a misspelt field does not
 * compile. Each `@ts-expect-error` fails the type check if the line under it ever compiles.
 */
import { z } from 'zod';
import { StandardSchemaV1, Tool, defineTool } from '../../src/index.js';

export const weather: Tool = defineTool({
  name: 'get_weather',
  description: 'Current weather for a city',
  schema: z.object({ city: z.string(), days: z.number().default(1) }),
  handler: (input) => {
    const city: string = input.city;
    const days: number = input.days; // the output type: the default filled in, so not optional
    // @ts-expect-error a typo in a field name
    const typo: unknown = input.citty;
    return `${city} ${days} ${String(typo)}`;
  },
});

export const destructured = defineTool({
  name: 'get_weather',
  description: 'Current weather for a city',
  schema: z.object({ city: z.string() }),
  // @ts-expect-error a typo in a destructured field name
  handler: ({ citty }) => String(citty),
});

export const annotated = defineTool({
  name: 'get_weather',
  description: 'Current weather for a city',
  schema: z.object({ city: z.string() }),
  // @ts-expect-error a handler written for another shape
  handler: (input: { town: string }) => input.town,
});

const trimmed: StandardSchemaV1<unknown, { query: string; limit: number }> = {
  '~standard': { version: 1, vendor: 'by-hand', validate: () => ({ value: { query: 'q', limit: 10 } }) },
};
export const byHand = defineTool({
  name: 'search',
  description: 'Searches',
  schema: trimmed,
  handler: ({ query, limit }) => `${query.toUpperCase()} ${limit.toFixed(0)}`,
});

export const numberIsNotString = defineTool({
  name: 'search',
  description: 'Searches',
  schema: trimmed,
  // @ts-expect-error limit is a number: no string method on it
  handler: ({ limit }) => limit.toUpperCase(),
});
