import { NEVER, Observable, defer, filter, interval, map, scan, take } from 'rxjs';

/** What a reader counts as data arrives: one bump per chunk, all the per-chunk work an idle timeout needs. */
export interface ChunkCount {
  chunks: number;
}

/** How often per timeout the count is looked at. */
const LOOKS = 4;
/** The longest delay a timer takes; a longer one would fire at once. */
const MAX_DELAY = 2 ** 31 - 1;

/**
 * P12: emits once and completes when `count.chunks` has not changed for `ms` — no data for that long.
 * It does not time each chunk: it looks at the count every quarter of `ms` (rounded up to whole ms) on
 * the async scheduler, so the reader's only cost is `count.chunks++`. A silence is noticed after `ms`
 * at the earliest, and less than two looks later at the latest — one when 4 divides `ms`: for the
 * default 300 s, between 300 and 375 s. With `ms` of `Infinity` it never emits.
 *
 * ```text
 * chunks:       -c-c--------------------          c: count.chunks++ (ms = 8: it looks every 2 frames)
 * idleTimeout:  ------------(x|)                  x at 12: the look at 4 saw the last chunk; 4 quiet looks later
 *
 * chunks:       ------------------------          none at all
 * idleTimeout:  --------(x|)                      x at 8
 * ```
 */
export function idleTimeout(count: ChunkCount, ms: number): Observable<void> {
  if (!(ms < Infinity)) return NEVER;
  const step = Math.min(Math.max(1, Math.ceil(ms / LOOKS)), MAX_DELAY);
  const looks = Math.ceil(ms / step);
  return defer(() =>
    interval(step).pipe(
      scan((quiet) => (count.chunks === quiet.seen ? { seen: quiet.seen, looks: quiet.looks + 1 } : { seen: count.chunks, looks: 0 }), {
        seen: count.chunks,
        looks: 0,
      }),
      filter((quiet) => quiet.looks >= looks),
      take(1),
      map(() => undefined),
    ),
  );
}
