/**
 * The library's one first-in first-out queue: it takes from an index at its head instead of `shift()`ing an
 * array, which moves every element left (O(n) a take on a long queue). A slot handed out is emptied at once, so
 * the queue holds nothing it gave away; once every item is out it starts again from slot 0 of the same array —
 * no new array, and no `length = 0`, a call into the runtime each time the queue empties (the trampoline's
 * queue empties every turn). A queue that never empties (a limiter under steady load, L6) moves what waits to
 * the front once the free head is over half the array and at least `COMPACT_AT` long, so its memory follows
 * what waits, not how many went through. The loop's trampoline, a turn's waiting calls, SessionTree's writes
 * and the limiter use it.
 *
 * ```ts
 * const queue = new HeadQueue<string>();
 * queue.push('a');
 * queue.push('b');
 * queue.shift(); // 'a'
 * queue.length;  // 1
 * ```
 */
/** The free head a queue may carry before it moves what waits to the front: rare enough to cost nothing. */
const COMPACT_AT = 1024;

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
    else if (head + 1 >= COMPACT_AT && 2 * (head + 1) >= this.tail) this.compact(head + 1);
    else this.head = head + 1;
    return item;
  }

  /** The next item, left in the queue; `undefined` when none waits. */
  peek(): T | undefined {
    return this.head === this.tail ? undefined : this.items[this.head];
  }

  private compact(from: number): void {
    const waiting = this.tail - from;
    this.items.copyWithin(0, from, this.tail);
    this.items.length = waiting;
    this.head = 0;
    this.tail = waiting;
  }

  /** Drops every waiting item. */
  clear(): void {
    for (let at = this.head; at < this.tail; at++) this.items[at] = undefined;
    this.head = this.tail = 0;
  }
}
