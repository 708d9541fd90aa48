import { type LoopEvent, PROGRESS, type ToolProgressValue } from '../types.js';

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

/**
 * An agent tool's progress (A1): `content` shown, and `event`, the inner loop's event, in a plain field of the
 * value, which the loop puts on the `tool_update` (R34: data, which a copy keeps); `details` when the tool has
 * some (its `model`, O2).
 */
export function forwardedProgress(content: string, event: LoopEvent, details?: unknown): ToolProgressValue {
  return details === undefined ? { [PROGRESS]: true, content, event } : { [PROGRESS]: true, content, details, event };
}

/** Whether `value` was made by {@link toolProgress}. */
export function isToolProgress(value: unknown): value is ToolProgressValue {
  return typeof value === 'object' && value !== null && (value as { [PROGRESS]?: unknown })[PROGRESS] === true;
}
