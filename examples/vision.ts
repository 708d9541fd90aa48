/**
 * F6, attachments: a tool draws a bar chart as a PNG and returns it as an attachment; the model looks at it.
 *
 *   npm run vision
 *
 * On the scripted provider (the default) the "model" reads the picture's size from its bytes; with a real model
 * (the key from OPENAI_API_KEY / ANTHROPIC_API_KEY) it sees the picture and says which bar is tallest:
 *
 *   npm run vision -- --provider openai --model gpt-4o-mini
 *   npm run vision -- --api responses --model gpt-4.1-mini
 *   npm run vision -- --provider anthropic --model claude-sonnet-4-5
 */
import { type LoopEvent, type ProviderInput, ToolRegistry, runEventedToolLoop, scriptedProvider } from '../src/index.js';
import { describeEvent } from '../src/testing/index.js';
import { type Rgb, encodePng, pngSize } from './png.js';
import { describeCommon, runSeriesDemo } from './series-demo.js';

/** The sales the chart shows, one bar each, in these colours. */
const SALES: readonly { month: string; value: number; colour: Rgb }[] = [
  { month: 'January', value: 3, colour: [220, 40, 40] },
  { month: 'February', value: 8, colour: [40, 170, 60] },
  { month: 'March', value: 5, colour: [40, 80, 220] },
];

/** A 120×80 bar chart: white ground, a bar per month, tallest 70 pixels. */
export function drawChart(): Buffer {
  const width = 120;
  const height = 80;
  const max = Math.max(...SALES.map((s) => s.value));
  return encodePng(width, height, (x, y) => {
    const bar = Math.floor(x / 40);
    const inBar = x % 40 >= 8 && x % 40 < 32;
    const top = height - Math.round((SALES[bar]!.value / max) * 70);
    return inBar && y >= top ? SALES[bar]!.colour : [255, 255, 255];
  });
}

const registry = new ToolRegistry().register({
  name: 'draw_sales_chart',
  description: 'Draws the first quarter sales as a bar chart (January, February, March, left to right) and returns the picture',
  input: {},
  handler: () => ({ content: 'The chart of the first quarter sales.', attachments: [{ type: 'image', mimeType: 'image/png', data: drawChart().toString('base64'), name: 'sales.png' }] }),
});

/** What the scripted model "sees": the picture's size, read from the PNG the tool returned. */
function look({ messages }: ProviderInput): string {
  const picture = messages.findLast((m) => m.role === 'toolResult')?.attachments?.[0];
  if (picture?.data === undefined) return 'I got no picture.';
  const { width, height } = pngSize(Buffer.from(picture.data, 'base64'));
  return `I see a ${width}×${height} ${picture.mimeType} picture; a real model would tell you which bar is tallest.`;
}

const scripted = scriptedProvider([
  [{ type: 'message_start' }, { type: 'tool_call', call: { id: 'call_1', name: 'draw_sales_chart', input: {} } }, { type: 'message_end', stopReason: 'toolUse' }],
  (input) => [{ type: 'message_start' }, { type: 'text_delta', text: look(input) }, { type: 'message_end', stopReason: 'stop' }],
]);

function describe(event: LoopEvent): string | undefined {
  if (event.type === 'tool_call' || event.type === 'tool_result') return describeEvent(event); // F4: `[image image/png, N bytes]`
  return describeCommon(event);
}

if (require.main === module) {
  runSeriesDemo({
    name: 'vision',
    title: 'A tool returns a picture, the model looks at it',
    question: 'Draw the sales chart, then tell me which month sold most and the colour of its bar.',
    scripted,
    run: (provider, messages) => runEventedToolLoop({ provider, registry, messages }),
    describe,
  });
}
