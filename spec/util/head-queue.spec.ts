import { HeadQueue } from '../../src/util/head-queue.js';

describe('HeadQueue', () => {
  it('L6: first in, first out; peek leaves the item; empty gives undefined', () => {
    const queue = new HeadQueue<string>();
    expect([queue.peek(), queue.shift(), queue.length]).toEqual([undefined, undefined, 0]);
    queue.push('a');
    queue.push('b');
    expect([queue.peek(), queue.length]).toEqual(['a', 2]);
    expect([queue.shift(), queue.shift(), queue.shift()]).toEqual(['a', 'b', undefined]);
  });

  it('L6: the memory it holds follows what waits, not how many went through', () => {
    const queue = new HeadQueue<number>();
    const held = () => (queue as unknown as { items: unknown[] }).items.length;
    for (let i = 0; i < 10; i++) queue.push(i);
    let next = 0;
    let largest = 0;
    for (let i = 10; i < 100_000; i++) {
      queue.push(i);
      expect(queue.shift()).toBe(next++);
      largest = Math.max(largest, held());
    }
    expect(queue.length).toBe(10);
    expect(largest).toBeLessThanOrEqual(2 * 1024 + 10);
  });
});
