import { Observable, SchedulerLike, Subject, Subscription, asyncScheduler, defer, startWith } from 'rxjs';
import type { ProviderFailure, Usage } from '../types.js';
import { HeadQueue } from '../util/head-queue.js';
import { tokensOf } from './token-budget.js';
import { isCountOrInfinity, shown } from '../util/values.js';

/** The options of {@link createLimiter}; a limit not given is no limit. */
export interface LimiterOptions {
  /** At most this many calls at once. */
  maxConcurrent?: number;
  /** At most this many calls started in any minute. */
  requestsPerMinute?: number;
  /** At most this many tokens (input and output) in any minute: usage at each call's end, characters / 4 while it runs. */
  tokensPerMinute?: number;
  /** Where time is read and waits are scheduled (default `asyncScheduler`: virtual under `TestScheduler.run`). */
  scheduler?: SchedulerLike;
}

/** What a limiter is doing now (`limiter.state$`). */
export interface LimiterState {
  /** Calls waiting for a slot. */
  waiting: number;
  /** Calls subscribed to their provider. */
  running: number;
  /** Tokens counted in the last minute: the usage of calls that ended, and the estimate of those running. */
  tokens: number;
  /** While a 429 paused the limiter: until when, on its scheduler's clock. */
  pausedUntil?: number;
}

/**
 * One limited call, as the limiter knows it: its priority, what starts it, and its estimate while it runs. An
 * interface, so that `limited`'s subscriber can be the call itself (one object a call, L6).
 */
export interface LimitedCall {
  /** `new`; `waiting` in a queue; `running` with a slot; `done` (it ended, or left the queue). */
  state: 'new' | 'waiting' | 'running' | 'done';
  /** Tokens counted for it while it runs: its input's characters / 4, and what it has streamed. */
  estimate: number;
  readonly priority: number;
  /** Subscribes the provider: called once, when the call gets its slot. */
  start(): void;
}

const MINUTE_MS = 60_000;

/**
 * L2: what limited providers share — any number of loops and conversations, each call through
 * `limited(provider, limiter)`. A call waits, unsubscribed from its provider, until a slot is free: fewer
 * than `maxConcurrent` running, fewer than `requestsPerMinute` started and fewer than `tokensPerMinute` counted
 * in the last minute, and no 429 pause; higher priorities first, first come first served within one. A call
 * unsubscribed while it waits leaves the queue. A call that ends with HTTP 429 and a `retry-after` pauses
 * every call of the limiter that long (L4: after its provider's own retries), so that the waiting calls do
 * not storm the API. `state$` tells how many wait and run.
 *
 * ```text
 * a:         -s-d|          three calls of one limiter with maxConcurrent 1; each provider call from its subscription
 * b:            -s-d|       subscribed at a's message_end (frame 3)
 * c:               -s-d|    and c at b's (frame 6)
 * limited:   -s-d|          the three calls as their consumers see them
 *            ----s-d|
 *            -------s-d|
 * ```
 * (spec/limits/limiter.spec.ts runs this picture; marbles/33 and 34 draw three conversations on one limiter, and the 429 pause.)
 *
 * ```ts
 * const limiter = createLimiter({ maxConcurrent: 4, requestsPerMinute: 500, tokensPerMinute: 200_000 });
 * const model = limited(openAIChatProvider({ model: 'gpt-4.1' }), limiter);
 * limiter.state$.subscribe(({ waiting }) => console.log(`${waiting} waiting`));
 * ```
 *
 * @throws RangeError when a limit is not a number >= 1 (or `Infinity`), at call time.
 */
export function createLimiter(options: LimiterOptions = {}): Limiter {
  return new Limiter(options);
}

/** A limiter: made by {@link createLimiter}, shared by every `limited` provider given it. */
export class Limiter {
  /** What the limiter is doing: the state now on subscribe, then each change. */
  readonly state$: Observable<LimiterState>;

