/**
 * What a child process has written so far to one of its streams, and a wait for some text in it: how the specs
 * that drive a process as its user would (`npm run chat`, the ACP agent) read it.
 */
export class Written {
  private text = '';
  private readonly waiters = new Set<() => void>();

  /** Everything written so far. */
  get value(): string {
    return this.text;
  }

  /** More was written: the waits that it satisfies resolve. */
  append(chunk: string): void {
    this.text += chunk;
    for (const check of this.waiters) check();
  }

  /** Resolves once the text holds `text` (from `from` on); rejects after `ms` with `failure()` as the message. */
  until(text: string, { ms, from = 0, failure }: { ms: number; from?: number; failure: () => string }): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(failure()));
      }, ms);
      const check = () => {
        if (!this.text.includes(text, from)) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      this.waiters.add(check);
      check();
    });
  }
}
