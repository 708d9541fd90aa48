/** How long a server may take to end the body after the reply was complete. */
export const DRAIN_MS = 1000;

/**
 * Reads what follows a complete reply (normally only the body's end), so that fetch can reuse the
 * connection for the next call; aborts `controller` when the server lingers longer than `DRAIN_MS`.
 * Never rejects: after the reply, nothing that goes wrong can be lost.
 *
 * ```ts
 * if (ended) return drain(() => events.next(), controller);
 * ```
 *
 * `next` reads one piece: an SSE generator's `next`, a stream reader's `read` (the AI SDK's parts, P18).
 */
export async function drain(next: () => Promise<{ readonly done?: boolean }>, controller: AbortController): Promise<void> {
  const timer = setTimeout(() => controller.abort(), DRAIN_MS);
  try {
    while (!(await next()).done);
  } catch {
    // aborted or broken after the reply was complete: nothing is lost
  } finally {
    clearTimeout(timer);
  }
}
