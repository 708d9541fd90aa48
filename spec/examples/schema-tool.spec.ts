/** R24, as a user writes it: examples/schema-tool.ts, a zod tool made with defineTool, run through the loop. */
import { lastValueFrom } from 'rxjs';
import { forecastModel, forecastResults, getForecast, runForecast } from '../../examples/schema-tool.js';
import { ToolRegistry, runEventedToolLoop } from '../../src/index.js';

describe('examples/schema-tool', () => {
  it('answers the bad call with the validation errors, and runs the good one on the parsed input', async () => {
    expect(await forecastResults()).toEqual([
      {
        role: 'toolResult',
        toolCallId: 'c1',
        toolName: 'get_forecast',
        content: 'error: invalid input: city: Invalid input: expected string, received number; days: Too small: expected number to be >=1',
        isError: true,
      },
      { role: 'toolResult', toolCallId: 'c2', toolName: 'get_forecast', content: 'Paris: sunny for the next 1 day(s)', isError: false },
    ]);
  });

  it('the model reads the error on its next turn and is told the schema zod made', async () => {
    const model = forecastModel();
    await lastValueFrom(runEventedToolLoop({ provider: model, registry: new ToolRegistry().register(getForecast), messages: [] }));
    expect(model.inputs[1]!.messages.at(-1)).toMatchObject({ role: 'toolResult', isError: true });
    expect(model.inputs[0]!.tools).toEqual([
      {
        name: 'get_forecast',
        description: 'The weather forecast for a city',
        inputSchema: expect.objectContaining({
          type: 'object',
          properties: {
            city: { type: 'string', description: 'The city, e.g. Paris' },
            days: { type: 'integer', minimum: 1, maximum: 7, default: 1, description: 'How many days, 1 to 7' },
          },
          required: ['city'],
        }) as unknown,
      },
    ]);
  });

  it('runs synchronously: a synchronous validator adds no Promise hop', () => {
    let reason: string | undefined;
    runForecast().subscribe((event) => event.type === 'loop_end' && (reason = event.reason));
    expect(reason).toBe('stop');
  });
});
