import { Observable, Subscriber, Subscription, isObservable } from 'rxjs';
import { HeldSubscriber } from '../util/held-subscriber.js';
import { shown } from '../util/values.js';

/** A follower of the run: where it is, and whether it is still catching up from the kept events. */
interface Follower<T> {
  subscriber: Subscriber<T>;
  next: number;
  replaying: boolean;
}

/** Where a resumed stream starts: its first event's number and the events from there, or why it cannot. */
export type Resumed<T> = { first: number; events: Observable<T> } | { missed: string };

/** The run's state: the kept events in a ring, the followers, how it ended. */
class Replay<T> {
  private readonly ring: T[] = [];
  private total = 0; // the number of the next event
  private readonly followers = new Set<Follower<T>>();
  private source: HeldSubscriber<T> | undefined;
  private ended: { error: unknown } | true | undefined;

  constructor(
    private readonly events$: Observable<T>,
    private readonly bufferSize: number,
  ) {}

  get done(): boolean {
    return this.ended !== undefined;
  }

  get count(): number {
    return this.total;
  }

  /** The events from number `from` on: the kept ones, then the live ones. */
  follow(subscriber: Subscriber<T>, from: number): Subscription | undefined {
    // one that has nothing to catch up on (the first, as the run starts) takes the events as they come
    const follower: Follower<T> = { subscriber, next: from, replaying: from < this.total };
    this.followers.add(follower);
    subscriber.add(() => this.followers.delete(follower));
    this.start();
    // the kept events; one that arrives meanwhile (a reentrant source) is kept too, and read here in turn
    while (follower.next < this.total && !subscriber.closed) {
      if (follower.next < this.total - this.bufferSize) {
        subscriber.error(new Error(`replayable: the run overwrote event ${follower.next} before it was replayed (bufferSize ${this.bufferSize})`));
        return;
      }
      subscriber.next(this.ring[follower.next % this.bufferSize]);
      follower.next++;
    }
    follower.replaying = false;
    if (this.ended === true) subscriber.complete();
    else if (this.ended !== undefined) subscriber.error(this.ended.error);
    return;
  }

  /** Where a stream that last saw `lastEventId` resumes; without one, from the run's first event. */
  resume(lastEventId: string | undefined): Resumed<T> {
    let from = 0;
    if (lastEventId !== undefined) {
      if (!/^\d{1,15}$/.test(lastEventId)) return { missed: `Last-Event-ID ${JSON.stringify(lastEventId)} is not an event of this run` };
      from = Number(lastEventId) + 1;
    }
    if (from > this.total) return { missed: `Last-Event-ID ${lastEventId} is not an event of this run (it has sent ${this.total})` };
    const oldest = Math.max(0, this.total - this.bufferSize);
    if (from < oldest) {
      const after = lastEventId === undefined ? 'the start of the run' : `Last-Event-ID ${lastEventId}`;
      return { missed: `replayable keeps the last ${this.bufferSize} events (${oldest}–${this.total - 1}): the events after ${after} are gone` };
    }
    return { first: from, events: new Observable<T>((subscriber) => this.follow(subscriber, from)) };
  }

  stop(): void {
    this.source?.unsubscribe();
    this.end(true);
  }

  private start(): void {
    // a run stopped before its first client is over: subscribing now would leave a loop nothing can stop
    if (this.source !== undefined || this.ended !== undefined) return;
    this.source = new HeldSubscriber<T>({
      next: (event) => this.next(event),
      error: (error: unknown) => this.end({ error }),
      complete: () => this.end(true),
    });
    this.events$.subscribe(this.source);
  }

  private next(event: T): void {
    const number = this.total++;
    this.ring[number % this.bufferSize] = event;
    for (const follower of this.followers) {
      if (!follower.replaying && follower.next === number) {
        follower.next++;
        follower.subscriber.next(event);
      }
    }
  }

  private end(how: { error: unknown } | true): void {
    if (this.ended !== undefined) return;
    this.ended = how;
    for (const follower of [...this.followers]) {
      if (follower.replaying) continue; // its replay ends it
      if (how === true) follower.subscriber.complete();
      else follower.subscriber.error(how.error);
    }
  }
}

/**
 * A run that clients can leave and rejoin (U4): what {@link replayable} returns. Subscribing it gives the run
 * from its first event (while that is still kept), then the live events; `writeSse` and `sseResponse` take it
 * with the request's `Last-Event-ID` and send what the client missed, then the live events, each with its
 * number in the run as its `id:`.
 */
export class ReplayableRun<T> extends Observable<T> {
  private readonly replay: Replay<T>;

  constructor(events$: Observable<T>, bufferSize: number) {
    const replay = new Replay(events$, bufferSize);
    super((subscriber) => {
      const resumed = replay.resume(undefined);
      if ('missed' in resumed) subscriber.error(new Error(resumed.missed));
      else return resumed.events.subscribe(subscriber);
      return undefined;
    });
    this.replay = replay;
  }

  /** Whether the run has ended (completed, failed or stopped): a resume finds nothing live (the AI SDK wants a 204). */
  get done(): boolean {
    return this.replay.done;
  }

  /** How many events the run has sent so far. */
  get count(): number {
    return this.replay.count;
  }

  /** Where a client that last saw `lastEventId` resumes (`undefined`: from the first event), or why it cannot. */
  resume(lastEventId: string | undefined): Resumed<T> {
    return this.replay.resume(lastEventId);
  }

  /** Unsubscribes the run (its tools and provider call are cancelled) and completes every client's stream. */
  stop(): void {
    this.replay.stop();
  }
}

/**
 * Makes `events$` a run that outlives its clients (U4): it starts at the first subscription and from then on is
 * hot and shared — a client that leaves does not stop it; it ends when `events$` ends or at `stop()`, and nothing
 * else unsubscribes it. It keeps the last `bufferSize` events, so a client that reconnects with `Last-Event-ID`
 * (through `writeSse` / `sseResponse`) gets exactly the events it missed, then the live ones; their ids are the
 * events' numbers in the run, the same on every connection. Keep the run (e.g. in a map by chat id) as long as
 * clients may resume it, and drop it after.
 *
 * ```
 * events$:           --a--b--c--d--e--|
 * first client:      --a--b--!                 (left after b, id 1)
 * resume after 1:             ------c--d--e--|  (c d at once, then the live e)
 * ```
 *
 * ```ts
 * const runs = new Map<string, ReplayableRun<LoopEvent>>();
 * // POST /api/chat: start the run, stream it
 * const run = replayable(runEventedToolLoop({ provider, registry, messages }), { bufferSize: 10_000 });
 * runs.set(chatId, run);
 * writeSse(response, run);
 * // GET /api/chat/:id/stream: resume it
 * const run = runs.get(chatId);
 * if (run === undefined || run.done) response.writeHead(204).end();
 * else writeSse(response, run, { lastEventId: request.headers['last-event-id'] });
 * ```
 */
export function replayable<T>(events$: Observable<T>, options: { bufferSize: number }): ReplayableRun<T> {
  if (!isObservable(events$)) throw new TypeError(`replayable: events$ must be an Observable, got ${shown(events$)}`);
  const bufferSize = (options as { bufferSize?: unknown } | undefined)?.bufferSize;
  if (typeof bufferSize !== 'number' || !Number.isInteger(bufferSize) || bufferSize < 1) {
    throw new TypeError(`replayable: bufferSize must be an integer >= 1, got ${shown(bufferSize)}`);
  }
  return new ReplayableRun(events$, bufferSize);
}
