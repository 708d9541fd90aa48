import { Observable, isObservable } from 'rxjs';
import { ToolRegistry } from '../tools/tool-registry.js';
import { shown } from '../util/values.js';
import type { Tool } from '../types.js';

/**
 * Keeps `registry` equal to the latest list of `tools$` while subscribed (M1): each list replaces the tools
 * the previous one registered, then is passed on, so a loop's next turn offers the new tools (R2 asks the
 * registry each turn). When the subscription ends — unsubscribed, `tools$` completed or errored — its tools
 * are removed. A name that another tool of the registry already has is an error, and nothing of that list
 * is registered. Calls already running keep running.
 *
 * ```text
 * tools$:     -a----b--|       a = [read], b = [read, write]
 * syncTools:  -a----b--|       the registry holds read, then read and write, then neither
 * ```
 *
 * ```ts
 * syncTools(registry, mcpTools(client)).subscribe(); // the registry follows the server
 * ```
 */
export function syncTools(registry: ToolRegistry, tools$: Observable<Tool[]>): Observable<Tool[]> {
  if (!(registry instanceof ToolRegistry)) throw new TypeError(`syncTools: registry must be a ToolRegistry (got ${shown(registry)})`);
  if (!isObservable(tools$)) throw new TypeError(`syncTools: tools$ must be an Observable of Tool[] (got ${shown(tools$)})`);
  return new Observable<Tool[]>((subscriber) => {
    let mine: Tool[] = [];
    const remove = () => {
      for (const tool of mine) if (registry.get(tool.name) === tool) registry.unregister(tool.name);
      mine = [];
    };
    const source = tools$.subscribe({
      next(tools) {
        try {
          if (!Array.isArray(tools)) throw new TypeError(`syncTools: tools$ sent ${shown(tools)}, not an array of tools`);
          const taken = tools.find((tool) => registry.get(tool?.name) !== undefined && !mine.some((own) => own.name === tool.name));
          if (taken !== undefined) throw new Error(`syncTools: a tool named "${taken.name}" is already registered (give the server a prefix)`);
          remove();
          for (const tool of tools) {
            registry.register(tool);
            mine.push(tool);
          }
        } catch (error) {
          remove();
          subscriber.error(error);
          return;
        }
        subscriber.next(tools);
      },
      error(error: unknown) {
        remove();
        subscriber.error(error);
      },
      complete() {
        remove();
        subscriber.complete();
      },
    });
    return () => {
      source.unsubscribe();
      remove();
    };
  });
}
