import { isObservable } from 'rxjs';
import type { ToolLookup, ToolRegistry } from '../tools/tool-registry.js';
import type { AfterToolCall, AgentMessage, BeforeToolCall, PrepareTurn, Provider, StandardSchemaV1, TokenLedger, ToolApprovals } from '../types.js';
import { isTokenBudget } from '../limits/token-budget.js';
import { isAbortSignal } from '../util/abort-signal.js';
import { isCountOrInfinity, shown } from '../util/values.js';
import { inCallOrder } from './call-order.js';
import { checkMessages } from './check-messages.js';
import { type OutputSettings, type OutputSpec, outputSettings } from './output-spec.js';

/**
 * The default turn cap, as in the series: at most 8 provider calls per loop.
 *
 * ```ts
 * runEventedToolLoop({ provider, registry, messages, maxTurns: MAX_TURNS * 2 });
 * ```
 */
export const MAX_TURNS = 8;

/** The options of {@link runEventedToolLoop}; `S`, the schema of a typed answer (J4), is inferred from `output`. */
export interface LoopOptions<S extends StandardSchemaV1 = StandardSchemaV1> {
  provider: Provider;
  registry: ToolRegistry;
  /** The conversation so far; never mutated. */
  messages: readonly AgentMessage[];
  /** At most this many turns, i.e. provider subscriptions (default {@link MAX_TURNS}). */
  maxTurns?: number;
  /** `'parallel'` (default) runs a turn's calls at once; `'sequential'` one at a time in call order. */
  toolExecution?: 'parallel' | 'sequential';
  /** Parallel mode: at most this many tools at once (default: no cap). */
  maxConcurrency?: number;
  /** Aborting ends the loop cleanly, with `loop_end` reason `'aborted'` (R11). */
  signal?: AbortSignal;
  /** A tool still running after this many ms fails (R16). Default: no limit. */
  toolTimeoutMs?: number;
  /** R26: longer result contents are cut to this many characters, and say so. Default: no limit. */
  maxToolOutputChars?: number;
  /** H2: allow, rewrite, deny or answer each call before it runs — at once, later, or as an Observable. */
  beforeToolCall?: BeforeToolCall;
  /** H3: see, and maybe replace, each result before `tool_result`. */
  afterToolCall?: AfterToolCall;
  /** H8: calls that wait for a person's decision, announced as `tool_approval` (AG-UI interrupts, the AI SDK's approvals, ACP permissions). */
  approvals?: ToolApprovals;
  /** H6: what each provider call sees (compaction, summaries, dynamic tools); `turn_end.messages` stays whole. */
  prepareTurn?: PrepareTurn;
  /** J1–J4: a typed answer: the loop ends with `loop_end.output`, valid for `schema` (answer turns run as needed). */
  output?: OutputSpec<S>;
  /**
   * L3: a `TokenBudget`, charged with every provider call's usage; when nothing is left, the loop ends with reason
   * `budget` before its next turn.
   */
  budget?: TokenLedger;
}

/** The loop's options, checked once per `runEventedToolLoop` call. */
export interface LoopSettings {
  provider: Provider;
  registry: ToolLookup;
  messages: readonly AgentMessage[];
  maxTurns: number;
  /** How many tools of a turn may run at once: 1 in sequential mode. */
  concurrency: number;
  toolTimeoutMs: number;
  maxToolOutputChars: number;
  signal: AbortSignal | undefined;
  beforeToolCall?: BeforeToolCall | undefined;
  afterToolCall?: AfterToolCall | undefined;
  approvals?: ToolApprovals | undefined;
  prepareTurn?: PrepareTurn | undefined;
  output?: OutputSettings | undefined;
  budget?: TokenLedger | undefined;
}

/**
 * R8, R16, R20, R21: every option is checked when `runEventedToolLoop` is called, so that nothing the
 * caller passed can make the Observable error later. Messages name the option and show the value with
 * its type: `maxTurns must be an integer >= 1 (got "3", a string)`; a broken history names the message,
 * `messages[2].content must be a string (got 3, a number)`.
 */
