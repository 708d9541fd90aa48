/** F6: `npm run vision` — a tool draws a PNG and returns it as an attachment; the scripted model reads it. */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { drawChart } from '../../examples/vision.js';
import { pngSize } from '../../examples/png.js';

const root = join(__dirname, '..', '..');

/** The pixel at (x, y) of an 8-bit RGB PNG whose rows are unfiltered (what examples/png.ts writes). */
function pixelOf(png: Buffer, x: number, y: number): number[] {
  const { width } = pngSize(png);
  const idat = png.indexOf('IDAT');
  const raw = inflateSync(png.subarray(idat + 4, idat + 4 + png.readUInt32BE(idat - 4)));
  const at = y * (1 + width * 3) + 1 + x * 3;
  return [...raw.subarray(at, at + 3)];
}

describe('npm run vision (F6)', () => {
  it('F6: the scripted path: the tool returns the PNG it drew, the loop shows it as a line, the model reads the picture it was sent', () => {
    const output = execFileSync(process.execPath, [require.resolve('ts-node/dist/bin.js'), 'examples/vision.ts'], { cwd: root, encoding: 'utf8' });
    const bytes = drawChart().length;
    expect(output).toContain(`tool_result draw_sales_chart: The chart of the first quarter sales. [image image/png, ${bytes} bytes]`);
    expect(output).toContain('content: I see a 120×80 image/png picture; a real model would tell you which bar is tallest.');
    expect(output).toContain('user -> assistant -> toolResult -> assistant');
  }, 60_000);

  it('F6: the picture is a real PNG a model can read: February, the tallest bar, is green to the top; white above the others', () => {
    const png = drawChart();
    expect(pngSize(png)).toEqual({ width: 120, height: 80 });
    expect(pixelOf(png, 60, 10)).toEqual([40, 170, 60]); // February's bar, 70 px tall
    expect(pixelOf(png, 20, 10)).toEqual([255, 255, 255]); // above January's
    expect(pixelOf(png, 20, 79)).toEqual([220, 40, 40]);
    expect(pixelOf(png, 100, 79)).toEqual([40, 80, 220]);
  });
});
