// One upstream attempt on one channel, for every endpoint family (text, images, embeddings, audio):
// the send runs under the channel's timeouts (guard.ts), and whatever ends the attempt releases its
// lease by one rule. Whether another attempt may help is the error table's answer alone
// (src/wire/errors.ts, `retryable`); this module only decides what the circuit learns:
// - the client went away: the lease is released neutral and the abort thrown on (no retry);
// - a rate limit (429) or the request's own fault (a kind that is not retryable): neutral — the
//   channel is not unhealthy;
// - anything else (5xx, a refused credential, a timeout, an unreachable channel, an answer broken
//   off before it was handed on): a failure for the channel's circuit.
import { GatewayError } from "../wire/errors.ts";
import type { Channel, Lease } from "./channels.ts";
import { AttemptGuard, type ResolvedTimeouts } from "./guard.ts";
import type { Attempt } from "./retry.ts";
import type { UpstreamEnv } from "./text-call.ts";

/** What a send gives back: its value (the lease held or ended by it), or the upstream's refusal read as an error. */
export type Sent<T> = { ok: true; value: T } | { ok: false; error: GatewayError; status: number };

/** Sends to the lease's channel under `guard` (its signal, abort and timers). May throw. */
export type Send<T> = (guard: AttemptGuard, lease: Lease) => Promise<Sent<T>>;

/** The upstream status of refusals an adapter throws (one that reads its answers itself, as images). */
const refusalStatus = new WeakMap<GatewayError, number>();

/** Marks `error` as the upstream's refusal with `status`, for an adapter that throws it. */
export function refusedWith(error: GatewayError, status: number): GatewayError {
  refusalStatus.set(error, status);
  return error;
}

/** The channel's timeouts, the first-byte one defaulting to `[text] upstream_timeout_seconds`. */
export function timeoutsOf(channel: Channel, env: UpstreamEnv): ResolvedTimeouts {
  const t = channel.config.timeouts;
  return {
    connect_ms: t.connect_ms,
    first_byte_ms: t.first_byte_ms ?? env.timeoutMs,
    idle_ms: t.idle_ms,
    total_ms: t.total_ms,
  };
}

/** Runs one attempt of `send` on the lease's channel; a failure comes back with its lease released. */
export async function attempt<T>(
  lease: Lease,
  env: UpstreamEnv,
  client: AbortSignal,
  send: Send<T>,
): Promise<Attempt<T>> {
  const channel = lease.channel;
  const guard = new AttemptGuard(channel.name, timeoutsOf(channel, env), client);
  let sent: Sent<T>;
  try {
    sent = await send(guard, lease);
  } catch (thrown) {
    guard.dispose();
    if (client.aborted) {
      lease.release("neutral");
      throw thrown;
    }
    const error = thrownError(thrown, guard, channel);
    return failed(lease, error, refusalStatus.get(error));
  }
  if (sent.ok) return sent;
  guard.dispose();
  return failed(lease, sent.error, sent.status);
}

/** What a throw during the attempt means: the timeout that fired, the error thrown, or a broken answer. */
function thrownError(thrown: unknown, guard: AttemptGuard, channel: Channel): GatewayError {
  if (guard.fired !== undefined) return guard.timeoutError(guard.fired);
  if (thrown instanceof GatewayError) return thrown;
  const why = thrown instanceof Error ? thrown.message : String(thrown);
  return new GatewayError(
    "upstream_failed",
    `Channel "${channel.name}" broke off before answering (${why}). Retry later.`,
    { cause: thrown },
  );
}

function failed<T>(lease: Lease, error: GatewayError, status: number | undefined): Attempt<T> {
  lease.release(error.kind === "rate_limited" || !error.retryable ? "neutral" : "failure");
  // A refused credential is worth another call here only when the channel has another one.
  const refused = status === 401 || status === 403;
  const retryAfterMs = error.retryAfterSeconds === undefined ? undefined : error.retryAfterSeconds * 1000;
  return {
    ok: false,
    failure: { error, status, retryAfterMs, sameChannel: !refused || lease.channel.credentials > 1 },
  };
}
