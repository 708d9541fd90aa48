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

/**
 * A clock in frames from now: virtual frames inside `TestScheduler.run` (where rxjs's `asyncScheduler`
 * reads the test scheduler's clock), else `Math.floor(elapsed / frameMs)`, read once per synchronous
 * burst: what happens in one go (a `tool_call` and its `tool_start`, a `turn_end` and the next
 * `turn_start`) shares a frame, as it does when a replay plays it, even when a frame ends meanwhile.
 */
export function frameClock(frameMs: number): () => number {
  // inside `run`, asyncScheduler.now() is the virtual frame (a small number); outside, it is Date.now()
  const virtual = Math.abs(asyncScheduler.now() - Date.now()) > 1e9;
  const origin = asyncScheduler.now();
  if (virtual) return () => asyncScheduler.now() - origin;
  let burst: number | undefined;
  return () => {
    if (burst === undefined) {
      burst = Math.floor((asyncScheduler.now() - origin) / frameMs);
      queueMicrotask(() => (burst = undefined));
    }
    return burst;
  };
}

/**
 * Letters for descriptions: a letter a distinct description. A description gets the first free
 * character of its preferred ones — the turn's digit for `turn_start N`, the provider's events in lower
 * case, the loop's own in upper case, as the project's diagrams draw them — or else any free one.
 */
export class Letters {
  private readonly byValue = new Map<string, string>();
  private readonly taken = new Set<string>();

  constructor(given: Record<string, string> = {}) {
    for (const [letter, value] of Object.entries(given)) {
      this.taken.add(letter);
      if (!this.byValue.has(value)) this.byValue.set(value, letter);
    }
  }

  /** The letter of `value`; `undefined` when it has none yet. */
  find(value: string): string | undefined {
    return this.byValue.get(value);
  }

  letterOf(value: string): string {
    const known = this.byValue.get(value);
    if (known !== undefined) return known;
    // R23: a call's start is its letter in Greek, as in the project's diagrams (`α` for `a`)
    const call = value.startsWith('tool_start ') ? this.byValue.get(`tool_call ${value.slice('tool_start '.length)}`) : undefined;
    const mirrored = call === undefined ? [] : [...GREEK].filter((_, i) => LOWER[i] === call);
    const letter = [...mirrored, ...preferred(value), ...ALL].find((c) => !this.taken.has(c));
    if (letter === undefined) throw new Error('recordMarbles: more distinct events than letters (62)');
    this.taken.add(letter);
    this.byValue.set(value, letter);
    return letter;
  }

  /** Letter → description, in the order the letters were given. */
  legend(): Record<string, string> {
    return Object.fromEntries([...this.byValue].map(([value, letter]) => [letter, value]));
  }
}

const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const ALL = [...LOWER, ...UPPER, ...'0123456789'];
/** The Greek letters, each under the Latin one it mirrors (24 of them: `y` and `z` have none). */
const GREEK = 'αβγδεζηθικλμνξοπρστυφχψω';

function preferred(value: string): string[] {
  const [type, rest = ''] = splitOnce(value, ' ');
  switch (type) {
    case 'turn_start':
      return /^[0-9]$/.test(rest) ? [rest] : [];
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
