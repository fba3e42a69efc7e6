// The call stage of the media endpoints (embeddings): the channels tried through the shared
// failover loop (src/upstream/retry.ts: priority, weight, circuits, caps, retries, backoff), each
// attempt under its channel's timeouts (src/upstream/guard.ts), an error answer read in OpenAI's
// shape and judged as text judges it (src/upstream/text-errors.ts: 401/403, 429 and 5xx are worth
// another attempt, other 4xx are the request's fault). The winning answer is read whole.
import type { Gateway } from "../gateway.ts";
import type { Secret } from "../types.ts";
import type { Channel, Lease } from "../upstream/channels.ts";
import { AttemptGuard, type UpstreamTiming } from "../upstream/guard.ts";
import { type Attempt, failover } from "../upstream/retry.ts";
import { refusedAttempt, thrownAttempt, timeoutsOf, upstreamEnv } from "./call.ts";

/** What one attempt gives its send: the guard's signal and abort, the lease's credential. */
export interface AttemptTools {
  signal: AbortSignal;
  abort: (reason: Error) => void;
  credential: Secret | undefined;
}

/** Sends the request to one channel; the upstream's Response, any status. */
export type MediaSend = (channel: Channel, tools: AttemptTools) => Promise<Response>;

/** The winning answer, read whole. */
export interface MediaAnswer {
  bytes: Uint8Array;
  channel: Channel;
  timing: UpstreamTiming;
}

async function attempt(
  gateway: Gateway,
  lease: Lease,
  send: MediaSend,
  signal: AbortSignal,
): Promise<Attempt<MediaAnswer>> {
  const channel = lease.channel;
  const guard = new AttemptGuard(channel.name, timeoutsOf(channel, upstreamEnv(gateway)), signal);
  try {
    const tools = { signal: guard.signal, abort: guard.abort, credential: lease.credential };
    const response = await send(channel, tools);
    // OpenAI's error shape, as the Chat Completions kind reads it.
    if (!response.ok) return await refusedAttempt(lease, guard, "chat", response);
    const bytes = await guard.readAll(response, lease);
    return { ok: true, value: { bytes, channel, timing: guard.timing } };
  } catch (thrown) {
    return thrownAttempt(thrown, lease, guard, signal);
  }
}

/**
 * Calls `channels` in order until one answers 2xx, retrying and failing over per the routing
 * policy while nothing was relayed; `tried` collects the channels called, one entry per attempt.
 * `bodyBytes` is the size of what is sent (a body above `max_replay_bytes` is sent once).
 */
export async function callMedia(
  gateway: Gateway,
  channels: readonly Channel[],
  send: MediaSend,
  tried: string[],
  signal: AbortSignal,
  bodyBytes: number,
): Promise<MediaAnswer> {
  const policy = gateway.config.routing;
  const won = await failover(channels, (lease) => attempt(gateway, lease, send, signal), {
    policy,
    tried,
    signal,
    replayable: bodyBytes <= policy.max_replay_bytes,
  });
  return won.value;
}
