/**
 * D1: what the durable wrappers need of an engine — one journaled step. Restate's `ctx.run(name, fn)` is one;
 * so is a Temporal activity or a DBOS step behind a one-line adapter. `run` calls `fn` at most until one result
 * is journaled, and on a replay returns the journaled result without calling `fn` again. The result must be
 * JSON: the wrappers journal plain data only (events, outputs, failure causes).
 *
 * ```ts
 * const journal: Journal = { run: (name, fn) => ctx.run(name, fn) };
 * ```
 */
export interface Journal {
  run<T>(name: string, fn: () => Promise<T>): PromiseLike<T>;
}

/**
 * D3: what an approval needs of an engine — a promise that survives restarts, resolved from outside by its
 * id (a Restate awakeable).
 */
export interface Awakeables {
  awakeable<T>(): { id: string; promise: PromiseLike<T> };
}
