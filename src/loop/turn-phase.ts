import { Observable, Subscriber, Subscription } from 'rxjs';

/**
 * The subscriber a phase of the turn puts on the phase before it (R30: `streamReply → runTools → draftTurn`),
 * with the state of one turn's phase. On its own, as an operator over any Observable (the phases' marble
 * specs), it joins its destination as every rxjs subscriber does. **Fused** — the phase piped straight onto
 * the one before it, as the loop's turn is (see {@link TurnPhase}) — it does not: the phase after it holds it
 * and unsubscribes it itself, so that a turn's three phases are one subscription, with no finalizer list to
 * join and leave and no Observable to subscribe between them (bench W1: about a sixth of a turn).
 */
export abstract class PhaseSubscriber<In, Out> extends Subscriber<In> {
  /** Fused: the phase before this one, unsubscribed with this one (rather than as one of its finalizers). */
  private before: Subscription | undefined;

  constructor(
    protected readonly out: Subscriber<Out>,
    fused: boolean,
  ) {
    super(fused ? undefined : out);
    if (fused) {
      this.destination = out;
      (out as unknown as PhaseSubscriber<Out, unknown>).before = this;
    }
  }

  override unsubscribe(): void {
    super.unsubscribe();
    this.before?.unsubscribe();
  }
}

/** Makes a phase's subscriber into `into` (`fused`: `into` is the next phase's, which will hold it). */
export type PhaseOf<In, Out> = (into: Subscriber<Out>, fused: boolean) => PhaseSubscriber<In, Out>;

/**
 * The Observable of the turn's phases so far, which the next phase fuses with (as Reactor and RxJava fuse
 * operators): `streamReply` returns one, and `runTools` and `draftTurn`, piped onto one, return it with their
 * own phase after it instead of an Observable of their own. Subscribed, it makes the phases' subscribers,
 * the last one's first, each fused into the next, then starts the first (the reply). Cold, as any Observable.
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
  abstract open(into: Subscriber<T>, fused: boolean): { start(): void };

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

  open(into: Subscriber<R>, fused: boolean): { start(): void } {
    return this.before.open(this.phase(into, fused), true);
  }
}
