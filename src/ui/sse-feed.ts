import { Observable } from 'rxjs';
import { HeadQueue } from '../util/head-queue.js';
import { HeldSubscriber } from '../util/held-subscriber.js';
import { setLongTimeout } from '../util/long-timeout.js';
import { errorText } from '../util/values.js';
import { ReplayableRun } from './replayable.js';
import { SseFailure, SseSettings } from './sse-options.js';
import { DONE, HEARTBEAT, sseFrame } from './sse-frame.js';

/** Where a feed writes: a node:http response or a ReadableStream's controller. */
export interface SseSink {
  /** Writes a piece of the stream; `false`: the client is not reading, hold what follows until `resume()`. */
  write(text: string): boolean;
  /** The stream is over: end it after what was written (`stalled`: the client is not reading it). */
  end(stalled: boolean): void;
}

/**
 * The one SSE writer behind `writeSse` and `sseResponse` (U3, U4): events to frames with their ids, heartbeats
 * while nothing is written, and the client's backpressure — while the sink is full, events wait in a queue of at
 * most `bufferSize`; one more ends the stream with `event: error` (`stalled`) and unsubscribes the events.
 * The sink's owner calls `resume()` when the client reads again and `close()` when it has gone.
 */
export class SseFeed<T> {
  private readonly queue = new HeadQueue<string>();
  private readonly subscriber: HeldSubscriber<T>;
  private paused = false;
  private finished = false;
  private wrote = false;
  private index = 0;
  private first = 0;
  private idOf: ((event: T, index: number) => string) | undefined;
  private cancelHeartbeat: (() => void) | undefined;

  constructor(
    private readonly events$: Observable<T>,
    private readonly settings: SseSettings<T>,
    private readonly sink: SseSink,
  ) {
    this.idOf = settings.id;
    this.subscriber = new HeldSubscriber<T>({
      next: (event) => this.next(event),
      error: (error: unknown) => this.fail({ reason: 'failed', message: errorText(error) }),
      complete: () => this.finish(),
    });
  }

  /** Starts the stream: `retry:` if asked, then the events (a replayable run's from `lastEventId` on). */
  start(): void {
    if (this.settings.retryMs !== undefined) this.put(`retry: ${this.settings.retryMs}\n\n`);
    this.scheduleHeartbeat();
    let events$ = this.events$;
    if (events$ instanceof ReplayableRun) {
      const resumed = (events$ as ReplayableRun<T>).resume(this.settings.lastEventId);
      if ('missed' in resumed) return this.fail({ reason: 'missed', message: resumed.missed });
      this.first = resumed.first;
      this.idOf = undefined; // the run's own numbers
      events$ = resumed.events;
    }
    events$.subscribe(this.subscriber);
  }

  /** How many events wait for the client. */
  get queued(): number {
    return this.queue.length;
  }

  /** The client reads again: write what waited, until it is full again. */
  resume(): void {
    this.paused = false;
    while (!this.paused && this.queue.length > 0) this.put(this.queue.shift()!);
  }

  /** The client has gone: unsubscribe the events and write nothing more. */
  close(): void {
    this.finished = true;
    this.cancelHeartbeat?.();
    this.subscriber.unsubscribe();
    this.queue.clear();
  }

  private next(event: T): void {
    const index = this.index++;
    let id: string;
    let data: string;
    try {
      id = this.idOf === undefined ? String(this.first + index) : this.idOf(event, index);
      data = this.settings.data(event);
      if (/[\r\n]/.test(id)) throw new Error(`SseOptions.id gave an id with a line end: ${JSON.stringify(id)}`);
    } catch (error) {
      return this.fail({ reason: 'failed', message: errorText(error) });
    }
    const frame = sseFrame(id, data);
    if (!this.paused) return this.put(frame);
    if (this.queue.length >= this.settings.bufferSize) {
      return this.fail({ reason: 'stalled', message: `the client read nothing while ${this.settings.bufferSize} events waited (bufferSize)` });
    }
    this.queue.push(frame);
  }

  private put(text: string): void {
    this.wrote = true;
    if (!this.sink.write(text)) this.paused = true;
  }

  /** Ends the stream early with its error event, after what waited (the queue is bounded: it may all go now). */
  private fail(failure: SseFailure): void {
    if (this.finished) return;
    this.subscriber.unsubscribe();
    this.flush();
    this.sink.write(sseFrame(undefined, this.settings.errorData(failure), 'error'));
    this.finish(failure.reason === 'stalled');
  }

  private finish(stalled = false): void {
    if (this.finished) return;
    this.flush();
    if (this.settings.uiMessageStream) this.sink.write(DONE);
    this.finished = true;
    this.cancelHeartbeat?.();
    this.sink.end(stalled);
  }

  private flush(): void {
    while (this.queue.length > 0) this.sink.write(this.queue.shift()!);
  }

  private scheduleHeartbeat(): void {
    if (this.settings.heartbeatMs === Infinity) return;
    this.cancelHeartbeat = setLongTimeout(() => {
      if (this.finished) return;
      // a client that is not reading needs no more bytes; one that got an event lately needs none either
      if (!this.wrote && !this.paused) this.put(HEARTBEAT);
      this.wrote = false;
      this.scheduleHeartbeat();
    }, this.settings.heartbeatMs);
  }
}