export function checkOptions(options: LoopOptions<StandardSchemaV1>, who = 'runEventedToolLoop'): LoopSettings {
  const problem = (what: string, value: unknown) => `${who}: ${what} (got ${shown(value)})`;
  if (typeof options !== 'object' || options === null) throw new TypeError(problem('options must be an object', options));
  const { provider, registry, messages, maxTurns = MAX_TURNS, toolExecution = 'parallel' } = options;
  const { maxConcurrency = Infinity, toolTimeoutMs = Infinity, maxToolOutputChars = Infinity, signal } = options;
  const { beforeToolCall, afterToolCall, approvals, prepareTurn, output, budget } = options;
  if (typeof provider !== 'function') throw new TypeError(problem('provider must be a function', provider));
  if (typeof registry?.get !== 'function' || typeof registry.getSpecs !== 'function') {
    throw new TypeError(problem('registry must be a ToolRegistry', registry));
  }
  if (!Array.isArray(messages)) throw new TypeError(problem('messages must be an array', messages));
  checkMessages(messages, who);
  if (!isInteger(maxTurns)) throw new RangeError(problem('maxTurns must be an integer >= 1', maxTurns));
  if (!isCountOrInfinity(maxConcurrency)) throw new RangeError(problem('maxConcurrency must be an integer >= 1 or Infinity', maxConcurrency));
  if (!isCountOrInfinity(toolTimeoutMs)) throw new RangeError(problem('toolTimeoutMs must be an integer >= 1 or Infinity', toolTimeoutMs));
  if (!isCountOrInfinity(maxToolOutputChars)) {
    throw new RangeError(problem('maxToolOutputChars must be an integer >= 1 or Infinity', maxToolOutputChars));
  }
  if (toolExecution !== 'parallel' && toolExecution !== 'sequential') {
    throw new RangeError(problem("toolExecution must be 'parallel' or 'sequential'", toolExecution));
  }
  if (signal !== undefined && !isAbortSignal(signal)) throw new TypeError(problem('signal must be an AbortSignal', signal));
  if (beforeToolCall !== undefined && typeof beforeToolCall !== 'function') throw new TypeError(problem('beforeToolCall must be a function', beforeToolCall));
  if (afterToolCall !== undefined && typeof afterToolCall !== 'function') throw new TypeError(problem('afterToolCall must be a function', afterToolCall));
  if (approvals !== undefined) checkApprovals(approvals, problem);
  if (prepareTurn !== undefined && typeof prepareTurn !== 'function') throw new TypeError(problem('prepareTurn must be a function', prepareTurn));
  const answer = output === undefined ? undefined : outputSettings(output, who); // J1: a TypeError naming output
  if (budget !== undefined && !isTokenBudget(budget)) throw new TypeError(problem('budget must be a TokenBudget', budget));
  return {
    provider,
    registry,
    // R20: the history as it was at call time, whatever the caller does to its array later; R4: in call order
    messages: inCallOrder(messages),
    maxTurns,
    concurrency: toolExecution === 'sequential' ? 1 : maxConcurrency,
    toolTimeoutMs,
    maxToolOutputChars,
    signal,
    beforeToolCall,
    afterToolCall,
    approvals,
    prepareTurn,
    output: answer,
    budget,
  };
}

/** H8: an object with a function `needsApproval` and an Observable `decisions` (rxjs's `isObservable`: by shape). */
function checkApprovals(approvals: unknown, problem: (what: string, value: unknown) => string): void {
  if (typeof approvals !== 'object' || approvals === null) {
    throw new TypeError(problem('approvals must be an object { needsApproval, decisions }', approvals));
  }
  const { needsApproval, decisions } = approvals as Partial<ToolApprovals>;
  if (typeof needsApproval !== 'function') throw new TypeError(problem('approvals.needsApproval must be a function', needsApproval));
  if (!isObservable(decisions)) throw new TypeError(problem('approvals.decisions must be an Observable', decisions));
}

function isInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1;
}
