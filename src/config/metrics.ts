// The `[metrics]` configuration section: the Prometheus endpoint, who may scrape it, and the
// overhead response header.
import * as v from "valibot";
import { Cidr } from "./blocks.ts";

export const MetricsConfigSchema = v.strictObject({
  /** Serve GET /metrics (Prometheus text format) on the gateway's listener. */
  enabled: v.optional(v.boolean(), true),
  /**
   * Client addresses that may scrape GET /metrics without a token. Unset: the admin API's
   * addresses (`admin.allow_from`, loopback by default). `["0.0.0.0/0", "::/0"]` opens it to all.
   */
  allow_from: v.optional(v.array(Cidr)),
  /**
   * Name of an environment variable holding a scrape token: a request sending
   * `Authorization: Bearer <value>` may scrape from any address.
   */
  token_env: v.optional(
    v.pipe(v.string(), v.regex(/^[A-Z_][A-Z0-9_]*$/, "expected an environment variable name")),
  ),
  /**
   * Distinct API key names used as the `key` label of the token and cost metrics; keys seen after
   * this many are counted under `other` (bounds the series Prometheus stores).
   */
  max_key_labels: v.optional(
    v.pipe(
      v.number(),
      v.integer("metrics.max_key_labels must be a whole number"),
      v.minValue(0, "metrics.max_key_labels must be at least 0"),
      v.maxValue(
        10000,
        "metrics.max_key_labels must be at most 10000: more key series than that overwhelm Prometheus",
      ),
    ),
    100,
  ),
  /** Add `x-modelgate-overhead-us` (total minus upstream time, µs) to every answer. */
  overhead_header: v.optional(v.boolean(), false),
});

export type MetricsConfig = v.InferOutput<typeof MetricsConfigSchema>;
