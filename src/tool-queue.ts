import { Subscription } from 'rxjs';
import { ToolProgress, executeTool } from './execute-tool.js';
import type { ToolRegistry } from './tool-registry.js';
import type { ToolCall } from './types.js';

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
  private readonly waiting: { call: ToolCall; index: number }[] = [];
  private readonly running = new Subscription();
  private active = 0;
  private added = 0;

  constructor(
    private readonly registry: ToolRegistry,
    private readonly concurrency: number,
    private readonly timeoutMs: number,
    private readonly events: ToolQueueEvents,
  ) {}

  get idle(): boolean {
    return this.active === 0 && this.waiting.length === 0;
  }

  add(call: ToolCall): void {
    this.waiting.push({ call, index: this.added++ });
    this.drain();
  }

  stop(): void {
    this.waiting.length = 0;
    this.active = 0;
    this.running.unsubscribe();
  }

  private drain(): void {
    while (this.active < this.concurrency && this.waiting.length > 0) this.start(this.waiting.shift()!);
  }

  private start({ call, index }: { call: ToolCall; index: number }): void {
    this.active++;
    let finished = false;
    let subscription: Subscription | undefined = undefined;
    subscription = executeTool(this.registry.get(call.name), call, this.timeoutMs).subscribe({
      next: (progress) => this.events.progress(index, progress),
      complete: () => {
        finished = true;
        this.active--;
        // a synchronous tool completes before `subscription` is assigned: nothing to remove then
        if (subscription !== undefined) this.running.remove(subscription);
        this.drain();
        if (this.idle) this.events.idle();
      },
    });
    if (!finished) this.running.add(subscription);
  }
}
