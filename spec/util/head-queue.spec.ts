import { HeadQueue } from '../../src/util/head-queue.js';

describe('HeadQueue: the one first-in first-out queue (R31)', () => {
  it('R31: items come out in the order they went in; an empty queue gives undefined', () => {
    const queue = new HeadQueue<string>();
    expect(queue.shift()).toBeUndefined();
    queue.push('a');
    queue.push('b');
    expect(queue.length).toBe(2);
    expect(queue.shift()).toBe('a');
    queue.push('c');
    expect([queue.shift(), queue.shift(), queue.shift()]).toEqual(['b', 'c', undefined]);
    expect(queue.length).toBe(0);
  });

  it('R31: emptied, it starts again from the front and keeps nothing it handed out; clear drops what waits', () => {
    const queue = new HeadQueue<object>();
    const handed = { big: 'x' };
    queue.push(handed);
    queue.shift();
    const held = () => (queue as unknown as { items: unknown[] }).items.filter((item) => item !== undefined);
    // what it holds, read as the engine holds it: nothing it handed out
    expect(held()).toEqual([]);
    queue.push({});
    queue.push({});
    queue.shift();
    expect(held()).toHaveLength(1);
    queue.clear();
    expect(held()).toEqual([]);
    expect(queue.length).toBe(0);
    expect(queue.shift()).toBeUndefined();
    queue.push(handed);
    expect(queue.shift()).toBe(handed);
  });

  it('R31: a long queue: 100,000 in, 100,000 out, in order', () => {
    const queue = new HeadQueue<number>();
    for (let i = 0; i < 100_000; i++) queue.push(i);
    let ordered = true;
    for (let i = 0; i < 100_000; i++) ordered &&= queue.shift() === i;
    expect(ordered).toBe(true);
    expect(queue.length).toBe(0);
  });
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
    let ordered = true;
    let largest = 0;
    for (let i = 10; i < 100_000; i++) {
      queue.push(i);
      ordered &&= queue.shift() === next++;
      largest = Math.max(largest, held());
    }
    expect(ordered).toBe(true);
    expect(queue.length).toBe(10);
    expect(largest).toBeLessThanOrEqual(2 * 1024 + 10);
  });
});
