// The `[telemetry]` configuration section: OpenTelemetry traces exported over OTLP/HTTP. Off unless
// an endpoint is set (here or in MODELGATE_OTLP_ENDPOINT); with it off the OpenTelemetry SDK is
// never loaded.
import * as v from "valibot";

const Endpoint = v.pipe(
  v.string(),
  v.url("telemetry.otlp_endpoint must be a URL such as http://127.0.0.1:4318"),
  v.check(
    (s) => /^https?:\/\//i.test(s),
    "telemetry.otlp_endpoint must be an http:// or https:// URL (OTLP over HTTP), e.g. http://127.0.0.1:4318",
  ),
);

export const TelemetryConfigSchema = v.strictObject({
  /**
   * Base URL of an OTLP/HTTP collector (`http://host:4318`); spans are posted to `/v1/traces`
   * under it (a URL already ending in `/v1/traces` is used as is). Unset: no tracing.
   */
  otlp_endpoint: v.optional(Endpoint),
  /** Fraction of new traces recorded (0–1); a client's sampled `traceparent` flag is followed. */
  sampling_ratio: v.optional(
    v.pipe(
      v.number("telemetry.sampling_ratio must be a number between 0 and 1"),
      v.minValue(0, "telemetry.sampling_ratio must be at least 0"),
      v.maxValue(1, "telemetry.sampling_ratio must be at most 1"),
    ),
    1,
  ),
  /** `service.name` of the exported resource. */
  service_name: v.optional(v.pipe(v.string(), v.minLength(1)), "modelgate"),
  /**
   * Put the prompt text in the request span (`gen_ai.input.messages`; completions are never
   * captured). Off by default: traces then carry counts, ids and names, never content.
   */
  capture_content: v.optional(v.boolean(), false),
});

export type TelemetryConfig = v.InferOutput<typeof TelemetryConfigSchema>;

/** The OTLP/HTTP traces URL for an endpoint setting. */
export function tracesUrl(endpoint: string): string {
  const trimmed = endpoint.replace(/\/+$/, "");
  return trimmed.endsWith("/v1/traces") ? trimmed : `${trimmed}/v1/traces`;
}
