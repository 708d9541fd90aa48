import { asyncScheduler } from 'rxjs';

/** One thing that happened on a line: a value (its description), an error or the completion, at a frame. */
export interface Mark {
  frame: number;
  kind: 'N' | 'E' | 'C';
  /** The description, for `N`. */
  value?: string;
}

/**
 * Draws marks as one marble line: a character a frame; marks of one frame in a group, which takes as
 * many frames as it has characters; a mark whose frame an earlier group took is drawn at the next free
 * one. `letterOf` gives each value its letter.
 *
 * ```text
 * marks at 0 (a), 0 (b), 2 (c), 3 (complete)  →  (ab)c|      c and | were pushed to 4 and 5
 * ```
 */
export function drawLine(marks: readonly Mark[], letterOf: (value: string) => string): string {
  let line = '';
  for (const [frame, group] of byFrame(marks)) {
    if (frame > line.length) line += '-'.repeat(frame - line.length);
    const chars = group.map((mark) => (mark.kind === 'N' ? letterOf(mark.value!) : mark.kind === 'E' ? '#' : '|')).join('');
    line += chars.length === 1 ? chars : `(${chars})`;
  }
  return line;
}

/** The frame each mark is drawn at, as {@link drawLine} draws them. */
export function drawnFrames(marks: readonly Mark[]): number[] {
  return byFrame(marks).flatMap(([at, group]) => group.map(() => at));
}

/** Consecutive marks grouped by frame, in time order, each group at the frame it is drawn at. */
function byFrame(marks: readonly Mark[]): [number, Mark[]][] {
  const groups: [number, Mark[]][] = [];
  for (const mark of marks) {
    const last = groups[groups.length - 1];
    if (last !== undefined && last[0] === mark.frame) last[1].push(mark);
    else groups.push([mark.frame, [mark]]);
  }
  // a group that starts where an earlier one has not ended yet moves right
  let next = 0;
  return groups.map(([frame, group]) => {
    const at = Math.max(frame, next);
    next = at + (group.length === 1 ? 1 : group.length + 2);
    return [at, group];
  });
}

/** A moment as {@link burstClock} reads it: the frame, and which synchronous go (burst) it belongs to. */
export interface Moment {
  frame: number;
  /** Counts the run's synchronous goes from 0 (the subscription's own); inside `TestScheduler.run`, the frame. */
  burst: number;
}

/**
 * A clock in frames from now: virtual frames inside `TestScheduler.run` (where rxjs's `asyncScheduler`
 * reads the test scheduler's clock), else `Math.floor(elapsed / frameMs)`, read once per synchronous
 * burst: what happens in one go (a `tool_call` and its `tool_start`, a `turn_end` and the next
 * `turn_start`) shares a frame, as it does when a replay plays it, even when a frame ends meanwhile.
 * The go the clock is made in is frame 0 however long it takes (T9 (1)): a replay subscribes at frame 0
 * and plays what the subscription does synchronously there.
 */
export function frameClock(frameMs: number): () => number {
  const { now } = burstClock(frameMs);
  return () => now().frame;
}

/**
 * {@link frameClock}, telling the synchronous goes apart too: in real time two goes of one frame came from
 * different timers (a tool's and the model's), and a replay must not play them in its own order (T9).
 */
export function burstClock(frameMs: number): { now: () => Moment; virtual: boolean } {
  // inside `run`, asyncScheduler.now() is the virtual frame (a small number); outside, it is Date.now()
  const virtual = Math.abs(asyncScheduler.now() - Date.now()) > 1e9;
  const origin = asyncScheduler.now();
  if (virtual) {
    const now = () => {
      const frame = asyncScheduler.now() - origin;
      return { frame, burst: frame };
    };
    return { now, virtual };
  }
  let bursts = 0;
  let current: Moment | undefined = { frame: 0, burst: 0 };
  queueMicrotask(() => (current = undefined));
  const now = () => {
    if (current === undefined) {
      current = { frame: Math.floor((asyncScheduler.now() - origin) / frameMs), burst: ++bursts };
      queueMicrotask(() => (current = undefined));
    }
    return current;
  };
  return { now, virtual };
}

/**
 * Letters for descriptions: a letter a distinct description. A description gets the first free
 * character of its preferred ones — the turn's digit for `turn_start N`, the provider's events in lower
 * case, the loop's own in upper case, a call's `tool_start` as the call's letter in Greek, as the
 * project's diagrams draw them — or else the first free one of {@link MARBLE_ALPHABET} (T7).
 */
export class Letters {
  private readonly byValue = new Map<string, string>();
  private readonly taken = new Set<string>();
  private cursor = 0;

  /** `given`: a legend whose letters are used first; `reserved`: characters never handed out (a diagram's own). */
  constructor(given: Record<string, string> = {}, reserved: Iterable<string> = []) {
    for (const [letter, value] of Object.entries(given)) {
      this.taken.add(letter);
      if (!this.byValue.has(value)) this.byValue.set(value, letter);
    }
    for (const c of reserved) this.taken.add(c);
  }

  /** The letter of `value`; `undefined` when it has none yet. */
  find(value: string): string | undefined {
    return this.byValue.get(value);
  }

  /** The letter of `value`, a fresh one the first time; throws only past the whole alphabet. */
  letterOf(value: string): string {
    const known = this.byValue.get(value);
    if (known !== undefined) return known;
    const letter = this.free(value);
    if (letter === undefined) {
      throw new RangeError(`recordMarbles: more distinct events than letters (${MARBLE_ALPHABET.length}); record with { mergeText: true }`);
    }
    this.taken.add(letter);
    this.byValue.set(value, letter);
    return letter;
  }

