import { TextBuffer } from '../../src/loop/text-buffer.js';

describe('TextBuffer', () => {
  it.each([0, 1, 1023, 1024, 1025, 5000])('gives back %p deltas joined in order', (count) => {
    const buffer = new TextBuffer();
    const parts = Array.from({ length: count }, (_, i) => `${i},`);
    for (const part of parts) buffer.append(part);
    expect(buffer.toString()).toBe(parts.join(''));
  });
});
