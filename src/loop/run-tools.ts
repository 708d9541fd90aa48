import { OperatorFunction, Subscriber, Subscription } from 'rxjs';
import { hooked } from '../hooks/tool-hooks.js';
import { type Between, type ToolProgress, finish, startTool } from '../tools/execute-tool.js';
import { settled } from '../tools/tool-outcome.js';
import { failureResult, limitOutput, toolErrorMessage } from '../tools/tool-result.js';
import type { Tool, ToolCall, ToolResultMessage } from '../types.js';
import { HeadQueue } from '../util/head-queue.js';
import type { LoopSettings } from './loop-options.js';
import type { CallPart, TurnPart } from './turn-parts.js';
import { type PhaseOut, PhaseSubscriber, phaseOperator } from './turn-phase.js';

/**
 * The turn's second phase: every part passes through, and each `call` starts its tool as soon as it has
 * passed (R3) — unless `concurrency` calls are running: then it waits for one to finish (sequential mode
 * is concurrency 1). A tool's `tool_start` and `tool_update`s come out as they happen, its result as
 * `settled` (cut to `maxToolOutputChars`, R26); a repeated id never runs (R28), an unknown tool or a broken
 * registry is answered at once (R9, R20). Hooks, approvals, validators and timeouts run inside each call
 * (H1–H5, H8, R16, R24): a call that waits holds its slot. Completes when its source has and every tool has
 * finished; unsubscribing tears every tool down.
 *
 * ```text
 * parts:     b-C-D-e|              C, D = calls (concurrency 1), e = message_end
 * tool C:       S---(r|)           S = tool_start, r = its result
 * tool D:            S-(r|)        waits for C
 * runTools:  b-CSD-e(rS)-(r|)      r = settled
 * ```
 * (spec/loop/run-tools.spec.ts)
 */
export function runTools(loop: LoopSettings): OperatorFunction<TurnPart, TurnPart> {
  return phaseOperator((into: PhaseOut<TurnPart>, fused: boolean) => new ToolRun(into, fused, loop));
}

/**
 * One turn's tools: the subscriber runTools puts on its parts, holding the turn's queue of calls (a class
 * rather than a closure: an object a turn instead of a dozen functions, bench W1). Joins `out` (or, fused,
 * is held by it), so that unsubscribing downstream stops every tool at once, also one inside its
 * synchronous start (C3).
 */
class ToolRun extends PhaseSubscriber<TurnPart, TurnPart> {
  /** H1–H5: a call between the turn's hooks, when it has any. */
  private between: Between | undefined;
  private sourceDone = false;
  private readonly waiting = new HeadQueue<CallPart>();
  private active = 0;
  private draining = false;
  private stopped = false;
  /** Tools inside their synchronous start (nested when one's end starts the next); those still running after it. */
  private readonly starting: CallSubscriber[] = [];
  private running: Subscription | undefined;

  constructor(
    out: PhaseOut<TurnPart>,
    fused: boolean,
    private readonly loop: LoopSettings,
  ) {
    super(out, fused);
  }

  override next(part: TurnPart): void {
    if (this.isStopped) return;
    const { out } = this;
    if (part.type === 'begin') {
      const { request } = part;
      const { beforeToolCall: before, afterToolCall: after, approvals } = this.loop;
      // H2: the hooks are told the history as of the turn's start, which the turn's end must not change
      if (before !== undefined || after !== undefined || approvals !== undefined) {
        const hooks = { before, after, approvals, turn: request.turn, messages: request.history.slice() };
        this.between = (call, run) => hooked(hooks, call, run);
      }
    }
    out.next(part);
    if (part.type === 'call' && !out.closed) this.call(part);
  }

  protected override _complete(): void {
    this.sourceDone = true;
    this.endIfDone();
  }

  // unsubscribed from downstream (or done): every tool stops, also one inside its synchronous start (C3)
  override unsubscribe(): void {
    this.stop();
    super.unsubscribe();
  }

  /** R3: a call starts as soon as it arrives; R28: a repeated id never runs, its result says why. */
  private call(part: CallPart): void {
    if (part.duplicateOf !== undefined) return this.settle(part.index, toolErrorMessage(part.call, `error: duplicate tool call id: ${part.duplicateOf}`), false);
    this.waiting.push(part);
    this.drain();
  }

  /** A call's result goes out as `settled`, cut to maxToolOutputChars first (R26). */
  settle(index: number, message: ToolResultMessage, terminate: boolean): void {
    this.out.next({ type: 'settled', index, message: limitOutput(message, this.loop.maxToolOutputChars), terminate });
  }

  progress(progress: ToolProgress): void {
    this.out.next(progress as TurnPart);
  }

  /** A call has finished: room for the next. */
  finished(): void {
    this.active--;
    this.drain();
    this.endIfDone();
  }

  private endIfDone(): void {
    if (this.sourceDone && this.active === 0 && this.waiting.length === 0 && !this.out.closed) {
      const { out } = this;
      super.unsubscribe(); // nothing left to stop
      out.complete();
    }
  }

  /**
   * Starts waiting calls while there is room. A synchronous tool finishes inside `start` and calls
   * `drain` again: that nested call returns at once and this loop goes on, so a long queue of
   * synchronous calls keeps a flat stack.
   */
  private drain(): void {
    if (this.draining) return;
    this.draining = true;
    while (!this.stopped && this.active < this.loop.concurrency && this.waiting.length > 0) this.start(this.waiting.shift()!);
    this.draining = false;
  }

  private start({ call, index }: CallPart): void {
    this.active++;
    // held before it subscribes, so that stopping closes a tool still inside its synchronous start at
    // once (C3: a consumer that leaves on its tool_start, R23: its handler never runs)
    const tool = new CallSubscriber(this, index);
    const { starting } = this;
    starting.push(tool);
    try {
      this.run(call, tool);
    } finally {
      starting.pop();
    }
    // a synchronous tool never joins `running` (it is held in `starting` meanwhile): no add and remove per call,
    // which buys 5% of W1 (bench/machinery.js: 4.5% and 6.1% in two runs)
    if (!tool.closed) (this.running ??= new Subscription()).add(tool);
  }

  /**
   * R9, R20: the call's run into its subscriber, as subscribing `executeTool` would (its teardown held by it, a
   * throw its error), without an Observable between — which buys 5.5% of W1 (bench/machinery.js: 83,955 → 79,337
   * instructions a turn); a registry whose `get` throws answers the call, named.
   */
  private run(call: ToolCall, subscriber: CallSubscriber): void {
    let tool: Tool | undefined;
    try {
      tool = this.loop.registry.get(call.name);
    } catch (error) {
      return finish(subscriber, settled(failureResult(call, error, 'registry.get failed: ')));
    }
    try {
      subscriber.add(startTool(tool, call, this.loop.toolTimeoutMs, this.between, subscriber, this.loop.budget));
    } catch (error) {
      subscriber.error(error);
    }
  }

  private stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.waiting.clear();
    for (const tool of this.starting) tool.unsubscribe();
    this.running?.unsubscribe();
  }
}

/** One call's subscriber: its progress and result to the turn's tools (not after it was closed from outside). */
class CallSubscriber extends Subscriber<ToolProgress> {
  constructor(
    private readonly tools: ToolRun,
    private readonly index: number,
  ) {
    super();
  }

  protected override _next(progress: ToolProgress): void {
    if (progress.type === 'settled') this.tools.settle(this.index, progress.message, progress.terminate);
    else this.tools.progress(progress);
  }

  protected override _complete(): void {
    this.unsubscribe();
    this.tools.finished();
  }
}
