// What every serving process shares: bootstrapping a fresh store and announcing its secrets, the
// HTTP app on a listener, and the graceful stop on SIGINT/SIGTERM. `serve` alone uses all of it;
// a cluster primary bootstraps and announces, its workers listen and drain (src/cluster/).
import { type Bootstrapped, bootstrapStore } from "../admin/bootstrap.ts";
import { parseUsd } from "../billing/money.ts";
import type { Config } from "../config/schema.ts";
import { type Gateway, stopGateway } from "../gateway.ts";
import { type Listener, type ListenOptions, listen } from "../http/listener.ts";
import { socketRoute } from "../http/websocket.ts";
import { log } from "../log.ts";
import { createApp } from "../server.ts";
import type { Store } from "../store/store.ts";
import { UsageError } from "./args.ts";

/** Creates the defaults on an empty store when bootstrap is enabled; the new secrets, if any. */
export async function bootstrapIfEnabled(config: Config, store: Store): Promise<Bootstrapped | undefined> {
  if (!config.bootstrap.enabled) return undefined;
  const balance = parseUsd(config.bootstrap.balance_usd);
  if (!balance.ok) throw new UsageError(`bootstrap.balance_usd: ${balance.message}`);
  return bootstrapStore(store, balance.value);
}

/** The gateway's HTTP app (and the Responses WebSocket mode) on its listener. */
export function serveHttp(config: Config, gateway: Gateway, options?: ListenOptions): Listener {
  const app = createApp(gateway);
  return listen(config, (request) => app.handle(request), socketRoute(gateway), options);
}

/** Runs `stop` once on the first SIGINT or SIGTERM, then exits 0. */
export function stopOnSignal(stop: (signal: string) => Promise<void>): void {
  let stopping = false;
  const once = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    await stop(signal);
    process.exit(0);
  };
  process.on("SIGINT", () => void once("SIGINT"));
  process.on("SIGTERM", () => void once("SIGTERM"));
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
  const result = await listener.drain(deadlineMs);
  await stopGateway(gateway);
  log("info", "stopped", { drained: result.drained, closed_in_flight: result.remaining });
}

export function announceBootstrap(secrets: Bootstrapped, url: string): void {
  const base = url.replace("://0.0.0.0:", "://127.0.0.1:").replace("://[::]:", "://[::1]:");
  process.stderr.write(
    `${[
      "",
      "First start on an empty store: created account `default` (balance from bootstrap.balance_usd),",
      "group `default` (all models) and this API key. It is shown only once; keep it now:",
      "",
      `    ${secrets.secret}`,
      "",
      "Try it:",
      `    curl ${base}/v1/models -H "Authorization: Bearer ${secrets.secret}"`,
      "",
      "Admin token for /admin/v1 and `modelgate tui` (also shown only once):",
      "",
      `    ${secrets.adminToken}`,
      "",
    ].join("\n")}\n`,
  );
}
