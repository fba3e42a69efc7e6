// The retry and failover loop shared by every endpoint. Channels are tried in the order given
// (priority, then weight); a channel whose circuit is open or that is at its concurrency cap is
// skipped without being called. A retryable failure moves on to the next usable channel at once;
// when none is left, the same channel is tried again after an exponential backoff with jitter, or
// after the upstream's Retry-After when that is within the bound. Everything here happens before
// the client got a byte: the caller only returns once an attempt produced its first byte.
// Whether a failure is worth another attempt is its kind's row in the error table
// (src/wire/errors.ts). When the loop gives up, it throws the last attempt's error (its kind,
// status and code: what the client got before) carrying every attempt made (`FailedAttempt`:
// channel, upstream kind, status, error, time), which the edge logs once.
import type { RoutingConfig } from "../config/channels.ts";
import { type FailedAttempt, GatewayError } from "../wire/errors.ts";
import type { Channel, Lease, Unavailable } from "./channels.ts";

/** The result of one attempt: a value (the lease stays held), or a failure (the lease released). */
export type Attempt<T> = { ok: true; value: T } | { ok: false; failure: AttemptFailure };

export interface AttemptFailure {
  /** What failed; another attempt (here or elsewhere) may succeed when its kind is `retryable`. */
  error: GatewayError;
  /** The upstream asked to wait this long before calling it again. */
  retryAfterMs?: number | undefined;
  /** False when calling the same channel again cannot help (e.g. its only credential was refused). */
  sameChannel?: boolean | undefined;
  /** The upstream's HTTP status, when it answered one (traces and metrics). */
  status?: number | undefined;
}

export interface FailoverOptions {
  policy: RoutingConfig;
  /** Channel names, in the order they were called (what the usage record lists). */
  tried: string[];
  /** Aborted when the client went away: stops waiting and retrying. */
  signal: AbortSignal;
  /** False when the request body is too large to be sent twice. */
  replayable: boolean;
  random?: () => number;
}

export interface Won<T> {
  value: T;
  lease: Lease;
}

/** Backoff before retry number `n` (0-based): base × 2^n capped at max, jittered to 50–100 %. */
export function backoffMs(n: number, policy: RoutingConfig, random: () => number = Math.random): number {
  const full = Math.min(policy.backoff_max_ms, policy.backoff_base_ms * 2 ** n);
  return Math.round(full * (0.5 + random() / 2));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

function noChannel(channels: readonly Channel[], skipped: Map<string, Unavailable>): GatewayError {
  const reasons = [...skipped].map(([name, why]) =>
    why === "circuit_open" ? `"${name}" has its circuit open` : `"${name}" is at its concurrency cap`,
  );
  const waits = channels.map((c) => c.circuit.waitMs()).filter((ms) => ms > 0);
  const retryAfterSeconds = waits.length > 0 ? Math.max(1, Math.ceil(Math.min(...waits) / 1000)) : 1;
  return new GatewayError(
    "no_channel",
    `No healthy upstream channel is available: ${reasons.join("; ") || "none is configured"}. Retry after ${retryAfterSeconds} s.`,
    { retryAfterSeconds },
  );
}

/** The record of one failed attempt on `channel` that began at `startedAt` (performance.now()). */
function record(channel: Channel, failure: AttemptFailure, startedAt: number): FailedAttempt {
  return {
    channel: channel.name,
    upstream: channel.config.kind,
    status: failure.status,
    kind: failure.error.kind,
    message: failure.error.message,
    at: new Date().toISOString(),
    ms: Math.round(performance.now() - startedAt),
  };
}

/**
 * Runs `attempt` on the channels until one succeeds; otherwise throws the last failure's error
 * carrying every attempt (or `no_channel` when none could be called).
 */
export async function failover<T>(
  channels: readonly Channel[],
  attempt: (lease: Lease) => Promise<Attempt<T>>,
  options: FailoverOptions,
): Promise<Won<T>> {
  const { policy, signal } = options;
  const budget = options.replayable ? policy.max_attempts : 1;
  const skipped = new Map<string, Unavailable>();
  let attempts = 0;
  let last: AttemptFailure | undefined;
  const failed: FailedAttempt[] = [];
  for (const [index, channel] of channels.entries()) {
    for (let retry = 0; attempts < budget && !signal.aborted; retry++) {
      const lease = channel.acquire();
      if (typeof lease === "string") {
        skipped.set(channel.name, lease);
        break;
      }
      attempts++;
      options.tried.push(channel.name);
      const startedAt = performance.now();
      const result = await attempt(lease);
      if (result.ok) return { value: result.value, lease };
      last = result.failure;
      failed.push(record(channel, last, startedAt));
      if (!last.error.retryable || signal.aborted) throw last.error.withAttempts(failed);
      const others = channels.slice(index + 1).some((c) => c.unavailable() === undefined);
      const wait = nextWait(last, retry, channel, others, policy, options.random);
      if (wait === undefined) break;
      await sleep(wait, signal);
    }
  }
  if (last !== undefined) throw last.error.withAttempts(failed);
  throw noChannel(channels, skipped);
}

/** How long to wait before trying `channel` again, or undefined to move on. */
function nextWait(
  failure: AttemptFailure,
  retry: number,
  channel: Channel,
  othersLeft: boolean,
  policy: RoutingConfig,
  random?: () => number,
): number | undefined {
  if (othersLeft || retry >= channel.config.retries || failure.sameChannel === false) return undefined;
  const asked = failure.retryAfterMs;
  if (asked !== undefined) return asked <= policy.max_retry_after_ms ? asked : undefined;
  return backoffMs(retry, policy, random);
}
