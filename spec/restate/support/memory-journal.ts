import type { Awakeables, Journal } from '../../../src/restate/index.js';

/**
 * An engine in memory for the D1 specs: steps journal their results (as JSON, the way Restate serialises them)
 * under their index, in the order the loop asked for them; `afterCrash()` is the journal a replay starts from —
 * the finished steps only — and a replay that asks for a step under another name fails, as Restate does.
 */
export class MemoryJournal implements Journal, Awakeables {
  readonly entries: ({ name: string; value: unknown } | undefined)[] = [];
  readonly names: string[] = [];
  /** Steps whose function ran here (not replayed). */
  ran = 0;
  private cursor = 0;
  /** Awakeables made so far, by id, with the function that resolves each. */
  readonly awakeables = new Map<string, (value: unknown) => void>();

  constructor(finished: ({ name: string; value: unknown } | undefined)[] = []) {
    this.entries = [...finished];
  }

  run<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const index = this.cursor++;
    this.names[index] = name;
    const entry = this.entries[index];
    if (entry !== undefined) {
      if (entry.name !== name) return Promise.reject(new Error(`journal mismatch at ${index}: ${entry.name} journaled, ${name} asked`));
      return Promise.resolve(JSON.parse(JSON.stringify(entry.value)) as T);
    }
    this.ran++;
    return fn().then((value) => {
      const journaled = JSON.parse(JSON.stringify(value)) as T;
      this.entries[index] = { name, value: journaled };
      return journaled;
    });
  }

  awakeable<T>(): { id: string; promise: Promise<T> } {
    const id = `awk-${this.cursor++}`;
    return { id, promise: new Promise<T>((resolve) => this.awakeables.set(id, resolve as (value: unknown) => void)) };
  }

  /** The journal a replay starts from: the finished steps, `keep` of them at most (a crash came after them). */
  afterCrash(keep = Infinity): MemoryJournal {
    return new MemoryJournal(this.entries.slice(0, keep));
  }
}
