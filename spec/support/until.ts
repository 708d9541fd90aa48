/** Resolves once `predicate` holds, polled every 5 ms: a spec's wait for what another process or socket does. */
export async function until(predicate: () => boolean, what = 'a condition to hold', ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !predicate(); ) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
