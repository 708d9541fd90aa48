import { Observable, Observer, OperatorFunction, Subscriber, Unsubscribable } from 'rxjs';
import { HeldSubscriber } from '../util/held-subscriber.js';

/** Where a phase of the turn sends its values: the next phase's subscriber, or the subscriber of its Observable. */
export interface PhaseOut<T> extends Observer<T> {
  readonly closed: boolean;
}

/**
 * The subscriber a phase of the turn puts on the phase before it (R30: `streamReply → runTools → draftTurn`),
 * holding that phase's state for one turn. It is an observer of its own rather than an rxjs `Subscriber`:
 * the phase before it calls it directly, and it unsubscribes that phase itself (`before`), so that a turn's
 * phases are one subscription, with no finalizer list to join and leave between them (bench W1). It joins
 * `out` when `out` is an rxjs subscriber (`fused` false), or is held by `out`, the next phase's (`fused`).
 * The same contract as a Subscriber's: after `complete`, `error` or `unsubscribe` it takes nothing more.
 */
export abstract class PhaseSubscriber<In, Out> implements PhaseOut<In>, Unsubscribable {
  closed = false;
  /** Told `complete` or `error`, or unsubscribed: it takes no more values. */
  protected isStopped = false;
  /** The phase before this one (or the subscription to its parts), unsubscribed with this one. */
  private before: Unsubscribable | undefined;

  constructor(
    protected readonly out: PhaseOut<Out>,
    fused: boolean,
  ) {
    joinPhase(out, fused, this);
  }

  /** Fused: `before`, the phase before this one, is this one's to unsubscribe. */
  hold(before: Unsubscribable): void {
    this.before = before;
  }

  abstract next(value: In): void;

  error(error: unknown): void {
    if (this.isStopped) return;
    this.isStopped = true;
    try {
      this.out.error(error);
    } finally {
      this.unsubscribe();
    }
  }

  complete(): void {
    if (this.isStopped) return;
    this.isStopped = true;
    this._complete();
  }

  /** Its source completed. */
  protected abstract _complete(): void;

  unsubscribe(): void {
    if (this.closed) return;
    this.closed = this.isStopped = true;
    this.before?.unsubscribe();
  }
}

/** Makes a phase's subscriber into `into` (`fused`: `into` is the next phase's, which will hold it). */
export type PhaseOf<In, Out> = (into: PhaseOut<Out>, fused: boolean) => PhaseSubscriber<In, Out>;

/**
 * The one phase join: `phase` (a phase's subscriber, or the subscription to a source's parts) joins `out`, the
 * phase after it — held by it when `out` is that phase's own subscriber (`fused`), else added to it as to any
 * rxjs subscriber — so that unsubscribing downstream unsubscribes `phase`, also during its synchronous start (C3).
 */
export function joinPhase<T>(out: PhaseOut<T>, fused: boolean, phase: Unsubscribable): void {
  if (fused) (out as PhaseSubscriber<T, unknown>).hold(phase);
  else (out as Subscriber<T>).add(phase);
}

/**
 * A phase as an operator (`runTools`, `draftTurn`): its subscriber fused after the phases before it —
 * `streamReply`'s, or any Observable of parts (`phasesOf`) — one path (R33).
 *
 * ```text
 * parts:           b-C-e|
 * phaseOperator:   the phase's subscriber on b-C-e|, fused with the phases that made them
 * ```
 *
 * ```ts
 * const runTools = (loop: LoopSettings) => phaseOperator((into, fused) => new ToolRun(into, fused, loop));
 * ```
 */
export function phaseOperator<In, Out>(phase: PhaseOf<In, Out>): OperatorFunction<In, Out> {
  return (parts) => phasesOf(parts).then(phase);
}

/**
 * The Observable of the turn's phases so far, which the next phase fuses with (as Reactor and RxJava fuse
 * operators): `streamReply` returns one, and `runTools` and `draftTurn`, piped onto one, return it with their
 * own phase after it instead of an Observable of their own. Subscribed, it makes the phases' subscribers,
 * the last one's first, each fused into the next, then starts the first (the reply). Cold, as any Observable.
 * Fusion buys about 20% of W1 in time: paired against 318efd9, W1 ran 1.20–1.34× without it, 1.04–1.14× with it
 * (bench/findings.md, R33); any other source of parts fuses too (`phasesOf`), so the specs drive this path.
 *
 * ```text
 * streamReply(request, loop).pipe(runTools(loop), draftTurn(loop))   one Observable, one subscription:
 * subscriber → Drafting ← ToolRun ← ReplyStream ← provider           each phase holds the one before it
 * ```
 */
export abstract class TurnPhase<T> extends Observable<T> {
  constructor() {
    super(subscribePhases);
  }

  /** Makes these phases' subscribers, the last one into `into` (`fused`: the next phase's), and returns the first. */
  abstract open(into: PhaseOut<T>, fused: boolean): { start(): void };

  /** These phases, then `phase`, fused: the Observable of `phase`'s subscriber over theirs. */
  then<R>(phase: PhaseOf<T, R>): TurnPhase<R> {
    return new Then(this, phase);
  }
}

// one function for every TurnPhase (rxjs calls it with the Observable as `this`): no closure a turn
function subscribePhases<T>(this: Observable<T>, subscriber: Subscriber<T>): void {
  (this as TurnPhase<T>).open(subscriber, false).start();
}

class Then<T, R> extends TurnPhase<R> {
  constructor(
    private readonly before: TurnPhase<T>,
    private readonly phase: PhaseOf<T, R>,
  ) {
    super();
  }

  open(into: PhaseOut<R>, fused: boolean): { start(): void } {
    return this.before.open(this.phase(into, fused), true);
  }
}

/**
 * The turn's phases from any Observable of its parts — turn 0's `resumeTurn`, a spec's marble — as from
 * `streamReply`: `runTools` and `draftTurn` fuse with it the same way (R33: one path). Its subscriber is held
 * by the next phase before it subscribes, so that unsubscribing downstream during the parts' synchronous start
 * closes them at once (C3).
 */
export function phasesOf<T>(parts: Observable<T>): TurnPhase<T> {
  return parts instanceof TurnPhase ? parts : new PartsPhase(parts);
}

class PartsPhase<T> extends TurnPhase<T> {
  constructor(private readonly parts: Observable<T>) {
    super();
  }

  open(into: PhaseOut<T>, fused: boolean): { start(): void } {
    const input = new HeldSubscriber<T>(into);
    joinPhase(into, fused, input);
    return { start: () => this.parts.subscribe(input) };
  }
}
