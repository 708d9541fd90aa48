/**
 * A letter for each description, as the project's diagrams and `recordMarbles` choose them: the turn's
 * digit for `turn_start N`, the provider's events in lower case, the loop's own in upper case. A
 * scenario's own legend comes first. Past the 62 letters and digits, Greek letters, then `*`.
 */
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const ALL = [...LOWER, ...UPPER, ...'0123456789', ...'αβγδεζηθικλμνξπρστυφχψω'];

export class LetterMap {
  private readonly byDescription = new Map<string, string>();
  private readonly taken = new Set<string>();

  constructor(given: Record<string, string> = {}) {
    for (const [letter, description] of Object.entries(given)) {
      this.taken.add(letter);
      if (!this.byDescription.has(description)) this.byDescription.set(description, letter);
    }
  }

  letterOf(description: string): string {
    const known = this.byDescription.get(description);
    if (known !== undefined) return known;
    const letter = [...preferred(description), ...ALL].find((c) => !this.taken.has(c)) ?? '*';
    this.taken.add(letter);
    this.byDescription.set(description, letter);
    return letter;
  }
}

function preferred(description: string): string[] {
  const space = description.indexOf(' ');
  const type = space === -1 ? description : description.slice(0, space);
  const rest = space === -1 ? '' : description.slice(space + 1);
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
    default:
      return [...UPPER];
  }
}
