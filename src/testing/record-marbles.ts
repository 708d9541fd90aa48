import { Observable } from 'rxjs';
import type { ConversationOptions } from '../conversation/conversation.js';
import type { ConversationEvent } from '../types.js';
import { isPlainObject } from '../util/values.js';
import { argumentError, checkObservable } from './arguments.js';
import { describeEvent } from './describe-event.js';
import { Letters, Mark, burstClock, drawLine, drawnFrames } from './marble-line.js';
import { Seen, Slower, replayTest } from './replay-test.js';

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
  /** T7: consecutive `text_delta`s of one frame are drawn as one letter (one `text_delta` of their joined text). */
  mergeText?: boolean;
  /**
   * T9: the options the run was started with, which its events do not show (`maxTurns`, `toolExecution`,
   * `maxConcurrency`, a conversation's `policy`): the test passes them on. The provider, the tools, the hooks,
   * the history and the abort are rebuilt from the events; what is left out is said in the test.
   */
  options?: Partial<ConversationOptions>;
}

/**
 * Records a run as a marble diagram (T3). Cold: on subscribe it subscribes `run$` once; when the run
 * completes (or errors) it emits one {@link MarbleRecording} and completes. Inside `TestScheduler.run`
 * a frame is a virtual frame; outside, `Math.floor(elapsed / frameMs)`, the subscription's own synchronous
 * go being frame 0. An event whose frame an earlier group took is drawn at the next free one. Runs of any length are drawn (T7: past the 62 ASCII letters
 * come the rest of the kit's fixed alphabet, about 21,700 letters of one code unit each); whatever goes
 * wrong while recording is an error of the recording's Observable, never an exception thrown from a callback.
 * The test it writes replays the run (T9): pass the run's `options` for what its events do not show. Where a
 * real-time frame held several synchronous goes (a tool's timer, the model's, a hook's), the test runs slower,
 * each go at frames of its own in the recorded order, and says so in a comment.
 *
 * ```text
 * run$:          1s-c-u--(RE2)s-t-e(FL|)
 * recordMarbles: ------------------------(r|)   r = { diagram: '1s-c-u--(RE2)s-t-e(FL|)', values, test }
 * ```
 *
 * ```ts
 * recordMarbles(runEventedToolLoop(options), { options }).subscribe(({ diagram, test }) => {
 *   console.log(diagram);
 *   writeFileSync('spec/recorded-run.spec.ts', test); // replays the run in virtual time
 * });
 * ```
 */
export function recordMarbles(run$: Observable<ConversationEvent>, options: RecordOptions = {}): Observable<MarbleRecording> {
  checkObservable('recordMarbles', 'run$', run$);
  if (!isPlainObject(options as unknown)) throw argumentError('recordMarbles', 'options must be an object', options);
  const { frameMs = 10, mergeText = false, options: given = {} } = options;
  if (!(typeof frameMs === 'number' && frameMs > 0 && Number.isFinite(frameMs))) {
    throw new RangeError(`recordMarbles: frameMs must be a number > 0 (got ${String(frameMs)})`);
  }
  if (typeof mergeText !== 'boolean') throw argumentError('recordMarbles', 'mergeText must be a boolean', mergeText);
  if (!isPlainObject(given as unknown)) throw argumentError('recordMarbles', 'options.options must be the options of the run (an object)', given);
  return new Observable<MarbleRecording>((subscriber) => {
    const { now, virtual } = burstClock(frameMs);
    const seen: Seen[] = [];
    let over = false;
    // T7: nothing thrown here may reach rxjs's unhandled-error path: it goes out as the recording's error
    const guarded =
      <T extends unknown[]>(body: (...args: T) => void) =>
      (...args: T) => {
        if (over) return;
        try {
          body(...args);
        } catch (error) {
          over = true;
          subscriber.error(error);
        }
      };
    const finish = () => {
      const result = recording(seen, given, !virtual);
      over = true;
      subscriber.next(result);
      subscriber.complete();
    };
    return run$.subscribe({
      next: guarded((event: ConversationEvent) => {
        const { frame, burst } = now();
        describeEvent(event); // a value that is not an event fails here, at its frame
        const last = seen[seen.length - 1];
        if (mergeText && event.type === 'text_delta' && last?.frame === frame && last.event?.type === 'text_delta') {
          last.event = { type: 'text_delta', text: last.event.text + event.text };
        } else seen.push({ frame, burst, kind: 'N', event });
      }),
      error: guarded((error: unknown) => {
        seen.push({ ...now(), kind: 'E', error });
        finish();
      }),
      complete: guarded(() => {
        seen.push({ ...now(), kind: 'C' });
        finish();
      }),
    });
  });
}

