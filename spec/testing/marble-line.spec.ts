import { Letters, MARBLE_ALPHABET } from '../../src/testing/marble-line.js';

describe('the letters of a recording (T7)', () => {
  it('T7: a fixed alphabet of at least 500 letters, each one UTF-16 code unit, none of them marble syntax or a quote', () => {
    expect(MARBLE_ALPHABET.length).toBeGreaterThanOrEqual(500);
    expect(new Set(MARBLE_ALPHABET).size).toBe(MARBLE_ALPHABET.length);
    expect(MARBLE_ALPHABET.filter((c) => c.length !== 1 || /[\s\-|#()^!'"`\\]/.test(c))).toEqual([]);
    expect(MARBLE_ALPHABET.slice(0, 62).join('')).toBe('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789');
  });

  it('T7: past the 62 ASCII letters come the others, and a call\'s tool_start keeps its Greek letter (α for a) however many came before', () => {
    const letters = new Letters();
    const deltas = Array.from({ length: 700 }, (_, i) => letters.letterOf(`text_delta word ${i}`));
    expect(new Set(deltas).size).toBe(700);
    expect(deltas.slice(60, 66)).toEqual(['8', '9', 'Α', 'Β', 'Γ', 'Δ']);
    // no other event took the lower-case Greek letters: they are tool_start's
    expect(deltas.filter((c) => 'αβγδεζηθικλμνξοπρστυφχψω'.includes(c))).toEqual([]);
    const fresh = new Letters({ a: 'tool_call search' });
    Array.from({ length: 600 }, (_, i) => fresh.letterOf(`text_delta ${i}`));
    expect(fresh.letterOf('tool_start search')).toBe('α');
  });

  it('R23, R32: a start whose input a hook edited still takes its call\'s letter in Greek (the latest call of that tool)', () => {
    const letters = new Letters({ a: 'tool_call write_file {"path":"/etc/notes"}', c: 'tool_call read {"path":"a"}', d: 'tool_call read {"path":"b"}', e: 'tool_call ping' });
    expect(letters.letterOf('tool_start read {"path":"a"}')).toBe('γ');
    expect(letters.letterOf('tool_start ping {"n":1}')).toBe('ε');
    expect(letters.letterOf('tool_start write_file {"path":"sandbox/notes"}')).toBe('α');
  });

  it('H8, T3: a call that waits for a person draws as W where free, then K, then another capital', () => {
    const letters = new Letters({ a: 'tool_call transfer' });
    expect(['tool_approval transfer', 'tool_approval pay', 'tool_approval refund', 'tool_approval close'].map((line) => letters.letterOf(line))).toEqual(['W', 'K', 'A', 'B']);
  });

  it('T7: past the whole alphabet, a RangeError that says how to draw fewer letters', () => {
    const letters = new Letters();
    for (let i = 0; i < MARBLE_ALPHABET.length; i++) letters.letterOf(`text_delta ${i}`);
    expect(() => letters.letterOf('text_delta one more')).toThrow(
      new RangeError(`recordMarbles: more distinct events than letters (${MARBLE_ALPHABET.length}); record with { mergeText: true }`),
    );
  });
});
