/**
 * The text of a streamed message, appended delta by delta. `+=` on strings builds a rope: one node of
 * about 32 bytes per delta, kept until the end, so a stream of one-character deltas would hold ~8 bytes
 * per character. Joining every `CHUNK` deltas into one flat string keeps the memory near the text size.
 */
export class TextBuffer {
  private static readonly CHUNK = 1024;
  private readonly chunks: string[] = [];
  private pending: string[] = [];

  /** The text as last read, until the next append: a message made twice from one text joins it once. */
  private read: string | undefined;

  /** The text's length so far (R29: a partial message is this long a prefix of it). */
  length = 0;

  append(text: string): void {
    this.read = undefined;
    this.length += text.length;
    this.pending.push(text);
    if (this.pending.length === TextBuffer.CHUNK) {
      this.chunks.push(this.pending.join(''));
      this.pending = [];
    }
  }

  toString(): string {
    if (this.read !== undefined) return this.read;
    const tail = this.pending.length === 1 ? this.pending[0]! : this.pending.join('');
    return (this.read = this.chunks.length === 0 ? tail : this.chunks.join('') + tail);
  }
}
