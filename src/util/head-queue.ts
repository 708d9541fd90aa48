/**
 * The library's one first-in first-out queue: it takes from an index at its head instead of `shift()`ing an
 * array, which moves every element left (O(n) a take on a long queue); once emptied it starts again from 0,
 * in place, holding nothing it handed out. The loop's trampoline and a turn's waiting calls use it.
 *
 * ```ts
 * const queue = new HeadQueue<string>();
 * queue.push('a');
 * queue.push('b');
 * queue.shift(); // 'a'
 * queue.length;  // 1
 * ```
 */
export class HeadQueue<T> {
  private readonly items: T[] = [];
  private head = 0; // items[head] is next

  /** How many items wait. */
  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** The next item, or `undefined` when none waits. */
  shift(): T | undefined {
    const { items } = this;
    if (this.head === items.length) return undefined;
    const item = items[this.head++];
    if (this.head === items.length) this.clear();
    return item;
  }

  /** Drops every waiting item. */
  clear(): void {
    // emptied in place: no new array; and only when it held any (setting a length is a call into the runtime)
    if (this.items.length > 0) this.items.length = 0;
    this.head = 0;
  }
}
