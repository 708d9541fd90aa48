import { Observable, Subscription, of } from 'rxjs';
import { HeldSubscriber } from '../util/held-subscriber.js';
import { ToolProgress, executeTool } from './execute-tool.js';
import { settled } from './tool-outcome.js';
import { failureResult } from './tool-result.js';
import type { ToolHooks } from './tool-hooks.js';
import type { ToolLookup } from './tool-registry.js';
import type { Tool, ToolCall } from '../types.js';

/** What a {@link ToolQueue} reports: progress of the call at `index` (its place in the turn's calls). */
export interface ToolQueueEvents {
  progress(index: number, progress: ToolProgress): void;
  /** Nothing is running and nothing is waiting. */
  idle(): void;
}

/**
 * The tools of one turn (R3): each call starts as soon as it is added, unless `concurrency` calls are
 * already running — then it waits for one to finish (sequential mode is `concurrency` 1). `stop()`
 * tears down every running tool and drops the waiting ones (R11).
 *
 * ```text
 * add:        a-b-c            concurrency 2, each tool takes 4 frames
 * tool a:     ^---!
 * tool b:       ^---!
 * tool c:         --^---!      waits until a has finished
 * ```
 */
export class ToolQueue {
  private waiting: { call: ToolCall; index: number }[] = [];
  private head = 0; // waiting[head] is next: `shift()` is O(n) on a long queue
  private readonly running = new Subscription();
  /**
   * `stop()` was called. Asked by a call right after its `tool_start` (a queue stopped meanwhile runs no
   * handler, R23) and before a hook (what a call sends from now on reaches no one — nor afterToolCall, H3).
   */
  readonly isStopped = (): boolean => this.stopped;
  private active = 0;
  /** The tool inside its synchronous start, not yet in `running`. */
  private starting: Subscription | undefined;
  private draining = false;
  private stopped = false;

  constructor(
    private readonly registry: ToolLookup,
    private readonly concurrency: number,
    private readonly timeoutMs: number,
    private readonly events: ToolQueueEvents,
    /** H1: a call's hooks run inside its slot, so a call waiting for approval holds it. */
    private readonly hooks?: ToolHooks,
  ) {}

  get idle(): boolean {
    return this.active === 0 && this.head === this.waiting.length;
  }

  /** Runs `call`, the turn's `index`-th (its slot in the history), as soon as there is room. */
  add(call: ToolCall, index: number): void {
    this.waiting.push({ call, index });
    this.drain();
  }

  stop(): void {
    this.stopped = true;
    this.waiting = [];
    this.head = 0;
    this.active = 0;
    this.starting?.unsubscribe();
    this.running.unsubscribe();
  }


  /**
   * Starts waiting calls while there is room. A synchronous tool finishes inside `start` and calls
   * `drain` again: that nested call returns at once and this loop goes on, so a long queue of
   * synchronous calls keeps a flat stack.
   */
  private drain(): void {
    if (this.draining) return;
    this.draining = true;
    while (!this.stopped && this.active < this.concurrency && this.head < this.waiting.length) {
      this.start(this.waiting[this.head++]!);
    }
    if (this.head === this.waiting.length) {
      this.waiting = [];
      this.head = 0;
    }
    this.draining = false;
  }

  /** R9, R20: the call's run; a registry whose `get` throws answers the call with the error, named. */
  private run(call: ToolCall): Observable<ToolProgress> {
    let tool: Tool | undefined;
    try {
      tool = this.registry.get(call.name);
    } catch (error) {
      return of(settled(failureResult(call, error, 'registry.get failed: ')));
    }
    return executeTool(tool, call, this.timeoutMs, this.hooks, this.isStopped);
  }

  private start({ call, index }: { call: ToolCall; index: number }): void {
    this.active++;
    // held before it subscribes, so that stop() closes a tool still inside its synchronous start at once
    // (C3: a consumer that leaves on its tool_result); closing it, or its end, takes it out of `running`
    const subscription = new HeldSubscriber<ToolProgress>({
      // once the queue is stopped, what it sends is no longer wanted
      next: (progress) => this.stopped || this.events.progress(index, progress),
      complete: () => {
        if (this.stopped) return;
        this.active--;
        this.drain();
        if (this.idle) this.events.idle();
      },
    });
    // a tool inside its synchronous start is `starting`: stop() closes it there (C3); one that is still running
    // afterwards joins `running` (once stopped, `running` is closed, and adding to it unsubscribes at once).
    // A synchronous tool never joins it: no add and remove per call (W1)
    const outer = this.starting;
    this.starting = subscription;
    try {
      this.run(call).subscribe(subscription);
    } finally {
      this.starting = outer;
    }
    if (!subscription.closed) this.running.add(subscription);
  }
}
