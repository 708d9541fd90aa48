import { Observable, OperatorFunction, Subscriber, Subscription, asapScheduler, isObservable } from 'rxjs';
import type { AgentMessage, ConversationEvent, UserMessage } from '../types.js';
import { type LoopOptions, type LoopSettings, checkOptions } from '../loop/loop-options.js';
import { resumes, runLoop } from '../loop/run-evented-tool-loop.js';
import { Trampoline } from '../loop/trampoline.js';
import { onAbort } from '../util/abort-signal.js';
import { isPlainObject, shown } from '../util/values.js';

/** What a prompt does while a loop runs (C2). */
export type ConversationPolicy = 'queue' | 'switch' | 'steer';

/** The options of {@link conversation}: a loop's, and where to start and what prompts do meanwhile. */
export interface ConversationOptions extends Omit<LoopOptions, 'messages'> {
  /** Where to start (a saved history, C5); default: nothing. */
  messages?: readonly AgentMessage[];
  /** What a prompt does while a loop runs; default `'queue'`. */
  policy?: ConversationPolicy;
  /**
   * A stop button: each value aborts the running loop as `signal` does (R11: the aborted turn stays in the
   * history) and drops the prompts that have not joined the history yet; the conversation goes on with the
   * next prompt. While no loop runs, a value changes nothing.
   */
  abort$?: Observable<unknown>;
}

const POLICIES: readonly ConversationPolicy[] = ['queue', 'switch', 'steer'];

/**
 * Prompts in, events out (C1–C3): one loop per prompt, the history carried from each loop to the next. A
 * prompt appears as `user_message` when it joins the history. While a loop runs, a prompt waits for it
 * (`queue`), aborts it and starts once it has ended (`switch`: as `signal` would, so the aborted turn stays
 * in the history), or joins it at its next turn boundary (`steer`: the model's next call sees it). Completes
 * when the prompts complete and the last loop has ended; never errors because of a provider or a tool.
 *
 * ```text
 * prompts:        a-------b-----|           policy 'queue'
 * conversation:   (Ua)…(L)(Ub)…(L|)         U = user_message, … = the loop's events, L = loop_end
 * prompts:        a---b                     policy 'switch': b aborts a's loop, then runs
 * conversation:   (Ua)…(…L)(Ub)…            the aborted turn and its `error: aborted` results stay
 * ```
 *
 * ```ts
 * prompts$.pipe(conversation({ provider, registry, policy: 'switch' }), toViewModel())
 *   .subscribe((state) => render(state));
 * ```
 *
 * @throws TypeError or RangeError at call time for a bad option (R20), history (R21) or `policy`.
 */
export function conversation(options: ConversationOptions): OperatorFunction<string | UserMessage, ConversationEvent> {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`conversation: options must be an object (got ${shown(options)})`);
  }
  const { messages = [], policy = 'queue', abort$, ...loopOptions } = options;
  if (!POLICIES.includes(policy)) throw new RangeError(`conversation: policy must be 'queue', 'switch' or 'steer' (got ${shown(policy)})`);
  if (abort$ !== undefined && !isObservable(abort$)) throw new TypeError(`conversation: abort$ must be an Observable (got ${shown(abort$)})`);
  const settings = checkOptions({ ...loopOptions, messages }, 'conversation');
  return (prompts$) => new Observable<ConversationEvent>((subscriber) => new Conversation(settings, policy, subscriber).start(prompts$, abort$));
}

/** One subscription's conversation: its history, the loop that runs, the prompts that wait. */
class Conversation {
  private history: readonly AgentMessage[];
  /** Prompts that have not joined the history yet. */
  private waiting: UserMessage[] = [];
  private running: { controller: AbortController; subscription: Subscription | undefined } | undefined;
  /** `switch`: a start that waits for the end of the frame, so that of several prompts only the last runs. */
  private scheduled: Subscription | undefined;
  private promptsEnded = false;
  /** No more loops: the signal aborted, or the prompts failed (then `failure` goes out after the last `loop_end`). */
  private stopped = false;
  private failure: { error: unknown } | undefined;
  private prompts: Subscription | undefined;
  private aborts: Subscription | undefined;
  private stopListening: (() => void) | undefined;
  /** Each loop starts from it, so that a long queue of synchronous loops keeps a flat stack (R12). */
  private readonly trampoline = new Trampoline();

  constructor(
    private readonly settings: LoopSettings,
    private readonly policy: ConversationPolicy,
    private readonly subscriber: Subscriber<ConversationEvent>,
  ) {
    this.history = settings.messages;
  }