  private readonly maxConcurrent: number;
  private readonly requestsPerMinute: number;
  private readonly tokensPerMinute: number;
  private readonly scheduler: SchedulerLike;
  /** Whether calls' tokens are counted at all: only with `tokensPerMinute`. */
  readonly countsTokens: boolean;
  /** No limit in time (`requestsPerMinute`, `tokensPerMinute`): the clock is never read unless a 429 paused. */
  private readonly untimed: boolean;
  /** Waiting calls, one queue per priority; `priorities` highest first. */
  private readonly queues = new Map<number, HeadQueue<LimitedCall>>();
  private priorities: number[] = [];
  private waiting = 0;
  private running = 0;
  /** The running calls' estimates, added up. */
  private estimates = 0;
  /** When each call of the last minute started (only with `requestsPerMinute`). */
  private readonly starts = new HeadQueue<number>();
  /** What each call of the last minute counted when it ended (only with `tokensPerMinute`). */
  private readonly counted = new HeadQueue<{ at: number; tokens: number }>();
  private countedTokens = 0;
  private pausedUntil = 0;
  private wake: Subscription | undefined;
  private wakeAt = Infinity;
  private pumping = false;
  private readonly changes = new Subject<LimiterState>();

  constructor(options: LimiterOptions) {
    const problem = (what: string, value: unknown) => `createLimiter: ${what} (got ${shown(value)})`;
    if (typeof options !== 'object' || options === null) throw new TypeError(problem('options must be an object', options));
    const { maxConcurrent = Infinity, requestsPerMinute = Infinity, tokensPerMinute = Infinity, scheduler = asyncScheduler } = options;
    for (const [name, value] of Object.entries({ maxConcurrent, requestsPerMinute, tokensPerMinute })) {
      if (!isCountOrInfinity(value)) {
        throw new RangeError(problem(`${name} must be an integer >= 1 or Infinity`, value));
      }
    }
    if (typeof scheduler?.schedule !== 'function' || typeof scheduler.now !== 'function') {
      throw new TypeError(problem('scheduler must be a SchedulerLike', scheduler));
    }
    this.maxConcurrent = maxConcurrent;
    this.requestsPerMinute = requestsPerMinute;
    this.tokensPerMinute = tokensPerMinute;
    this.scheduler = scheduler;
    this.countsTokens = tokensPerMinute < Infinity;
    this.untimed = requestsPerMinute === Infinity && !this.countsTokens;
    this.state$ = defer(() => this.changes.pipe(startWith(this.state)));
  }

  /** What the limiter is doing now. */
  get state(): LimiterState {
    const state: LimiterState = { waiting: this.waiting, running: this.running, tokens: Math.ceil(this.countedTokens + this.estimates) };
    if (this.pausedUntil > this.scheduler.now()) state.pausedUntil = this.pausedUntil;
    return state;
  }

  /** A call joins its priority's queue; it starts at once when a slot is free. */
  enter(call: LimitedCall): void {
    if (call.state !== 'new') return;
    // a free slot and no one before it: straight in, no queue (L6: the cost of a limited call with a free slot)
    if (this.waiting === 0 && !this.pumping && this.waitFor() === 0) {
      this.pumping = true;
      try {
        this.begin(call);
      } finally {
        this.pumping = false;
      }
      if (this.waiting > 0) this.pump(); // calls its start queued (a provider that subscribes another limited call)
      else this.publish();
      return;
    }
    call.state = 'waiting';
    let queue = this.queues.get(call.priority);
    if (queue === undefined) {
      queue = new HeadQueue<LimitedCall>();
      this.queues.set(call.priority, queue);
      this.priorities = [...this.queues.keys()].sort((a, b) => b - a);
    }
    queue.push(call);
    this.waiting++;
    this.pump();
  }

  /** A waiting call was unsubscribed: it leaves the queue (it is skipped when it comes up); a running one ends. */
  leave(call: LimitedCall): void {
    if (call.state === 'running') return this.end(call);
    if (call.state !== 'waiting') return;
    call.state = 'done';
    this.waiting--;
    this.publish();
  }

  /** A running call streamed `chars` more characters: counted while it runs. */
  grow(call: LimitedCall, chars: number): void {
    if (call.state !== 'running') return;
    call.estimate += chars / 4;
    this.estimates += chars / 4;
  }

