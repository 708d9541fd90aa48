/**
 * `rx-tool-loop/testing`: marble-test your own agent (T1–T10). Framework-agnostic — it imports neither
 * jest nor vitest — and made for `TestScheduler.run`: the doubles never use Promises, so everything
 * runs in virtual time.
 */
export { call, end, start, text } from './events.js';
export type { EndExtra } from './events.js';
export { marbleProvider } from './marble-provider.js';
export type { MarbleProvider } from './marble-provider.js';
export { marbleTools } from './marble-tools.js';
export type { MarbleTool } from './marble-tools.js';
export { describeEvent, described, loopLegend } from './describe-event.js';
export { recordMarbles } from './record-marbles.js';
export type { MarbleRecording, RecordOptions } from './record-marbles.js';
export { expectLoop } from './expect-loop.js';
export type { LoopExpectation } from './expect-loop.js';
export { assertValidHistory } from './assert-valid-history.js';
