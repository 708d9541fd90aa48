import { Observable, Subscriber, Subscription, isObservable } from 'rxjs';
import type { ProviderEvent, ProviderInput, ToolSpec } from '../types.js';
import { HeldSubscriber } from '../util/held-subscriber.js';
import { errorText, shown } from '../util/values.js';
import { CallSlots } from './call-slots.js';
import { EventOrder, ProviderProtocolError, textProblem } from './event-order.js';
import type { LoopSettings } from './loop-options.js';
import { type PreparedTurn, preparedInput } from './prepared-input.js';
import { Reply } from './reply.js';
import type { TurnPart, TurnRequest } from './turn-parts.js';
import { type PhaseOut, TurnPhase, joinPhase } from './turn-phase.js';

/**
 * The turn's first phase, the source of its parts: the reply to `request` — `begin`, then the provider's
 * events as they arrive (R2), each `tool_call` as a `call` with its slot (R28). It asks the registry for the
 * tools and, with a `prepareTurn` (H6), waits for the model's view of the turn before it calls the provider. It
 * never errors: a provider that throws, returns no Observable, errors or breaks the event order (R10, R20), a
 * broken registry or a failing prepareTurn end the reply with `failed`, the reply saying why. (Turn 0 of a
 * resumed run asks no model: `resumeTurn` is its source.) Cold; unsubscribing closes the provider call and
 * prepareTurn's answer.
 *
 * ```text
 * provider:    -s-t-c-e|            s = message_start, t = text_delta, c = tool_call, e = message_end
 * streamReply: bs-t-c-e|            b = begin, c = the call with its slot
 * provider:    -s-#
 * streamReply: bs-(f|)              f = failed: the reply's errorMessage is 'provider error: …'
 * ```
 * (spec/loop/stream-reply.spec.ts)
 */
export function streamReply(request: TurnRequest, loop: LoopSettings): Observable<TurnPart> {
  return new ReplyPhase(request, loop);
}

/** streamReply's Observable: the first of the turn's phases, which the next ones fuse with. */
class ReplyPhase extends TurnPhase<TurnPart> {
  constructor(
    private readonly request: TurnRequest,
    private readonly loop: LoopSettings,
  ) {
    super();
  }

  open(into: PhaseOut<TurnPart>, fused: boolean): ReplyStream {
    return new ReplyStream(into, fused, this.loop, this.request);
  }
}

/**
 * The turn's reply, its event order and its calls' slots, and the provider's subscriber (a class rather than
 * a closure: an object a turn instead of a dozen functions, bench W1). Joins `out` (or, fused, is held by it)
 * before the provider is subscribed, so that a consumer who leaves on an event of a synchronous provider
 * closes it at once (C3).
 */
class ReplyStream extends Subscriber<ProviderEvent> {
  private readonly reply = new Reply();
  private readonly order = new EventOrder();
  private readonly slots = new CallSlots();
  /** prepareTurn's answer (H6). */
  private preparing: Subscription | undefined;

  constructor(
    private readonly out: PhaseOut<TurnPart>,
    fused: boolean,
    private readonly loop: LoopSettings,
    private readonly request: TurnRequest,
  ) {
    // its own methods all go to `out`: no destination of rxjs's is needed
    super();
    joinPhase(out, fused, this);
  }

  start(): void {
    const { out, loop, request } = this;
    out.next({ type: 'begin', request, reply: this.reply });
    // the consumer left at turn_start, or the signal aborted the turn: no model call
    if (out.closed) return;
    // J1: an answer turn asks for the answer in its schema, with no tools (JSON modes and tools exclude each other on several APIs)
    const { output } = request;
    let specs: unknown;
    try {
      specs = output === undefined ? loop.registry.getSpecs() : [];
    } catch (error) {
      return this.fail(error, 'registry.getSpecs failed: '); // R20: a broken registry ends the turn, named
    }
    if (!Array.isArray(specs)) return this.fail(new ProviderProtocolError(`registry.getSpecs returned ${shown(specs)}, not an array`));
    const input: ProviderInput = { messages: request.history.slice(), tools: specs as ToolSpec[] };
    if (output !== undefined) input.output = output;
    if (loop.prepareTurn === undefined) return this.ask(input);
    this.prepare(input, request);
  }