function recording(seen: Seen[], options: Partial<ConversationOptions>, realTime: boolean): MarbleRecording {
  const marks: Mark[] = seen.map(({ frame, kind, event }) => ({ frame, kind, ...(event !== undefined ? { value: describeEvent(event) } : {}) }));
  const letters = new Letters();
  const diagram = drawLine(marks, (value) => letters.letterOf(value));
  const values = letters.legend();
  // T9: where events are closer than marble syntax can draw them (inside a group's span), or where one frame
  // had more than one synchronous go (real timers of different sources: a tool's, the model's, a hook's), the
  // replay runs slower, each frame `stretch` frames and each go at frames of its own, so that it plays every
  // event in its own order: a replay orders one frame's events by when their lines were subscribed, not as the run did
  const goes = goesOf(seen);
  const oneGoAFrame = goes.every((go, i) => i === 0 || go.frame !== goes[i - 1]!.frame);
  const fits = oneGoAFrame && drawnFrames(marks).every((frame, i) => frame === marks[i]!.frame);
  const replay = (stretch: number, why: Slower, room = 0) => {
    const slowFrames = stretch === 1 ? seen.map((s) => s.frame) : spread(goes, stretch, room);
    const slow = seen.map((s, i) => ({ ...s, frame: slowFrames[i]! }));
    const slowMarks = marks.map((mark, i) => ({ ...mark, frame: slowFrames[i]! }));
    const slowDiagram = stretch === 1 ? diagram : drawLine(slowMarks, (value) => letters.letterOf(value));
    return replayTest(slow, drawnFrames(slowMarks), letters, slowDiagram, options, stretch, why, realTime);
  };
  let made = replay(fits ? 1 : widestFrame(goes), oneGoAFrame ? 'groups' : 'goes');
  // a line of the replay itself (a turn, a tool, the prompts with their presses) may need room the run's line did not
  // (room: frames between one go and the next, where such a line draws its groups)
  for (let room = 2; made.crowded && room <= 16; room *= 2) made = replay(widestFrame(goes, room), oneGoAFrame ? 'lines' : 'goes', room);
  return { diagram, values, test: made.test };
}

/** A synchronous go of the run: its frame and how many marks it drew. */
interface Go {
  frame: number;
  marks: number;
}

/**
 * The run's synchronous goes, in order. A go that starts a conversation's next loop right after an aborted
 * `loop_end` (C2's `switch`: the prompt that aborted it starts it, on a 0 ms timer) is one with the go before
 * it: a replay plays both in one frame too, the prompt first.
 */
function goesOf(seen: readonly Seen[]): Go[] {
  const goes: Go[] = [];
  seen.forEach(({ frame, burst, event }, i) => {
    const last = goes[goes.length - 1];
    const before = seen[i - 1];
    const same = before !== undefined && before.frame === frame && (before.burst === burst || (event?.type === 'user_message' && before.event?.type === 'loop_end' && before.event.reason === 'aborted'));
    if (last !== undefined && same) last.marks++;
    else goes.push({ frame, marks: 1 });
  });
  return goes;
}

/** The frames a group of `n` marks takes: as many as its characters, with its parentheses. */
const width = (n: number) => (n === 1 ? 1 : n + 2);

/** The most frames one recorded frame's goes take, each go a group of its own and `room` frames after it. */
function widestFrame(goes: readonly Go[], room = 0): number {
  const perFrame = new Map<number, number>();
  for (const { frame, marks } of goes) perFrame.set(frame, (perFrame.get(frame) ?? 0) + width(marks) + room);
  return Math.max(1, ...perFrame.values());
}

/** Each mark's frame in a replay `stretch` times slower: a recorded frame's goes one after the other (`room` frames apart), inside its `stretch` frames. */
function spread(goes: readonly Go[], stretch: number, room: number): number[] {
  const frames: number[] = [];
  let next = 0;
  for (const { frame, marks } of goes) {
    const at = Math.max(frame * stretch, next);
    next = at + width(marks) + room;
    for (let k = 0; k < marks; k++) frames.push(at);
  }
  return frames;
}
