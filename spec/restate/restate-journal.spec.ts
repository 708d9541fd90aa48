/**
 * D6: `restateJournal` on an engine in memory: what is not a Restate promise passes through as it is. (What it
 * does with Restate's own promises — one wait at a time — the conversation specs prove on a real server, on the
 * oldest and the newest SDK.)
 */
import { restateJournal } from '../../src/restate/index.js';
import { MemoryJournal } from './support/memory-journal.js';

describe('restateJournal', () => {
  it('D6: steps and awakeables of another engine pass through: the same results, the steps run once, in the order asked', async () => {
    const memory = new MemoryJournal();
    const journal = restateJournal(memory);
    const order: string[] = [];
    const step = (name: string, ms: number) => journal.run(name, () => new Promise<string>((resolve) => setTimeout(() => (order.push(name), resolve(`${name} done`)), ms)));
    expect(await Promise.all([step('a', 20), step('b', 1)])).toEqual(['a done', 'b done']);
    expect(order).toEqual(['b', 'a']); // both ran at once: nothing here waits one at a time
    expect(memory.names).toEqual(['a', 'b']);
    expect(memory.ran).toBe(2);
    const { id, promise } = journal.awakeable!<string>();
    memory.awakeables.get(id)!('decided');
    expect(await promise).toBe('decided');
  });

  it('D6: a journal without awakeables gives none', () => {
    expect(restateJournal({ run: (_name, fn) => fn() }).awakeable).toBeUndefined();
  });
});
