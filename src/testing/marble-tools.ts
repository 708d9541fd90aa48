import { ToolRegistry } from '../tools/tool-registry.js';
import type { ToolContext, ToolReturn } from '../types.js';
import { isObservable } from 'rxjs';
import { isPlainObject, isPromiseLike } from '../util/values.js';
import { argumentError, checkRecord } from './arguments.js';

/** A tool of {@link marbleTools}: what every call returns, or the handler itself. */
export type MarbleTool = ToolReturn | ((input: Record<string, unknown>, context: ToolContext) => ToolReturn);

/**
 * A registry of series-style tools, one per entry (T1): description `the NAME tool`, `input: {}`. A value
 * (a cold marble, a string, a `ToolOutput`) is what every call returns; a function is the handler.
 *
 * ```ts
 * const registry = marbleTools({
 *   weather: cold('---(r|)', { r: 'sunny' }),   // each call subscribes this cold marble
 *   clock: '12:00',
 *   fail: () => throwError(() => new Error('boom')),
 * });
 * ```
 */
export function marbleTools(table: Record<string, MarbleTool>): ToolRegistry {
  checkRecord('marbleTools', 'table', table);
  const registry = new ToolRegistry();
  for (const [name, tool] of Object.entries(table)) {
    const known = typeof tool === 'function' || typeof tool === 'string' || isObservable(tool) || isPromiseLike(tool) || (isPlainObject(tool) && typeof tool['content'] === 'string');
    if (!known) throw argumentError('marbleTools', `table.${name} must be a string, a ToolOutput, an Observable or a handler`, tool);
    registry.register({ name, description: `the ${name} tool`, input: {}, handler: typeof tool === 'function' ? tool : () => tool });
  }
  return registry;
}
