/**
 * The library's one first-in first-out queue: it takes from an index at its head instead of `shift()`ing an
 * array, which moves every element left (O(n) a take on a long queue). A slot handed out is emptied at once, so
 * the queue holds nothing it gave away; once every item is out it starts again from slot 0 of the same array —
 * no new array, and no `length = 0`, a call into the runtime each time the queue empties (the trampoline's
 * queue empties every turn). The loop's trampoline, a turn's waiting calls and SessionTree's writes use it.
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
  private readonly items: (T | undefined)[] = [];
  private head = 0; // items[head] is next
  private tail = 0; // items[tail] takes the next push

  /** How many items wait. */
  get length(): number {
    return this.tail - this.head;
  }

  push(item: T): void {
    this.items[this.tail++] = item;
  }

  /** The next item, or `undefined` when none waits. */
  shift(): T | undefined {
    const { head } = this;
    if (head === this.tail) return undefined;
    const item = this.items[head];
    this.items[head] = undefined; // handed out: not held here
    if (head + 1 === this.tail) this.head = this.tail = 0;
    else this.head = head + 1;
    return item;
  }

  /** Drops every waiting item. */
  clear(): void {
    for (let at = this.head; at < this.tail; at++) this.items[at] = undefined;
    this.head = this.tail = 0;
  }
}
