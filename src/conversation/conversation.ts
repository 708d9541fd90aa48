import { Observable, OperatorFunction, Subscriber, Subscription, asyncScheduler, defer, isObservable, of } from 'rxjs';
import type { AgentMessage, ConversationEvent, StandardSchemaV1, UserMessage } from '../types.js';
import { attachmentsProblem } from '../util/attachments.js';
import { type LoopOptions, type LoopSettings, checkOptions } from '../loop/loop-options.js';
import type { OutputOf } from '../loop/output-spec.js';
import { resumes, runLoop } from '../loop/run-evented-tool-loop.js';
import { Trampoline } from '../loop/trampoline.js';
import { onAbort } from '../util/abort-signal.js';
import { HeldSubscriber } from '../util/held-subscriber.js';
import { isPlainObject, shown } from '../util/values.js';

/** What a prompt does while a loop runs (C2). */
export type ConversationPolicy = 'queue' | 'switch' | 'steer';

/** The options of {@link conversation}: a loop's (`output` too: each loop ends with its typed answer, J4), and where to start and what prompts do meanwhile. */
export interface ConversationOptions<S extends StandardSchemaV1 = StandardSchemaV1> extends Omit<LoopOptions<S>, 'messages'> {
  /** Where to start (a saved history, C5); default: nothing. */
  messages?: readonly AgentMessage[];
  /** What a prompt does while a loop runs; default `'queue'`. */
  policy?: ConversationPolicy;
  /**
   * A stop button: each value aborts the running loop as `signal` does (R11: the aborted turn stays in the
   * history) and drops the prompts that have not joined the history yet, each told as `prompt_dropped`; the
   * conversation goes on with the next prompt. While no loop runs, a value drops the prompts waiting in the
   * same burst (`switch`'s end of frame). An error of `abort$` ends the conversation as one of the prompts does.
   */
  abort$?: Observable<unknown>;
}

const POLICIES: readonly ConversationPolicy[] = ['queue', 'switch', 'steer'];

/**
 * Prompts in, events out (C1–C3): one loop per prompt, the history carried from each loop to the next. A
 * prompt appears as `user_message` when it joins the history. While a loop runs, a prompt waits for it
 * (`queue`), aborts it and starts once it has ended (`switch`: as `signal` would, so the aborted turn stays
 * in the history), or joins it at its next turn boundary (`steer`: the model's next call sees it). A prompt
 * dropped before it joined (by `abort$`, the signal, or an error that ends the conversation) comes out as
 * `prompt_dropped`. Completes when the prompts complete and the last loop has ended; never errors because of
 * a provider or a tool. Unsubscribing closes everything at once, even while a loop is starting (C3).
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
export function conversation<S extends StandardSchemaV1 = StandardSchemaV1>(
  options: ConversationOptions<S>,
): OperatorFunction<string | UserMessage, ConversationEvent<OutputOf<S>>> {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`conversation: options must be an object (got ${shown(options)})`);
  }
  // R20: read once, now — the options object and the messages array are copied, so later changes change nothing
  const { messages = [], policy = 'queue', abort$, ...loopOptions } = options;
  if (!POLICIES.includes(policy)) throw new RangeError(`conversation: policy must be 'queue', 'switch' or 'steer' (got ${shown(policy)})`);
  if (abort$ !== undefined && !isObservable(abort$)) throw new TypeError(`conversation: abort$ must be an Observable (got ${shown(abort$)})`);
  const settings = checkOptions({ ...loopOptions, messages: Array.isArray(messages) ? messages.slice() : messages }, 'conversation');
  // J4: each loop_end's output is what the schema validated
  return (prompts$) =>
    new Observable<ConversationEvent>((subscriber) => new Conversation(settings, policy, subscriber).start(prompts$, abort$)) as Observable<ConversationEvent<OutputOf<S>>>;
}

/** One subscription's conversation: its history, the loop that runs, the prompts that wait. */
class Conversation {
  private history: readonly AgentMessage[];
  /** Prompts that have not joined the history yet, in arrival order. */
  private waiting: UserMessage[] = [];
  /** The loop that runs, or is about to start (its start waits in the trampoline while another loop's work runs). */
  private running: { controller: AbortController; loop: LoopSubscriber } | undefined;
  /** `switch`: a start that waits for the end of the frame, so that of several prompts only the last runs. */
  private scheduled: Subscription | undefined;
  private promptsEnded = false;
  /** No more loops: the signal aborted, the prompts failed, or the consumer left. */
  private stopped = false;
  /** The prompts (or `abort$`) failed: goes out after the last `loop_end`. */
  private failure: { error: unknown } | undefined;
  // held before they subscribe, so that an unsubscribe during a synchronous start finds them (C3)
  private prompts: HeldSubscriber<string | UserMessage> | undefined;
  private aborts: HeldSubscriber<unknown> | undefined;
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