  // the provider's events: checked, read once (R20: a getter that throws is the provider's failure), then out
  // (`next` itself rather than `_next`, as expandLast's subscriber: one call less an event, which buys 6.3% of
  // W2 with expandLast's, bench/machinery.js)
  override next(event: ProviderEvent): void {
    if (this.isStopped) return;
    let part: TurnPart;
    try {
      // the most frequent event first, its text read once: buys 7.7% of W2 (bench/machinery.js, 1,304 → 1,204 instructions a delta)
      if (this.order.open && typeof event === 'object' && event !== null && event.type === 'text_delta') {
        const { text } = event;
        const problem = textProblem(text);
        if (problem !== undefined) throw new ProviderProtocolError(problem);
        this.reply.text.append(text);
        part = event;
      } else {
        const problem = this.order.accept(event);
        if (problem !== undefined) throw new ProviderProtocolError(problem);
        // the call takes its slot before anyone hears of it: an abort during its delivery still answers it
        if (event.type === 'tool_call') part = this.slots.add(event);
        else {
          this.reply.record(event);
          part = event;
        }
      }
    } catch (error) {
      return this.fail(error instanceof ProviderProtocolError ? error : unreadable(error));
    }
    try {
      this.out.next(part);
    } catch (error) {
      // the phases after this one read the event's fields again (its `type`, say); a getter that answered here and
      // throws on a later read is the provider's failure too (R20), whichever phase read it
      this.fail(unreadable(error));
    }
  }

  protected override _error(error: unknown): void {
    this.fail(error);
  }

  /** The provider completed: the reply ends, unless it never sent its message_end (R10). */
  protected override _complete(): void {
    const problem = this.order.complete();
    if (problem !== undefined) return this.fail(new ProviderProtocolError(problem));
    this.end();
  }

  override unsubscribe(): void {
    this.preparing?.unsubscribe();
    super.unsubscribe();
  }

  /** One provider call on `input`, its events into the turn (R2), checked as they come (R10). */
  private ask(input: ProviderInput): void {
    let events: unknown;
    try {
      events = this.loop.provider(input);
    } catch (error) {
      return this.fail(error);
    }
    // R20: a provider is a function returning an Observable; anything else ends the reply, named
    if (!isObservable(events)) return this.fail(new ProviderProtocolError(`provider returned ${shown(events)}, not an Observable`));
    // cancelled while the provider function ran (it aborted the signal, say): do not subscribe
    if (this.out.closed) return;
    try {
      (events as Observable<ProviderEvent>).subscribe(this);
    } catch (error) {
      this.fail(error); // an Observable of another kind, whose subscribe throws
    }
  }

  /** H6, R36: the model's view of this turn, a source that may take its time; an abort meanwhile means no model call. */
  private prepare(input: ProviderInput, { turn, history, lastUsage }: TurnRequest): void {
    const { out } = this;
    out.next({ type: 'waiting' });
    if (out.closed) return;
    // held before it subscribes: a consumer that leaves while prepareTurn runs closes it, and its signal aborts (C3, H5)
    const held = new HeldSubscriber<PreparedTurn>({
      next: ({ input, compaction }) => {
        out.next({ type: 'asked', compaction });
        if (!out.closed) this.ask(input);
      },
      error: (error: unknown) => this.fail(error, 'prepareTurn failed: '),
    });
    this.preparing = held;
    preparedInput(input, turn, history, this.loop, lastUsage).subscribe(held);
  }

  /** R10, R20: the provider (or prepareTurn, `what`, or the registry) failed: the reply ends, saying how. */
  private fail(error: unknown, what = 'provider error: '): void {
    const { out } = this;
    this.unsubscribe();
    if (out.closed) return;
    this.reply.fail(error instanceof ProviderProtocolError ? error.message : `${what}${errorText(error)}`);
    out.next({ type: 'failed' });
    out.complete();
  }

  private end(): void {
    const { out } = this;
    this.unsubscribe();
    out.complete();
  }
}

/** R20: a provider event whose fields throw when read. */
function unreadable(error: unknown): ProviderProtocolError {
  return new ProviderProtocolError(`provider sent an event that could not be read: ${errorText(error)}`);
}

