/** HeldSubscriber: a subscriber whose holder can close the source while its subscribe() is still running (C3). */
import { Observable } from 'rxjs';
import { HeldSubscriber } from '../../src/util/held-subscriber.js';

describe('HeldSubscriber (C3)', () => {
  it('C3: closed while a synchronous source is still emitting, the source sees it closed at once and its teardown runs then', () => {
    const sent: number[] = [];
    let tornDown = false;
    const source = new Observable<number>((subscriber) => {
      subscriber.add(() => (tornDown = true));
      for (let i = 1; i <= 5 && !subscriber.closed; i++) (sent.push(i), subscriber.next(i));
    });
    let tornDownWhenLeft: boolean | undefined;
    const held: HeldSubscriber<number> = new HeldSubscriber<number>({
      next: (value) => {
        if (value !== 2) return;
        held.unsubscribe();
        tornDownWhenLeft = tornDown;
      },
    });
    source.subscribe(held);
    expect({ sent, tornDownWhenLeft }).toEqual({ sent: [1, 2], tornDownWhenLeft: true });
  });

  it('C3: on complete or error it closes itself before it tells its observer, and belongs to no one else', () => {
    const seen: string[] = [];
    const done: HeldSubscriber<never> = new HeldSubscriber<never>({ complete: () => seen.push(`complete, closed ${done.closed}`) });
    new Observable<never>((subscriber) => subscriber.complete()).subscribe(done);
    const failed: HeldSubscriber<never> = new HeldSubscriber<never>({ error: (error: unknown) => seen.push(`${String(error)}, closed ${failed.closed}`) });
    new Observable<never>((subscriber) => subscriber.error('boom')).subscribe(failed);
    expect(seen).toEqual(['complete, closed true', 'boom, closed true']);
  });
});
