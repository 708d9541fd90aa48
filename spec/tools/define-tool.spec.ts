/** R24: defineTool makes a schema tool whose handler is typed by the validator's output. */
import { lastValueFrom } from 'rxjs';
import { z } from 'zod';
import { StandardSchemaV1, ToolContext, ToolRegistry, defineTool } from '../../src/index.js';
import { callOf } from '../support/events.js';

describe('R24 defineTool', () => {
  it('returns a Tool with the schema, which the registry validates before the handler runs', async () => {
    const handler = jest.fn(({ city, unit }: { city: string; unit: 'C' | 'F' }, _context: ToolContext) => `20 ${unit} in ${city}`);
    const weather = defineTool({
      name: 'get_weather',
      description: 'Current weather for a city',
      schema: z.object({ city: z.string(), unit: z.enum(['C', 'F']).default('C') }),
      handler,
    });
    expect(weather).toMatchObject({ name: 'get_weather', description: 'Current weather for a city' });
    expect(weather.schema).toBeDefined();
    const registry = new ToolRegistry().register(weather);
    await expect(lastValueFrom(registry.run(callOf('c1', 'get_weather', { city: 'Oslo' })))).resolves.toMatchObject({ content: '20 C in Oslo', isError: false });
    await expect(lastValueFrom(registry.run(callOf('c2', 'get_weather', { city: 'Oslo', unit: 'K' })))).resolves.toMatchObject({
      content: 'error: invalid input: unit: Invalid option: expected one of "C"|"F"',
      isError: true,
    });
    expect(handler).toHaveBeenCalledTimes(1);
    expect(handler.mock.calls[0]![1].call).toEqual(callOf('c1', 'get_weather', { city: 'Oslo' }));
  });

  it('passes an inputSchema on, and leaves it out when not given', () => {
    const schema: StandardSchemaV1<unknown, { q: string }> = {
      '~standard': { version: 1, vendor: 'double', validate: (value) => ({ value: value as { q: string } }) },
    };
    const withSchema = defineTool({ name: 'a', description: '', schema, inputSchema: { type: 'object', required: ['q'] }, handler: ({ q }) => q });
    expect(withSchema.inputSchema).toEqual({ type: 'object', required: ['q'] });
    expect('inputSchema' in defineTool({ name: 'b', description: '', schema, handler: ({ q }) => q })).toBe(false);
    expect(new ToolRegistry().register(withSchema).getSpecs()).toEqual([{ name: 'a', description: '', inputSchema: { type: 'object', required: ['q'] } }]);
  });
});
