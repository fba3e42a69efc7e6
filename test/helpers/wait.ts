// Waiting on a condition instead of sleeping past it: polls `probe` until it gives a value (not
// undefined, not false) or the deadline passes, then fails naming what was awaited. The one
// waitFor of the suite; the key-cache waits below are built on it.

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

/**
 * Waits until GET /v1/models on the gateway at `url` answers `status` to `secret` (with `headers`
 * besides): how a test sees the gateway's key cache (reloaded every 250 ms) catch up with a key
 * created, changed, revoked or enabled in the store, instead of sleeping past a reload. The models
 * list goes through no limit and records no usage.
 */
export function keyAnswers(
  url: string,
  secret: string,
  status: number,
  headers: Record<string, string> = {},
): Promise<true> {
  return waitFor(`GET /v1/models to answer ${status} to the key`, async () => {
    const response = await fetch(`${url}/v1/models`, {
      headers: { authorization: `Bearer ${secret}`, ...headers },
    });
    await response.arrayBuffer();
    return response.status === status || undefined;
  });
}

/** Waits until a running gateway at `url` accepts `secret` (it sees a new key within a poll). */
export function keyAccepted(url: string, secret: string): Promise<true> {
  return keyAnswers(url, secret, 200);
}

/**
 * Waits until every one of `workers` worker processes behind `url` accepts `secret`: each worker
 * has its own key cache, and the kernel spreads connections (not requests) over them, so each
 * probe is a new connection and the worker that answered is read from `x-modelgate-worker` (sent
 * with `[metrics] overhead_header = true`).
 */
export function keyAcceptedByWorkers(url: string, secret: string, workers: number): Promise<true> {
  const accepted = new Set<string>();
  return waitFor(`all ${workers} workers to accept the key`, async () => {
    const response = await fetch(`${url}/v1/models`, {
      headers: { authorization: `Bearer ${secret}` },
      keepalive: false,
    });
    await response.arrayBuffer();
    const worker = response.headers.get("x-modelgate-worker");
    if (response.status === 200 && worker !== null) accepted.add(worker);
    return accepted.size >= workers || undefined;
  });
}