  start(prompts$: Observable<string | UserMessage>, abort$: Observable<unknown> | undefined): void {
    // C3: in place before anything can emit, so that a consumer who leaves at any point closes everything
    this.subscriber.add(() => this.teardown());
    const { signal } = this.settings;
    if (signal?.aborted) return this.subscriber.complete();
    if (signal !== undefined) this.stopListening = onAbort(signal, () => this.stop());
    if (abort$ !== undefined) {
      // a stop button: the running loop ends as R11 says, waiting prompts are dropped, the conversation goes on
      this.aborts = new HeldSubscriber<unknown>({ next: () => this.press(), error: (error: unknown) => this.fail(error) });
      abort$.subscribe(this.aborts);
    }
    // C5: a history saved while its tools ran resumes first, as a loop of its own (R22)
    if (!this.stopped && resumes(this.history)) this.run(0);
    if (this.stopped) return;
    this.prompts = new HeldSubscriber<string | UserMessage>({
      next: (prompt) => this.prompt(prompt),
      error: (error: unknown) => this.fail(error),
      complete: () => {
        this.promptsEnded = true;
        this.settle();
      },
    });
    prompts$.subscribe(this.prompts);
  }

  private prompt(prompt: string | UserMessage): void {
    if (this.stopped) return;
    let message: UserMessage;
    try {
      message = userMessage(prompt);
    } catch (error) {
      return this.fail(error);
    }
    this.waiting.push(message);
    if (this.policy === 'switch') {
      // it starts once that loop has ended; a start still to come takes it with the others
      if (this.running === undefined) this.schedule();
      else if (this.running.loop.started) this.running.controller.abort();
      return;
    }
    // queue: after this loop; steer: at its next turn boundary (or after it)
    if (this.running === undefined) this.run(this.policy === 'queue' ? 1 : Infinity);
  }

  /**
   * Starts one loop on the history with up to `count` waiting prompts joined to it (0: C5's resume). The
   * prompts are taken when it starts: what a stop dropped meanwhile is not there, and then nothing starts.
   */
  private run(count: number): void {
    const controller = new AbortController();
    const loop = new LoopSubscriber({
      next: (event) => {
        // the next loop starts from this one's history, whatever the consumer does with the array
        if (event.type === 'loop_end') this.history = event.messages.slice();
        this.subscriber.next(event);
      },
      error: (error: unknown) => this.subscriber.error(error),
      complete: () => this.ended(),
    });
    this.running = { controller, loop };
    this.trampoline.schedule(() => {
      if (loop.closed) return; // the consumer left before it started
      // one by one, so that those a stop drops meanwhile are still waiting, in order, and never join
      let joined = 0;
      while (joined < count && this.waiting.length > 0 && !controller.signal.aborted) {
        const message = this.waiting.shift()!;
        joined++;
        this.history = [...this.history, message];
        this.subscriber.next({ type: 'user_message', message, messages: this.history.slice() });
        if (loop.closed) return; // the consumer left on hearing of it: no loop
      }
      if (joined === 0 && count > 0) return this.ended(); // a stop dropped them before it started: nothing runs
      loop.started = true;
      // aborted while a prompt was being told: R7 ends the loop at once
      runLoop({ ...this.settings, messages: this.history, signal: controller.signal }, this.policy === 'steer' ? this.steering : undefined).subscribe(loop);
    });
  }

  /** `steer`: the prompts that arrived since the last turn boundary join the running loop's history. */
  private readonly steering = defer(() => of(this.waiting.splice(0)));

