import { Observable } from 'rxjs';
import { isAbortSignal, onAbort } from '../util/abort-signal.js';
import { shown } from '../util/values.js';
import { executeTool } from './execute-tool.js';
import { abortedResult } from './tool-result.js';
import { TOOL_NAME, isToolName } from './tool-name.js';
import { specOf } from './tool-spec.js';
import type { Tool, ToolCall, ToolResultMessage, ToolSpec } from '../types.js';

/** What the loop needs of a registry: the tool of a name, and the specs the model is told. */
export type ToolLookup = Pick<ToolRegistry, 'get' | 'getSpecs'>;

/**
 * The tools a loop may run, by name. Lookups use own names only (a `Map`), so `__proto__` or
 * `toString` are unknown tools until someone registers them (R17).
 *
 * ```ts
 * const registry = new ToolRegistry().register({
 *   name: 'current_time',
 *   description: 'Returns the current time',
 *   input: {},
 *   handler: () => new Date().toISOString(),
 * });
 * registry.run({ id: 'c1', name: 'current_time', input: {} }).subscribe(console.log);
 * ```
 */
export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();
  /** Built once per registration, not once per turn; frozen, so that handing them out is safe. */
  private specs: readonly ToolSpec[] = [];

  /**
   * Adds `tool`; throws an `Error` naming it when its name is empty or taken (R15), or one that the
   * model APIs reject (R21: not `^[a-zA-Z0-9_-]{1,64}$`, so every request would fail), or when its input is
   * described by none of `input`, `inputSchema`, `schema`, by both `input` and another, or by a `schema`
   * that gives no JSON Schema for the model (R24).
   */
  register(tool: Tool): this {
    const name: unknown = tool?.name;
    if (typeof name !== 'string' || name.length === 0) {
      throw new Error(`ToolRegistry: a tool needs a non-empty name (got ${JSON.stringify(name) ?? String(name)})`);
    }
    if (!isToolName(name)) throw new Error(`ToolRegistry: "${name}" is a tool name that the APIs reject: it must match ${TOOL_NAME.source}`);
    if (this.tools.has(name)) throw new Error(`ToolRegistry: a tool named "${name}" is already registered`);
    if (typeof tool.handler !== 'function') throw new Error(`ToolRegistry: tool "${name}" has no handler function`);
    const spec = specOf(tool); // R24: throws when the tool's input is described in no usable way
    this.tools.set(name, tool);
    this.specs = [...this.specs, spec];
    return this;
  }

  /**
   * Removes the tool called `name`; says whether there was one (R15). Its calls already running go on; the
   * next turn's specs no longer offer it, and a later call of it is an unknown tool (R9).
   */
  unregister(name: string): boolean {
    if (!this.tools.delete(name)) return false;
    this.specs = this.specs.filter((spec) => spec.name !== name);
    return true;
  }

  /** The registered tool called `name`, if any. */
  get(name: string): Tool | undefined {
    return this.tools.get(name);
  }

  /**
   * What the model is told: name, description and inputs of each tool, in registration order — a new
   * array of frozen specs (copies of what was registered, without the handlers). A series-style tool's
   * spec is `{ name, description, input }`; any other's is `{ name, description, inputSchema }` (R24).
   */
  getSpecs(): ToolSpec[] {
    return this.specs.slice();
  }

  /**
   * Runs one call. Cold: the handler starts on subscribe. Emits exactly one `ToolResultMessage` and
   * completes; never errors (failures are results with `isError: true`). Unsubscribing, or aborting
   * `signal` (result `error: aborted`), tears the tool down and aborts the handler's own signal. A `call`
   * without a string `id` and `name`, or a `signal` that is not an `AbortSignal`, throws a `TypeError` at once (R15).
   *
   * ```text
   * handler:   ----x|
   * run(call): ----(r|)       r = { role: 'toolResult', content: x, … }
   * ```
   */
  run(call: ToolCall, signal?: AbortSignal): Observable<ToolResultMessage> {
    // R15: checked at call time, as the loop's options are (R20)
    const { id, name } = (typeof call === 'object' && call !== null ? call : {}) as Partial<ToolCall>;
    if (typeof id !== 'string' || typeof name !== 'string') {
      throw new TypeError(`ToolRegistry.run: call must be a ToolCall { id: string, name: string, input } (got ${shown(call)})`);
    }
    if (signal !== undefined && !isAbortSignal(signal)) throw new TypeError(`ToolRegistry.run: signal must be an AbortSignal (got ${shown(signal)})`);
    // one Observable, not defer + filter + map + takeUntil + defaultIfEmpty: five layers per call (bench/mcp.js)
    return new Observable<ToolResultMessage>((subscriber) => {
      const answer = (message: ToolResultMessage) => {
        subscriber.next(message);
        subscriber.complete();
      };
      // aborted already: the tool is never looked up nor run
      if (signal?.aborted === true) return answer(abortedResult(call));
      const found = this.get(call.name);
      const stop = signal === undefined ? undefined : onAbort(signal, () => answer(abortedResult(call)));
      const tool = executeTool(found, call).subscribe({
        next: (progress) => progress.type === 'settled' && answer(progress.message),
        complete: () => subscriber.closed || answer(abortedResult(call)),
      });
      return () => {
        stop?.();
        tool.unsubscribe();
      };
    });
  }
}
