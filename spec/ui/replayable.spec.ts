import { request as httpRequest } from 'node:http';
import { NEVER, Observable, concat, defer, finalize, interval, map, of, take, throwError } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { replayable, writeSse } from 'rx-tool-loop/ui';
import { until } from '../support/until';
import { serve } from './support/http';

/** The events of a resume that must succeed. */
function resumed<T>(resume: { first: number; events: Observable<T> } | { missed: string }): Observable<T> {
  if ('missed' in resume) throw new Error(resume.missed);
  return resume.events;
}

const scheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

describe('replayable', () => {
  it('U4: a client that leaves does not stop the run; a resume after id 1 gets what it missed at once, then the live events', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const events$ = cold('--a--b--c--d-------e--|');
      const run = replayable(events$, { bufferSize: 10 });
      expectObservable(run, '^------!').toBe('--a--b-');
      // it comes back at frame 12, having seen b (id 1)
      expectObservable(defer(() => resumed(run.resume('1'))), '------------^').toBe('------------(cd)---e--|');
      expectSubscriptions(events$.subscriptions).toBe('^---------------------!');
    });
  });

  it('U4: one subscription of events$ for every client; it starts at the first client, not before', () => {
    let subscriptions = 0;
    const run = replayable(defer(() => (subscriptions++, of(1, 2, 3))), { bufferSize: 5 });
    expect(subscriptions).toBe(0);
    const seen: number[][] = [[], []];
    run.subscribe((n) => seen[0]!.push(n));
    run.subscribe((n) => seen[1]!.push(n));
    expect(subscriptions).toBe(1);
    expect(seen).toEqual([
      [1, 2, 3],
      [1, 2, 3],
    ]);
    expect([run.done, run.count]).toEqual([true, 3]);
  });

  it('U4: a resume older than what is kept, unknown, or past the end is refused with a reason; within it, exactly the rest', () => {
    const run = replayable(of(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), { bufferSize: 3 });
    run.subscribe();
    expect(run.resume('2')).toEqual({ missed: 'replayable keeps the last 3 events (7–9): the events after Last-Event-ID 2 are gone' });
    expect(run.resume(undefined)).toEqual({ missed: 'replayable keeps the last 3 events (7–9): the events after the start of the run are gone' });
    expect(run.resume('abc')).toEqual({ missed: 'Last-Event-ID "abc" is not an event of this run' });
    expect(run.resume('10')).toEqual({ missed: 'Last-Event-ID 10 is not an event of this run (it has sent 10)' });
    const rest: number[] = [];
    const resumed = run.resume('6');
    if ('missed' in resumed) throw new Error(resumed.missed);
    expect(resumed.first).toBe(7);
    resumed.events.subscribe((n) => rest.push(n));
    expect(rest).toEqual([7, 8, 9]);
    const none: number[] = [];
    const atEnd = run.resume('9');
    if ('missed' in atEnd) throw new Error(atEnd.missed);
    let completed = false;
    atEnd.events.subscribe({ next: (n) => none.push(n), complete: () => (completed = true) });
    expect([none, completed]).toEqual([[], true]);
  });

  it("U4: a run's error reaches every client after the events it kept, late ones included", () => {
    const run = replayable(concat(of('a'), throwError(() => new Error('down'))), { bufferSize: 5 });
    const first: unknown[] = [];
    run.subscribe({ next: (e) => first.push(e), error: (e: Error) => first.push(e.message) });
    const late: unknown[] = [];
    run.subscribe({ next: (e) => late.push(e), error: (e: Error) => late.push(e.message) });
    expect(first).toEqual(['a', 'down']);
    expect(late).toEqual(['a', 'down']);
  });

  it('U4: stop() unsubscribes events$ and completes every client; done says nothing runs', () => {
    let unsubscribed = false;
    const run = replayable(concat(of(1), NEVER).pipe(finalize(() => (unsubscribed = true))), { bufferSize: 5 });
    let completed = false;
    const subscription = run.subscribe({ complete: () => (completed = true) });
    subscription.unsubscribe();
    expect([unsubscribed, run.done]).toEqual([false, false]);
    const other = run.subscribe({ complete: () => (completed = true) });
    run.stop();
    expect([unsubscribed, completed, run.done, other.closed]).toEqual([true, true, true, true]);
  });

  it('U4: a run stopped before its first client never subscribes events$; the client finds it ended', () => {
    let subscriptions = 0;
    const run = replayable(defer(() => (subscriptions++, NEVER)), { bufferSize: 5 });
    run.stop();
    let completed = false;
    const client = run.subscribe({ complete: () => (completed = true) });
    expect([subscriptions, completed, client.closed, run.done]).toEqual([0, true, true, true]);
  });

  it('U4: bufferSize is an integer >= 1, named at call time', () => {
    expect(() => replayable(of(1), { bufferSize: 0 })).toThrow('replayable: bufferSize must be an integer >= 1, got 0, a number');
    expect(() => replayable(of(1), undefined as never)).toThrow('replayable: bufferSize must be an integer >= 1, got undefined');
    expect(() => replayable('x' as never, { bufferSize: 1 })).toThrow('replayable: events$ must be an Observable, got "x", a string');
  });

  it('U4: over a real socket: drop the connection mid-run, reconnect with Last-Event-ID, get exactly the missed events then the live ones', async () => {
    const run = replayable(interval(5).pipe(take(60), map((n) => ({ n }))), { bufferSize: 100 });
    const server = await serve((request, response) => writeSse(response, run, { heartbeatMs: Infinity, lastEventId: request.headers['last-event-id'] as string | undefined }));
    try {
      // the first connection reads until event 10, then its socket dies
      const first = await readFrames(server.url, undefined, (frames) => frames.length >= 11);
      const lastId = first.at(-1)!.id;
      // meanwhile the run goes on
      await until(() => run.count >= 30, 'the run to go on without its client');
      const second = await readFrames(server.url, lastId, () => false);
      const ids = [...first, ...second].map((frame) => Number(frame.id));
      expect(ids).toEqual([...Array(60).keys()]);
      expect([...first, ...second].map((frame) => JSON.parse(frame.data).n)).toEqual([...Array(60).keys()]);
    } finally {
      await server.close();
    }
  });

  it('U4: a Last-Event-ID older than the buffer gets `event: error` (missed), then the end', async () => {
    const run = replayable(of('a', 'b', 'c', 'd', 'e'), { bufferSize: 2 });
    run.subscribe();
    const server = await serve((request, response) => writeSse(response, run, { heartbeatMs: Infinity, lastEventId: request.headers['last-event-id'] as string | undefined }));
    try {
      const text = await (await fetch(server.url, { headers: { 'last-event-id': '1' } })).text();
      expect(text).toBe('event: error\ndata: {"type":"error","reason":"missed","message":"replayable keeps the last 2 events (3–4): the events after Last-Event-ID 1 are gone"}\n\n');
    } finally {
      await server.close();
    }
  });
});

/** The frames of a stream (id and data), read until `enough` says so — then the socket is destroyed — or the end. */
function readFrames(url: string, lastEventId: string | undefined, enough: (frames: { id: string; data: string }[]) => boolean): Promise<{ id: string; data: string }[]> {
  return new Promise((resolve, reject) => {
    const frames: { id: string; data: string }[] = [];
    let text = '';
    const request = httpRequest(url, { headers: lastEventId === undefined ? {} : { 'last-event-id': lastEventId } }, (response) => {
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
        let end: number;
        while ((end = text.indexOf('\n\n')) >= 0) {
          const frame = text.slice(0, end);
          text = text.slice(end + 2);
          const id = /^id: (.*)$/m.exec(frame)?.[1];
          const data = /^data: (.*)$/m.exec(frame)?.[1];
          if (id !== undefined && data !== undefined) frames.push({ id, data });
          if (enough(frames)) {
            request.destroy();
            resolve(frames);
            return;
          }
        }
      });
      response.on('end', () => resolve(frames));
    });
    request.on('error', (error) => {
      if (!request.destroyed) reject(error);
    });
    request.end();
  });
}
