/**
 * `rx-tool-loop/sessions/testing`: the suite every `SessionStore` passes (S4). It imports no test framework:
 * `storeConformance(makeStore)` returns named checks that your runner runs, one test each (or awaits, as one).
 */
export { storeConformance } from './store-conformance.js';
export type { ConformanceOptions, StoreCheck, StoreChecks } from './store-conformance.js';
