// The call stage of the media endpoints (embeddings): the channels tried through the shared
// failover loop (src/upstream/retry.ts: priority, weight, circuits, caps, retries, backoff), each
// attempt by the one attempt rule of every endpoint (src/upstream/attempt.ts: its channel's
// timeouts, its lease released), an error answer read in OpenAI's shape as text reads it
// (src/upstream/text-errors.ts: 401/403, 429 and 5xx are worth another attempt, other 4xx are the
// request's fault). The winning answer is read whole, or
// opened at its first byte to be relayed as it arrives.

import type { Secret } from "../base/types.ts";
import type { Gateway } from "../gateway.ts";
import { attempt } from "../upstream/attempt.ts";
import type { Channel, Lease } from "../upstream/channels.ts";
import type { AttemptGuard, GuardedBody, UpstreamTiming } from "../upstream/guard.ts";
import { type Attempt, failover } from "../upstream/retry.ts";
import { refusal, upstreamEnv } from "./call.ts";

/** What one attempt gives its send: the guard's signal and abort, the lease's credential. */
export interface AttemptTools {
  signal: AbortSignal;
  abort: (reason: Error) => void;
  credential: Secret | undefined;
}

/** Sends the request to one channel; the upstream's Response, any status. */
export type MediaSend = (channel: Channel, tools: AttemptTools) => Promise<Response>;

/** The winning answer: its body read whole (`callMedia`) or opened (`callMediaStream`). */
export interface MediaAnswer<Body> {
  body: Body;
  /** The answer's media type, as the upstream sent it. */
  contentType: string;
  channel: Channel;
  timing: UpstreamTiming;
  /** Stops the upstream call (a relayed stream the client left). */
  stop: () => void;
}

/** How an answer's body is taken, under the attempt's guard; the lease ends with it. */
type Take<Body> = (guard: AttemptGuard, response: Response, lease: Lease) => Promise<Body>;

/** One attempt: the send, and the answer's body taken under the attempt's guard. */
function attemptMedia<Body>(
  gateway: Gateway,
  lease: Lease,
  send: MediaSend,
  signal: AbortSignal,
  take: Take<Body>,
): Promise<Attempt<MediaAnswer<Body>>> {
  return attempt(lease, upstreamEnv(gateway), signal, async (guard) => {
    const channel = lease.channel;
    const tools = { signal: guard.signal, abort: guard.abort, credential: lease.credential };
    const response = await send(channel, tools);
    // OpenAI's error shape, as the Chat Completions kind reads it.
    if (!response.ok) return refusal(channel, "chat", response);
    const body = await take(guard, response, lease);
    const contentType = response.headers.get("content-type") ?? "application/octet-stream";
    return { ok: true, value: { body, contentType, channel, timing: guard.timing, stop: guard.stop } };
  });
}

/** What every media call passes: the channels in order, the send, where the tried names go. */
export interface MediaCall {
  channels: readonly Channel[];
  send: MediaSend;
  /** Collects the channels called, one entry per attempt. */
  tried: string[];
  signal: AbortSignal;
  /** The size of what is sent (a body above `max_replay_bytes` is sent once). */
  bodyBytes: number;
}

async function call<Body>(gateway: Gateway, media: MediaCall, take: Take<Body>): Promise<MediaAnswer<Body>> {
  const policy = gateway.config.routing;
  const won = await failover(
    media.channels,
    (lease) => attemptMedia(gateway, lease, media.send, media.signal, take),
    {
      policy,
      tried: media.tried,
      signal: media.signal,
      replayable: media.bodyBytes <= policy.max_replay_bytes,
    },
  );
  return won.value;
}

/**
 * Calls the channels in order until one answers 2xx, retrying and failing over per the routing
 * policy (nothing was relayed yet), and reads the winning answer whole.
 */
export function callMedia(gateway: Gateway, media: MediaCall): Promise<MediaAnswer<Uint8Array>> {
  return call(gateway, media, (guard, response, lease) => guard.readAll(response, lease));
}

/**
 * As callMedia, the winning answer opened at its first byte (the first-byte timeout covers it)
 * instead: its body is relayed as it arrives, the idle timeout between chunks, the lease ended
 * with it (undefined when the answer had no body).
 */
export function callMediaStream(
  gateway: Gateway,
  media: MediaCall,
): Promise<MediaAnswer<GuardedBody | undefined>> {
  return call(gateway, media, (guard, response, lease) => guard.openBody(response, lease));
}
