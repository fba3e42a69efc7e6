// Calling the upstream for a text request (channels are chosen in src/pipeline/channels.ts), tried
// by priority and weight through the shared failover loop (src/upstream/retry.ts), each attempt
// run by the one attempt rule of every endpoint (src/upstream/attempt.ts): retries and failover on
// connect errors, timeouts, 401/403, 429 and 5xx, only until the first byte of a 2xx answer
// arrived — never once the client got a byte. The winning answer leaves with its usage
// reading bound (src/protocols/usage.ts), so the relay that follows needs nothing from upstream/.

import type { Gateway } from "../gateway.ts";
import { protocolOf } from "../protocols/index.ts";
import { answerUsage, streamUsage } from "../protocols/usage.ts";
import type { StreamUsage } from "../protocols/usage-reader.ts";
import { type AttemptWatch, watchAttempts } from "../telemetry/attempts.ts";
import { attempt, type Sent } from "../upstream/attempt.ts";
import type { Channel, Lease } from "../upstream/channels.ts";
import type { GuardedBody, UpstreamTiming } from "../upstream/guard.ts";
import { type Attempt, failover } from "../upstream/retry.ts";
import { callText } from "../upstream/text.ts";
import type { TextCall, UpstreamEnv } from "../upstream/text-call.ts";
import { upstreamError } from "../upstream/text-errors.ts";
import { GatewayError } from "../wire/errors.ts";
import type { TextProtocol } from "../wire/text-form.ts";
import type { UsageCounts } from "../wire/usage-counts.ts";

/** Per configuration: the settings do not change while it serves, so one object per process. */
const envs = new WeakMap<Gateway["config"], UpstreamEnv>();

export function upstreamEnv(gateway: Gateway): UpstreamEnv {
  const known = envs.get(gateway.config);
  if (known !== undefined) return known;
  const env = makeEnv(gateway);
  envs.set(gateway.config, env);
  return env;
}

function makeEnv(gateway: Gateway): UpstreamEnv {
  const text = gateway.config.text;
  return {
    simSeed: gateway.config.sim.seed,
    simTiming: { ttftMs: text.sim_ttft_ms, tokensPerSecond: text.sim_tokens_per_second },
    timeoutMs: text.upstream_timeout_seconds * 1000,
    routing: gateway.config.routing,
  };
}

/** What one attempt hands back: the upstream's answer, before its usage is read (once, for the winner). */
interface AttemptAnswer {
  /** The upstream's 2xx answer; its body is read through `body` or was read into `bytes`. */
  response: Response;
  /**
   * Streaming: the answer's body, replayed from its first byte, that releases the channel at its
   * end (undefined when the answer had none). Otherwise the body read whole (channel released).
   */
  body: GuardedBody | undefined;
  bytes: Uint8Array | undefined;
  /** Aborts the answering call (a relayed stream that ends early stops the upstream). */
  abort: () => void;
  channel: Channel;
  /** Upstream time of the answering attempt (the overhead figure is total time minus this). */
  timing: UpstreamTiming;
}

/** A complete answer (not streamed): its bytes, parsed once, and the usage the upstream reported in it. */
export interface CompleteAnswer {
  complete: true;
  bytes: Uint8Array;
  json: unknown;
  /** Read by the answering kind's reader; undefined when the upstream reported none. */
  usage: UsageCounts | undefined;
}

/** A streamed answer: its guarded body, and the answering kind's usage reader the relay feeds the events. */
export interface StreamedAnswer {
  complete: false;
  body: GuardedBody;
  reader: StreamUsage;
}

/** The winning attempt's answer, its usage reading bound where the upstream was called. */
export interface Answered {
  /** The protocol the answering channel spoke. */
  protocol: TextProtocol;
  answer: CompleteAnswer | StreamedAnswer;
  abort: () => void;
  channel: Channel;
  timing: UpstreamTiming;
}

/**
 * Milliseconds this request spent waiting on upstreams, for the overhead figure
 * (RequestContext.upstreamMs): earlier failed attempts and backoff (from `calledAt`, when there
 * were any), then the answering attempt until its body ended (non-stream, read by then) or until
 * its first byte (stream: the relaying that follows is not upstream waiting).
 */
export function upstreamWaitMs(answered: Answered, attempts: number, calledAt: number): number {
  const { startedAt, firstByteAt, endedAt } = answered.timing;
  const before = attempts > 1 ? startedAt - calledAt : 0;
  const until = endedAt ?? firstByteAt ?? startedAt;
  return before + (until - startedAt);
}