  /** Letter → description, in the order the letters were given. */
  legend(): Record<string, string> {
    return Object.fromEntries([...this.byValue].map(([value, letter]) => [letter, value]));
  }

  private free(value: string): string | undefined {
    // R23: a call's start is its letter in Greek, as in the project's diagrams (`α` for `a`)
    const call = value.startsWith('tool_start ') ? this.callLetter(value.slice('tool_start '.length)) : undefined;
    const mirror = call === undefined ? -1 : LOWER.indexOf(call);
    const mirrored = mirror >= 0 && mirror < GREEK.length ? GREEK[mirror] : undefined;
    if (mirrored !== undefined && !this.taken.has(mirrored)) return mirrored;
    for (const c of preferred(value)) if (!this.taken.has(c)) return c;
    // letters are only ever taken, so the first free one is never before the last one found
    while (this.cursor < MARBLE_ALPHABET.length && this.taken.has(MARBLE_ALPHABET[this.cursor]!)) this.cursor++;
    return MARBLE_ALPHABET[this.cursor];
  }

  /**
   * The letter of the call a `tool_start` line (`NAME INPUT`) starts: the `tool_call` with the same line, else
   * (a hook edited the input, R32 shows it) the latest `tool_call` of the same tool.
   */
  private callLetter(started: string): string | undefined {
    const same = this.byValue.get(`tool_call ${started}`);
    if (same !== undefined) return same;
    const name = started.split(' ', 1)[0]!;
    let latest: string | undefined;
    for (const [value, letter] of this.byValue) if (value === `tool_call ${name}` || value.startsWith(`tool_call ${name} `)) latest = letter;
    return latest;
  }
}

const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
/** The Greek letters, each under the Latin one it mirrors (24 of them: `y` and `z` have none): `tool_start`'s. */
const GREEK = 'αβγδεζηθικλμνξοπρστυφχψω';

/** The characters from `from` to `to` (code points, both included), but `except`. */
function range(from: number, to: number, except: readonly number[] = []): string[] {
  const chars: string[] = [];
  for (let code = from; code <= to; code++) if (!except.includes(code)) chars.push(String.fromCharCode(code));
  return chars;
}

/**
 * Every letter a recording may use, in the order they are handed out (T7): each one UTF-16 code unit (so one
 * character is one frame), none of the marble syntax's own (`-`, `|`, `#`, `(`, `)`, `^`, `!`, space) nor a
 * quote. The 62 ASCII letters and digits; the Greek capitals and `ς`; the Latin-1 letters (`À`…`ÿ`, without
 * `×` and `÷`); Latin Extended-A (`Ā`…`ſ`); Cyrillic (`Ѐ`…`џ`); Armenian (`Ա`…`Ֆ`, `ա`…`ֆ`); Latin
 * Extended-B (`ƀ`…`ɏ`, without the click letters `ǀ ǁ ǂ ǃ`, which read as `|` and `!`); then the CJK
 * ideographs (`一`…`鿿`). The 24 lower-case Greek letters `α`…`ω` come last: they are `tool_start`'s, the
 * Greek of the call's letter (`α` for `a`), so that other events never take them first.
 */
export const MARBLE_ALPHABET: readonly string[] = Object.freeze([
  ...LOWER,
  ...UPPER,
  ...'0123456789',
  ...range(0x391, 0x3a9, [0x3a2]),
  'ς',
  ...range(0xc0, 0xff, [0xd7, 0xf7]),
  ...range(0x100, 0x17f),
  ...range(0x400, 0x45f),
  ...range(0x531, 0x556),
  ...range(0x561, 0x586),
  ...range(0x180, 0x24f, [0x1c0, 0x1c1, 0x1c2, 0x1c3]),
  ...range(0x4e00, 0x9fff),
  ...GREEK,
]);

function preferred(value: string): string[] {
  const [type, rest = ''] = splitOnce(value, ' ');
  switch (type) {
    case 'turn_start':
      // J5: an answer turn takes its turn's digit too (`turn_start 3 answer`): a run has one turn 3
      return /^[0-9]( answer)?$/.test(rest) ? [rest.charAt(0)] : [];
    case 'message_start':
      return ['s'];
    case 'message_end':
      return [...'eu', ...LOWER];
    case 'text_delta':
    case 'reasoning_delta':
      return [...'thijk', ...LOWER];
    case 'tool_call':
    case 'tool_call_delta':
      return [...'cabd', ...LOWER];
    case 'tool_result':
      return [...'RABCD', ...UPPER];
    case 'tool_update':
      return [...'PQ', ...UPPER];
    case 'turn_end':
      return [...'EFGH', ...UPPER];
    case 'loop_end':
      return ['L', ...UPPER];
    case 'tool_start':
      return [...GREEK, ...UPPER];
    case 'tool_approval':
      // H8: W for "waits"
      return [...'WK', ...UPPER];
    case 'user_message':
      return [...'UVW', ...UPPER];
    case 'prompt_dropped':
      return [...'XYZ', ...UPPER];
    default:
      return [...UPPER];
  }
}

function splitOnce(value: string, separator: string): [string, string?] {
  const at = value.indexOf(separator);
  return at === -1 ? [value] : [value.slice(0, at), value.slice(at + separator.length)];
}
