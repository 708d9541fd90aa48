import { PROGRESS, type ToolProgressValue } from '../types.js';

/**
 * Progress from an Observable tool, shown as a `tool_update` the moment it is emitted (R14).
 *
 * ```text
 * handler:      -p--q--(r|)        p, q = toolProgress('30%'), toolProgress('60%'); r = 'saved'
 * loop events:  -P--Q--(R)         P, Q = tool_update at once; R = tool_result saved
 * ```
 *
 * ```ts
 * handler: () => concat(of(toolProgress('waiting for approval')), approval$.pipe(map(() => 'done')))
 * ```
 */
export function toolProgress(content: string, details?: unknown): ToolProgressValue {
  if (typeof content !== 'string') throw new TypeError(`toolProgress: content must be a string (got ${typeof content})`);
  return details === undefined ? { [PROGRESS]: true, content } : { [PROGRESS]: true, content, details };
}

/** A1: the inner event an agent tool's progress forwards, under a symbol of its own (the public value stays as it is). */
const FORWARDS: unique symbol = Symbol.for('rx-tool-loop.forwards') as never;

/**
 * An agent tool's progress (A1): `content` shown, and `event`, the inner loop's event, carried on the
 * `tool_update`; `details` when the tool has some (its `model`, O2).
 */
export function forwardedProgress(content: string, event: unknown, details?: unknown): ToolProgressValue {
  const progress = { [PROGRESS]: true, content, [FORWARDS]: event } as ToolProgressValue & { details?: unknown };
  if (details !== undefined) progress.details = details;
  return progress;
}

/** The inner event a progress value forwards, if an agent tool made it. */
export function forwardedEvent(value: ToolProgressValue): unknown {
  return (value as { [FORWARDS]?: unknown })[FORWARDS];
}

/** Whether `value` was made by {@link toolProgress}. */
export function isToolProgress(value: unknown): value is ToolProgressValue {
  return typeof value === 'object' && value !== null && (value as { [PROGRESS]?: unknown })[PROGRESS] === true;
}
