// Routing and resilience configuration: the per-channel fields every `[[channels]]` entry may
// carry (priority, weight, credentials, concurrency cap, timeouts, circuit breaker, retries), the
// simulator fault profile a `sim` channel may take, and the `[routing]` section (request-wide
// attempt budget, backoff and replay bound).
import * as v from "valibot";
import { wholeNumber } from "./blocks.ts";

const MsNumber = (min: number) => wholeNumber(min, 86_400_000);
const Ms = (min: number, fallback: number) => v.optional(MsNumber(min), fallback);
const MaybeMs = (min: number) => v.optional(MsNumber(min));

const Rate = v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1)), 0);

/** Upstream timeouts of one channel, in milliseconds; each one has its own error. */
export const TimeoutsSchema = v.strictObject({
  /** Opening the TCP connection to a cold origin (upstream_connect_timeout, 504). */
  connect_ms: Ms(1, 10_000),
  /** From sending the request to the first body byte (upstream_first_byte_timeout, 504); default [text] upstream_timeout_seconds. */
  first_byte_ms: MaybeMs(1),
  /** Longest silence between two body chunks once the answer started (upstream_idle_timeout). */
  idle_ms: Ms(1, 300_000),
  /** The whole upstream exchange, body included (upstream_total_timeout). */
  total_ms: Ms(1, 3_600_000),
});

/** The circuit breaker of one channel. */
export const CircuitSchema = v.strictObject({
  /** Consecutive failures that open the circuit. */
  failures: v.optional(wholeNumber(1), 5),
  /** Failure share among the last `window` calls that opens it (once `min_calls` were made). */
  failure_ratio: v.optional(v.pipe(v.number(), v.minValue(0.01), v.maxValue(1)), 0.5),
  window: v.optional(wholeNumber(1, 1000), 20),
  min_calls: v.optional(wholeNumber(1), 10),
  /** How long an open circuit skips the channel before one probe is let through. */
  cooldown_ms: Ms(1, 30_000),
});

const EnvName = v.pipe(v.string(), v.regex(/^[A-Z_][A-Z0-9_]*$/, "expected an environment variable name"));

/** Fields every channel kind shares. */
export const ChannelRoutingFields = {
  /** Higher priorities are tried first; equal priorities share traffic by weight. */
  priority: v.optional(v.pipe(v.number(), v.integer()), 0),
  weight: v.optional(wholeNumber(1, 1_000_000), 1),
  /** Most requests in flight on this channel at once; 0 means no cap. */
  max_concurrency: v.optional(wholeNumber(0), 0),
  /** Extra attempts on this same channel when no other channel is left (or it asked to Retry-After). */
  retries: v.optional(wholeNumber(0, 10), 1),
  timeouts: v.optional(TimeoutsSchema, {}),
  circuit: v.optional(CircuitSchema, {}),
};

/** Credentials of an HTTP channel: `api_key_env` and/or `api_key_envs`, used in turn. */
export const CredentialFields = {
  api_key_envs: v.optional(v.array(EnvName), []),
};

/** How a simulated upstream misbehaves (`modelgate sim --profile`, or `profile` on a sim channel). */
export const FaultProfileSchema = v.strictObject({
  /** Wait before the response headers, plus a uniform random 0..jitter_ms. */
  latency_ms: Ms(0, 0),
  jitter_ms: Ms(0, 0),
  /** Wait before the first content event (time to first token). */
  ttft_ms: MaybeMs(0),
  /** Pace of content after the first token; 0 is as fast as possible. */
  tokens_per_second: v.optional(v.pipe(v.number(), v.minValue(0))),
  /** Probabilities of answering with that status instead of the model's answer. */
  rate_429: Rate,
  rate_500: Rate,
  rate_503: Rate,
  /** The Retry-After a 429 or 503 carries, in seconds. */
  retry_after_seconds: v.optional(wholeNumber(0), 1),
  /** The first N calls fail with `fail_status`, whatever the rates say. */
  fail_first: v.optional(wholeNumber(0), 0),
  fail_status: v.optional(v.picklist([429, 500, 503]), 500),
  /** Streams: cut the connection after this many content events. */
  disconnect_after_events: v.optional(wholeNumber(0)),
  /** Probability of never answering (the call waits until the client gives up). */
  hang_rate: Rate,
});

export type FaultProfile = v.InferOutput<typeof FaultProfileSchema>;
export type Timeouts = v.InferOutput<typeof TimeoutsSchema>;
export type CircuitConfig = v.InferOutput<typeof CircuitSchema>;

/** The `[routing]` section: request-wide retry policy. */
export const RoutingSchema = v.strictObject({
  /** Upstream attempts per client request, across all channels. */
  max_attempts: v.optional(wholeNumber(1, 20), 4),
  /** Bodies larger than this are sent once and never replayed. */
  max_replay_bytes: v.optional(wholeNumber(0), 8 * 1024 * 1024),
  /** Backoff before retrying the same channel: base × 2^n, at most max, with full jitter above half. */
  backoff_base_ms: Ms(0, 100),
  backoff_max_ms: Ms(0, 2_000),
  /** An upstream Retry-After up to this long is waited out; a longer one moves on (or gives up). */
  max_retry_after_ms: Ms(0, 5_000),
});

export type RoutingConfig = v.InferOutput<typeof RoutingSchema>;