  /** A loop has ended (or its start found nothing to run): the next one, or the end of the conversation. */
  private ended(): void {
    this.running = undefined;
    if (this.failure !== undefined) return this.subscriber.error(this.failure.error);
    if (this.stopped) return this.subscriber.complete();
    if (this.waiting.length > 0) {
      if (this.policy === 'switch') return this.schedule();
      return this.run(this.policy === 'queue' ? 1 : Infinity); // steer: they join together
    }
    this.settle();
  }

  /**
   * `switch`: start once every prompt of this frame is in; the loop takes every one of them. A timer of
   * 0 ms on `asyncScheduler`: in virtual time it runs after the actions already due in this frame (a
   * prompt's `delay` among them), in real time after this macrotask. (An `asapScheduler` action would
   * run ahead of the frame's timers under `TestScheduler.run`, and break its bookkeeping.)
   */
  private schedule(): void {
    if (this.scheduled !== undefined) return;
    this.scheduled = asyncScheduler.schedule(() => {
      this.scheduled = undefined;
      if (this.stopped || this.running !== undefined) return;
      if (this.waiting.length > 0) this.run(Infinity);
      else this.settle();
    });
  }

  /** Completes once the prompts have, and nothing runs or waits. */
  private settle(): void {
    if (this.promptsEnded && this.running === undefined && this.scheduled === undefined && this.waiting.length === 0) this.subscriber.complete();
  }

  /** `abort$`: the prompts that have not joined are dropped, the running loop ends as R11 says; the conversation goes on. */
  private press(): void {
    if (this.stopped) return;
    this.dropWaiting();
    this.scheduled?.unsubscribe();
    this.scheduled = undefined;
    this.running?.controller.abort();
    this.settle();
  }

  /** C3: the signal aborted: as a press, and no more loops; the conversation completes after the running one. */
  private stop(): void {
    if (this.stopped) return;
    this.halt();
    if (this.running === undefined) this.subscriber.complete();
  }

  /** C3: the prompts (or `abort$`) failed, or sent something that is no prompt: as `stop`, then the error. */
  private fail(error: unknown): void {
    if (this.stopped) return;
    this.failure = { error };
    this.halt();
    if (this.running === undefined) this.subscriber.error(error);
  }

  private halt(): void {
    this.stopped = true;
    this.prompts?.unsubscribe();
    this.aborts?.unsubscribe();
    this.scheduled?.unsubscribe();
    this.scheduled = undefined;
    this.dropWaiting();
    this.running?.controller.abort();
  }

  /**
   * Left open (a): nothing the user typed is lost — each prompt waiting now is told, in order. Taken from
   * `waiting` one at a time, as it is told: a consumer that aborts the signal on hearing of one ends the
   * conversation then and there (C3), and that stop must still find the others waiting, to tell them first.
   * Only those waiting now: a prompt typed on hearing of a drop (one put back and sent again) is not dropped.
   */
  private dropWaiting(): void {
    for (let count = this.waiting.length; count > 0 && this.waiting.length > 0 && !this.subscriber.closed; count--) {
      this.subscriber.next({ type: 'prompt_dropped', message: this.waiting.shift()! });
    }
  }

  /** The consumer left (or the conversation ended): close everything, also what is still starting. */
  private teardown(): void {
    this.stopped = true;
    this.waiting = [];
    this.prompts?.unsubscribe();
    this.aborts?.unsubscribe();
    this.scheduled?.unsubscribe();
    this.running?.loop.unsubscribe();
    this.stopListening?.();
  }
}

/** A loop's subscriber, held before it subscribes; `started` once it has (a `switch` prompt then aborts it). */
class LoopSubscriber extends HeldSubscriber<ConversationEvent> {
  started = false;
}

/** A prompt as the history keeps it. */
function userMessage(prompt: unknown): UserMessage {
  if (typeof prompt === 'string') return { role: 'user', content: prompt };
  const { role, content, attachments } = (isPlainObject(prompt) ? prompt : {}) as Partial<UserMessage>;
  if (role === 'user' && typeof content === 'string') {
    if (attachments === undefined) return { role, content }; // left open (b): a copy joins the history
    // F1: checked as R21 checks a history's, the conversation failing as for any bad prompt
    const problem = attachmentsProblem(attachments);
    if (problem !== undefined) throw new TypeError(`conversation: a prompt's ${problem}`);
    return { role, content, attachments };
  }
  throw new TypeError(`conversation: a prompt must be a string or a UserMessage (got ${shown(prompt)})`);
}
