import type { Stack } from './stack.js';

/** One way of journaling a reply, measured on one ask. */
export interface JournalOf {
  /** Journal entries and their bytes (Restate's own `raw_length` of each entry, `sys_journal`), per turn. */
  entriesPerTurn: number;
  bytesPerTurn: number;
  /** Milliseconds per turn of an ask, one at a time (the mean of `samples`), and that less the same ask unjournaled (none when `samples` is 0). */
  msPerTurn?: number;
  journalingMsPerTurn?: number;
}

/** What D9 measured: a reply of `words` text deltas a turn, journaled merged (`chat`, D1) and one entry per delta. */
export interface JournalFigures {
  words: number;
  turns: number;
  merged: JournalOf;
  perDelta: JournalOf;
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

/**
 * D9: one ask of `turns` turns (a tool call each, then the answer) whose every reply streams `words` text deltas,
 * on `chat` (each reply one journaled step, its text merged: D1) and on `perDelta` (each event a step of its own,
 * the yardstick of spec/restate/support/endpoint.ts); the journal read back through the admin API's SQL
 * (`sys_journal`: every entry of the invocation, its `raw_length` in bytes). Then `samples` asks of each, one at a
 * time, beside `plain` (the same loop unjournaled), for the journaling time per turn (none when `samples` is 0). `tag` keeps the keys apart.
 */
export async function journalSize(stack: Stack, options: { words: number; turns: number; samples: number; tag: string }): Promise<JournalFigures> {
  const { words, turns, samples, tag } = options;
  const prompt = `m: ${Array.from({ length: turns - 1 }, () => 'fast').join(',')} | ${words}`;
  const journal = async (object: string) => {
    const id = await stack.send(`${tag}-${object}-size`, prompt, object);
    await stack.answer(id);
    const query = `SELECT COUNT(*) AS entries, SUM(raw_length) AS bytes FROM sys_journal WHERE id = '${id}'`;
    const { rows } = (await stack.post(`http://127.0.0.1:${stack.ports.admin}/query`, { query }, { accept: 'application/json' })) as { rows: { entries: number; bytes: number }[] };
    return { entriesPerTurn: Number(rows[0]!.entries) / turns, bytesPerTurn: Number(rows[0]!.bytes) / turns };
  };
  const msPerTurn = async (object: string, run = 'timed') => {
    let sum = 0;
    for (let n = 0; n < samples; n++) sum += await timed(() => stack.call(object, `${tag}-${object}-${run}-${n}`, 'ask', prompt));
    return sum / samples / turns;
  };
  const merged = await journal('chat');
  const perDelta = await journal('perDelta');
  if (samples === 0) return { words, turns, merged, perDelta };
  await msPerTurn('plain', 'warm'); // warm: the first asks of a handler pay for its connection
  const [plainMs, mergedMs, perDeltaMs] = [await msPerTurn('plain'), await msPerTurn('chat'), await msPerTurn('perDelta')];
  return {
    words,
    turns,
    merged: { ...merged, msPerTurn: mergedMs, journalingMsPerTurn: mergedMs - plainMs },
    perDelta: { ...perDelta, msPerTurn: perDeltaMs, journalingMsPerTurn: perDeltaMs - plainMs },
  };
}
