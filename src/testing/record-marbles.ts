import { Observable } from 'rxjs';
import type { ConversationEvent } from '../types.js';
import { describeEvent } from './describe-event.js';
import { Letters, Mark, drawLine, drawnFrames, frameClock } from './marble-line.js';
import { Seen, replayTest } from './replay-test.js';

/** What {@link recordMarbles} makes of a run. */
export interface MarbleRecording {
  /** The run's output line in marble syntax, one character a frame. */
  diagram: string;
  /** Each letter of `diagram` and the {@link describeEvent} line it stands for. */
  values: Record<string, string>;
  /** A jest test file that replays the run with `marbleProvider` and `marbleTools` and expects `diagram`. */
  test: string;
}

/** Options of {@link recordMarbles}. */
export interface RecordOptions {
  /** Outside `TestScheduler.run`: how many milliseconds make one frame (default 10). */
  frameMs?: number;
}

/**
 * Records a run as a marble diagram (T3). Cold: on subscribe it subscribes `run$` once; when the run
 * completes (or errors) it emits one {@link MarbleRecording} and completes. Inside `TestScheduler.run`
 * a frame is a virtual frame; outside, `Math.floor(elapsed / frameMs)`. An event whose frame an earlier
 * group took is drawn at the next free one.
 *
 * ```text
 * run$:          1s-c-u--(RE2)s-t-e(FL|)
 * recordMarbles: ------------------------(r|)   r = { diagram: '1s-c-u--(RE2)s-t-e(FL|)', values, test }
 * ```
 *
 * ```ts
 * recordMarbles(runEventedToolLoop(options)).subscribe(({ diagram, test }) => {
 *   console.log(diagram);
 *   writeFileSync('spec/recorded-run.spec.ts', test); // replays the run in virtual time
 * });
 * ```
 */
export function recordMarbles(run$: Observable<ConversationEvent>, options: RecordOptions = {}): Observable<MarbleRecording> {
  const frameMs = options.frameMs ?? 10;
  if (!(typeof frameMs === 'number' && frameMs > 0 && Number.isFinite(frameMs))) {
    throw new RangeError(`recordMarbles: frameMs must be a number > 0 (got ${String(frameMs)})`);
  }
  return new Observable<MarbleRecording>((subscriber) => {
    const now = frameClock(frameMs);
    const seen: Seen[] = [];
    const finish = () => {
      subscriber.next(recording(seen));
      subscriber.complete();
    };
    return run$.subscribe({
      next: (event) => seen.push({ frame: now(), kind: 'N', event }),
      error: (error: unknown) => {
        seen.push({ frame: now(), kind: 'E', error });
        finish();
      },
      complete: () => {
        seen.push({ frame: now(), kind: 'C' });
        finish();
      },
    });
  });
}

function recording(seen: Seen[]): MarbleRecording {
  const marks: Mark[] = seen.map(({ frame, kind, event }) => ({ frame, kind, ...(event !== undefined ? { value: describeEvent(event) } : {}) }));
  const letters = new Letters();
  const diagram = drawLine(marks, (value) => letters.letterOf(value));
  const frames = drawnFrames(marks);
  const values = letters.legend();
  return { diagram, values, test: replayTest(seen, frames, letters, diagram) };
}
