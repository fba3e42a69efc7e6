// Waiting on a condition instead of sleeping past it: polls `probe` until it gives a value (not
// undefined, not false) or the deadline passes, then fails naming what was awaited.

/** Polls `probe` every 20 ms until it returns something other than undefined or false. */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  ms = 15_000,
): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > until) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await Bun.sleep(20);
  }
}

/** Waits until a running gateway at `url` accepts `secret` (it sees a new key within a poll). */
export function keyAccepted(url: string, secret: string): Promise<true> {
  return waitFor("the new key to be accepted", async () => {
    const response = await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${secret}` } });
    return response.status === 200 || undefined;
  });
}
