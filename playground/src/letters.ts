/**
 * The page's letters are `recordMarbles`' own (src/testing/marble-line.ts): the turn's digit for
 * `turn_start N`, the provider's events in lower case, a call's `tool_start` as its letter in Greek, the
 * loop's own in upper case — a scenario's own legend first. One implementation, so that what the page draws
 * and what "Copy as marble test" gives use the same letters.
 */
export { Letters as LetterMap } from '../../src/testing/marble-line.js';