  start(prompts$: Observable<string | UserMessage>, abort$: Observable<unknown> | undefined): () => void {
    const { signal } = this.settings;
    const teardown = () => this.teardown();
    if (signal?.aborted) {
      this.subscriber.complete();
      return teardown;
    }
    if (signal !== undefined) this.stopListening = onAbort(signal, () => this.stop());
    // a stop button: the running loop ends as R11 says, waiting prompts are dropped, the conversation goes on
    this.aborts = abort$?.subscribe({
      next: () => {
        this.waiting = [];
        this.running?.controller.abort();
      },
      error: (error: unknown) => this.fail(error),
    });
    // C5: a history saved while its tools ran resumes first, as a loop of its own (R22)
    if (resumes(this.history)) this.run([]);
    this.prompts = prompts$.subscribe({
      next: (prompt) => this.prompt(prompt),
      error: (error: unknown) => this.fail(error),
      complete: () => {
        this.promptsEnded = true;
        this.settle();
      },
    });
    return teardown;
  }

  private prompt(prompt: string | UserMessage): void {
    if (this.stopped) return;
    let message: UserMessage;
    try {
      message = userMessage(prompt);
    } catch (error) {
      return this.fail(error);
    }
    if (this.policy === 'switch') {
      this.waiting.push(message);
      if (this.running !== undefined) this.running.controller.abort(); // it starts once that loop has ended
      else this.schedule();
      return;
    }
    if (this.running === undefined) return this.run([message]);
    this.waiting.push(message); // queue: after this loop; steer: at its next turn boundary (or after it)
  }

  /** Starts one loop on the history with `prompts` joined to it. */
  private run(prompts: UserMessage[]): void {
    const controller = new AbortController();
    this.running = { controller, subscription: undefined };
    this.trampoline.schedule(() => {
      if (this.subscriber.closed) return;
      for (const message of prompts) {
        this.history = [...this.history, message];
        this.subscriber.next({ type: 'user_message', message, messages: this.history.slice() });
      }
      const loop = runLoop({ ...this.settings, messages: this.history, signal: controller.signal }, this.policy === 'steer' ? this.steering : undefined);
      const subscription = loop.subscribe({
        next: (event) => {
          // the next loop starts from this one's history, whatever the consumer does with the array
          if (event.type === 'loop_end') this.history = event.messages.slice();
          this.subscriber.next(event);
        },
        complete: () => this.ended(),
      });
      if (this.running?.controller === controller) this.running.subscription = subscription;
    });
  }

  /** `steer`: the prompts that arrived since the last turn boundary join the running loop's history. */
  private readonly steering = (): UserMessage[] => this.waiting.splice(0);

  /** A loop has ended: the next one, or the end of the conversation. */
  private ended(): void {
    this.running = undefined;
    if (this.failure !== undefined) return this.subscriber.error(this.failure.error);
    if (this.stopped) return this.subscriber.complete();
    if (this.waiting.length > 0) {
      if (this.policy === 'queue') return this.run([this.waiting.shift()!]);
      if (this.policy === 'steer') return this.run(this.waiting.splice(0)); // they join together
      return this.schedule();
    }
    this.settle();
  }

  /** `switch`: start when the frame's prompts are all in; the loop takes every one of them. */
  private schedule(): void {
    if (this.scheduled !== undefined) return;
    this.scheduled = asapScheduler.schedule(() => {
      this.scheduled = undefined;
      if (this.stopped || this.running !== undefined) return;
      if (this.waiting.length > 0) this.run(this.waiting.splice(0));
      else this.settle();
    });
  }

  /** Completes once the prompts have, and nothing runs or waits. */
  private settle(): void {
    if (this.promptsEnded && this.running === undefined && this.scheduled === undefined && this.waiting.length === 0) this.subscriber.complete();
  }

  /** C3: the signal aborted: the running loop ends as R11 says, then the conversation completes. */
  private stop(): void {
    this.halt();
    if (this.running === undefined) this.subscriber.complete();
  }

  /** C3: the prompts failed (or sent something that is no prompt): as `stop`, then the error. */
  private fail(error: unknown): void {
    this.failure = { error };
    this.halt();
    if (this.running === undefined) this.subscriber.error(error);
  }

  private halt(): void {
    this.stopped = true;
    this.waiting = [];
    this.scheduled?.unsubscribe();
    this.scheduled = undefined;
    this.prompts?.unsubscribe();
    this.aborts?.unsubscribe();
    this.running?.controller.abort();
  }

  private teardown(): void {
    this.stopped = true;
    this.prompts?.unsubscribe();
    this.aborts?.unsubscribe();
    this.scheduled?.unsubscribe();
    this.running?.subscription?.unsubscribe();
    this.stopListening?.();
  }
}

/** A prompt as the history keeps it. */
function userMessage(prompt: unknown): UserMessage {
  if (typeof prompt === 'string') return { role: 'user', content: prompt };
  const { role, content } = (isPlainObject(prompt) ? prompt : {}) as Partial<UserMessage>;
  if (role === 'user' && typeof content === 'string') return prompt as UserMessage;
  throw new TypeError(`conversation: a prompt must be a string or a UserMessage (got ${shown(prompt)})`);
}
