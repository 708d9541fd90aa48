/**
 * A first-in, first-out queue on one array and a head index: `shift()` on an array is O(n), so a long queue
 * would be quadratic. The array is emptied in place when the head reaches its end, and cut when the head has
 * passed half of it, so the memory it holds stays proportional to what waits (L6: 10,000 calls through one
 * limiter in constant memory). (`runTools` keeps its own inline, for W1: `src/loop/README.md`.)
 *
 * ```ts
 * const queue = new HeadQueue<string>();
 * queue.push('a'); queue.push('b');
 * queue.shift(); // 'a'
 * queue.peek();  // 'b'
 * ```
 */
export class HeadQueue<T> {
  private items: T[] = [];
  private head = 0;

  /** How many items wait. */
  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** The first item, left in the queue; `undefined` when it is empty. */
  peek(): T | undefined {
    return this.head < this.items.length ? this.items[this.head] : undefined;
  }

  /** Takes the first item out; `undefined` when the queue is empty. */
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head]!;
    this.items[this.head++] = undefined as T; // let it go now, not when the array is cut
    if (this.head === this.items.length) {
      this.items.length = 0;
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}
