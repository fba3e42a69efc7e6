// Turns `[telemetry]` into a Tracer, or into nothing: with no OTLP endpoint configured the
// OpenTelemetry SDK and its exporter are never imported, so the request path pays for one
// `undefined` check per request and the process loads none of their code.

import { log } from "../base/log.ts";
import type { UsageFeed } from "../billing/feed.ts";
import type { TelemetryConfig } from "../config/telemetry.ts";
import type { Tracer } from "./span.ts";

export type TracerModule = Pick<typeof import("./otel.ts"), "startTracer">;

/** Loads the SDK-backed tracer module (overridable by tests that count loads). */
export type LoadTracer = () => Promise<TracerModule>;

const loadOtel: LoadTracer = () => import("./otel.ts");

/** A tracer exporting to `config.otlp_endpoint`, or undefined when telemetry is off. */
export async function openTracer(
  config: TelemetryConfig,
  version: string,
  feed: UsageFeed | undefined,
  load: LoadTracer = loadOtel,
): Promise<Tracer | undefined> {
  if (config.otlp_endpoint === undefined) return undefined;
  const { startTracer } = await load();
  log("info", "telemetry: exporting traces over OTLP/HTTP", {
    endpoint: shownEndpoint(config.otlp_endpoint),
    sampling_ratio: config.sampling_ratio,
    capture_content: config.capture_content,
  });
  return startTracer(config, version, feed);
}

/** The endpoint as logged: a user name, password or query (where collectors take credentials) masked. */
export function shownEndpoint(endpoint: string): string {
  const url = new URL(endpoint);
  if (url.username) url.username = "***";
  if (url.password) url.password = "***";
  if (url.search) url.search = "?***";
  return url.toString();
}
