// The `[metrics]` configuration section: the Prometheus endpoint and the overhead response header.
import * as v from "valibot";

export const MetricsConfigSchema = v.strictObject({
  /** Serve GET /metrics (Prometheus text format) on the gateway's listener. */
  enabled: v.optional(v.boolean(), true),
  /** Add `x-modelgate-overhead-us` (total minus upstream time, µs) to every answer. */
  overhead_header: v.optional(v.boolean(), false),
});

export type MetricsConfig = v.InferOutput<typeof MetricsConfigSchema>;
