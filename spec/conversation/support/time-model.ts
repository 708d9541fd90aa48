/**
 * The sessions specs' model (it answers from the history alone: a prompt that asks the time gets two calls,
 * `clock` and `zone`, their results get an answer), and its tools, of which `clock` may run until unsubscribed.
 */
import { NEVER } from 'rxjs';
import { ToolRegistry } from '../../../src/index.js';

export { historyModel as timeModel } from '../../sessions/support/model.js';

/** `clock` and `zone`; with `stuck`, `clock` runs until it is unsubscribed (a process that dies mid-tool). */
export function timeTools(stuck = false): ToolRegistry {
  return new ToolRegistry()
    .register({ name: 'clock', description: 'the time', input: {}, handler: () => (stuck ? NEVER : '12:00') })
    .register({ name: 'zone', description: 'the time zone of a city', input: { city: 'the city' }, handler: (input) => `CET (${input.city})` });
}
