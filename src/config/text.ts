// The `[text]` configuration section: limits and timing of the text endpoints and their relay,
// and the pace of the in-process simulator channel.
import * as v from "valibot";
import { wholeNumber } from "./blocks.ts";

export const TextConfigSchema = v.strictObject({
  /** Largest request body the text endpoints read, in bytes (413 beyond). */
  max_body_bytes: v.optional(wholeNumber(1024), 32 * 1024 * 1024),
  /** Seconds of upstream silence after which a stream gets an SSE comment keep-alive. */
  keepalive_seconds: v.optional(v.pipe(v.number(), v.minValue(0.05), v.maxValue(300)), 15),
  /** Seconds to wait for an upstream's response headers before giving up (504). */
  upstream_timeout_seconds: v.optional(v.pipe(v.number(), v.minValue(1), v.maxValue(3600)), 300),
  /** In-process simulator: delay before the first token, in milliseconds. */
  sim_ttft_ms: v.optional(wholeNumber(0), 0),
  /** In-process simulator: tokens per second after the first (0: as fast as possible). */
  sim_tokens_per_second: v.optional(v.pipe(v.number(), v.minValue(0)), 0),
});

export type TextConfig = v.InferOutput<typeof TextConfigSchema>;