  /** A running call ended: its slot is free, its tokens counted (its usage, else its estimate), a 429 pauses all. */
  end(call: LimitedCall, usage?: Usage, failure?: ProviderFailure): void {
    if (call.state !== 'running') return;
    call.state = 'done';
    this.running--;
    this.estimates -= call.estimate;
    if (this.countsTokens) {
      const tokens = usage === undefined ? call.estimate : tokensOf(usage);
      this.counted.push({ at: this.scheduler.now(), tokens });
      this.countedTokens += tokens;
    }
    if (failure?.kind === 'http' && failure.status === 429 && failure.retryAfterMs !== undefined) {
      this.pausedUntil = Math.max(this.pausedUntil, this.scheduler.now() + failure.retryAfterMs);
    }
    if (this.waiting > 0) this.pump();
    else this.publish();
  }

  /** Starts waiting calls while there is room; when only time will make room, wakes up then. */
  private pump(): void {
    if (this.pumping) return; // a call that ended inside its own start: the loop below goes on
    this.pumping = true;
    try {
      for (let call = this.next(); call !== undefined; call = this.next()) {
        const wait = this.waitFor();
        if (wait > 0) {
          if (wait < Infinity) this.wakeIn(wait);
          break;
        }
        this.queues.get(call.priority)!.shift();
        this.waiting--;
        this.begin(call);
      }
    } finally {
      this.pumping = false;
    }
    this.publish();
  }

  /** The call has its slot: it runs. */
  private begin(call: LimitedCall): void {
    this.running++;
    call.state = 'running';
    this.estimates += call.estimate;
    if (this.requestsPerMinute < Infinity) this.starts.push(this.scheduler.now());
    call.start();
  }

  /** The first call of the highest priority that waits; calls that left are dropped on the way. */
  private next(): LimitedCall | undefined {
    if (this.waiting === 0) return undefined;
    for (const priority of this.priorities) {
      const queue = this.queues.get(priority)!;
      for (let call = queue.peek(); call !== undefined; call = queue.peek()) {
        if (call.state === 'waiting') return call;
        queue.shift();
      }
    }
    return undefined;
  }

  /** 0 when a call may start now; else how long until it may (`Infinity`: until a running call ends). */
  private waitFor(): number {
    if (this.running >= this.maxConcurrent && this.pausedUntil === 0) return Infinity;
    // the clock is read only where a limit in time is set
    if (this.pausedUntil === 0 && this.untimed) return 0;
    const now = this.scheduler.now();
    if (this.pausedUntil > now) return this.pausedUntil - now;
    this.pausedUntil = 0;
    if (this.running >= this.maxConcurrent) return Infinity;
    if (this.requestsPerMinute < Infinity) {
      while ((this.starts.peek() ?? Infinity) <= now - MINUTE_MS) this.starts.shift();
      if (this.starts.length >= this.requestsPerMinute) return this.starts.peek()! + MINUTE_MS - now;
    }
    if (this.countsTokens) {
      for (let first = this.counted.peek(); first !== undefined && first.at <= now - MINUTE_MS; first = this.counted.peek()) {
        this.countedTokens -= this.counted.shift()!.tokens;
      }
      if (this.counted.length === 0) this.countedTokens = 0; // no drift from adding and taking away fractions
      if (this.countedTokens + this.estimates >= this.tokensPerMinute) {
        const first = this.counted.peek();
        return first === undefined ? Infinity : first.at + MINUTE_MS - now;
      }
    }
    return 0;
  }

  private wakeIn(ms: number): void {
    const at = this.scheduler.now() + ms;
    if (this.wake !== undefined && this.wakeAt <= at) return;
    this.wake?.unsubscribe();
    this.wakeAt = at;
    this.wake = this.scheduler.schedule(() => {
      this.wake = undefined;
      this.wakeAt = Infinity;
      this.pump();
    }, ms);
  }

  private publish(): void {
    if (this.changes.observed) this.changes.next(this.state);
  }
}
