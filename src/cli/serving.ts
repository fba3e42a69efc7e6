// The HTTP side of a serving process: the app on its listener, and the graceful drain that stops
// the gateway after it. `serve` alone and each cluster worker use it (lifecycle.ts has the rest).

import { log } from "../base/log.ts";
import type { Config } from "../config/schema.ts";
import { type Gateway, stopGateway } from "../gateway.ts";
import { loggedMeter } from "../http/access-log.ts";
import { type Listener, type ListenOptions, listen } from "../http/listener.ts";
import { createApp } from "../server.ts";
import { dumpTimeline } from "../telemetry/timeline.ts";

/** The gateway's HTTP app (and the Responses WebSocket mode) on its listener. */
export function serveHttp(config: Config, gateway: Gateway, options?: ListenOptions): Listener {
  // Requests see the meter through the access log, which notes admissions and settlements.
  const serving: Gateway = { ...gateway, meter: loggedMeter(gateway.meter) };
  return listen(config, createApp(serving).elysia, options);
}

/** Stops accepting, finishes in-flight requests up to the shutdown deadline, then stops the gateway. */
export async function drainAndStop(
  config: Config,
  listener: Listener,
  gateway: Gateway,
  signal: string,
): Promise<void> {
  const deadlineMs = config.server.shutdown_deadline_seconds * 1000;
  log("info", "shutting down: no new connections, finishing in-flight requests", {
    signal,
    deadline_ms: deadlineMs,
  });
  // An open console's live feed is no request in flight: it ends now, not at the deadline.
  gateway.longLived.closeAll();
  const result = await listener.drain(deadlineMs);
  await stopGateway(gateway);
  dumpTimeline();
  log("info", "stopped", { drained: result.drained, closed_in_flight: result.remaining });
}