/** One attempt of a text call: the answer opened (stream) or read whole, or the upstream's refusal. */
function attemptText(lease: Lease, call: TextCall, env: UpstreamEnv): Promise<Attempt<AttemptAnswer>> {
  return attempt(lease, env, call.signal, async (guard) => {
    const channel = lease.channel;
    const attemptCall: TextCall = {
      ...call,
      signal: guard.signal,
      abort: guard.abort,
      credential: lease.credential,
    };
    const response = await callText(channel, attemptCall, env);
    if (!response.ok) return refusal(channel, call.protocol, response);
    const timing = guard.timing;
    if (!call.stream) {
      const bytes = await guard.readAll(response, lease);
      return { ok: true, value: { response, body: undefined, bytes, abort: guard.stop, channel, timing } };
    }
    const body = await guard.openBody(response, lease);
    return { ok: true, value: { response, body, bytes: undefined, abort: guard.stop, channel, timing } };
  });
}

/** An upstream's non-2xx answer, its error read in `protocol`'s shape (src/upstream/text-errors.ts). */
export async function refusal<T>(
  channel: Channel,
  protocol: TextProtocol,
  response: Response,
): Promise<Sent<T>> {
  const error = await upstreamError(channel.name, protocol, response);
  return { ok: false, error, status: response.status };
}

/**
 * Calls the channels (ordered by priority and weight, skipping open circuits and full channels)
 * until one answers 2xx with a first byte, retrying and failing over per the routing policy.
 * `call` gives the body for a channel (its model id mapped). `tried` collects the names of the
 * channels called, in order, one entry per attempt. `watch` traces and measures each attempt;
 * `model` is the client's model id (mapped per channel in the attempt's span).
 */
export async function callChannels(
  channels: readonly Channel[],
  call: (channel: Channel) => TextCall,
  env: UpstreamEnv,
  tried: string[],
  watch?: AttemptWatch & { model: string },
): Promise<Answered> {
  const calls = new Map<Channel, TextCall>();
  const callFor = (channel: Channel): TextCall => {
    const made = calls.get(channel) ?? call(channel);
    calls.set(channel, made);
    return made;
  };
  const first = channels[0];
  const probe = first === undefined ? undefined : callFor(first);
  const body = probe?.body ?? "";
  const size = typeof body === "string" ? body.length : body.byteLength;
  const watched = watch === undefined ? undefined : watchAttempts<AttemptAnswer>(watch);
  const attempt = (lease: Lease) => {
    const made = callFor(lease.channel);
    if (watched === undefined || watch === undefined) return attemptText(lease, made, env);
    const called = {
      name: lease.channel.name,
      model: lease.channel.upstreamModel(watch.model),
      provider: protocolOf(made.protocol).provider,
    };
    return watched(called, (traceHeaders) =>
      attemptText(lease, traceHeaders === undefined ? made : { ...made, traceHeaders }, env),
    );
  };
  const won = await failover(channels, attempt, {
    policy: env.routing,
    tried,
    signal: probe?.signal ?? new AbortController().signal,
    replayable: size <= env.routing.max_replay_bytes,
  });
  return withUsage(won.value, callFor(won.value.channel).protocol);
}

const decoder = new TextDecoder();

/**
 * The winning answer with its usage reading bound, where the upstream is called: a complete answer
 * parsed once (a 502 when it is not JSON: nothing was relayed, nothing is retried) and its usage
 * read; a stream given its protocol's reader, which the relay feeds.
 */
function withUsage(value: AttemptAnswer, protocol: TextProtocol): Answered {
  const { abort, channel, timing } = value;
  if (value.bytes === undefined && value.body !== undefined) {
    const answer: StreamedAnswer = { complete: false, body: value.body, reader: streamUsage(protocol) };
    return { protocol, answer, abort, channel, timing };
  }
  const bytes = value.bytes ?? new Uint8Array();
  let json: unknown;
  try {
    json = JSON.parse(decoder.decode(bytes));
  } catch {
    throw new GatewayError(
      "upstream_failed",
      `Channel "${channel.config.name}" answered with malformed JSON. Retry the request.`,
    );
  }
  const answer: CompleteAnswer = { complete: true, bytes, json, usage: answerUsage(protocol, json) };
  return { protocol, answer, abort, channel, timing };
}
