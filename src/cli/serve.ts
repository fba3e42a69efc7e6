// `modelgate serve`: opens the store, bootstraps a fresh install, listens, and drains on SIGINT/SIGTERM.
import { type Bootstrapped, bootstrapStore } from "../admin/bootstrap.ts";
import { parseUsd } from "../billing/money.ts";
import { loadConfig } from "../config/load.ts";
import { startGateway, stopGateway, VERSION } from "../gateway.ts";
import { listen } from "../http/listener.ts";
import { socketRoute } from "../http/websocket.ts";
import { log } from "../log.ts";
import { createApp } from "../server.ts";
import { openStore } from "../store/open.ts";
import { parse, UsageError } from "./args.ts";

const FLAGS = {
  config: { type: "string" },
  listen: { type: "string" },
  db: { type: "string" },
  "tls-cert": { type: "string" },
  "tls-key": { type: "string" },
  "trusted-proxy": { type: "string", multiple: true },
  "shutdown-deadline": { type: "string" },
  "no-bootstrap": { type: "boolean" },
  seed: { type: "string" },
} as const;

export async function serveCommand(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, FLAGS, "serve");
  if (positionals.length > 0) throw new UsageError(`serve: unexpected argument "${positionals[0]}"`);
  const { config: file, ...flags } = values;
  const config = loadConfig({ file: file ?? process.env.MODELGATE_CONFIG, env: process.env, flags });

  const store = await openStore(config.store.url);
  let bootstrapSecret: Bootstrapped | undefined;
  if (config.bootstrap.enabled) {
    const balance = parseUsd(config.bootstrap.balance_usd);
    if (!balance.ok) throw new UsageError(`bootstrap.balance_usd: ${balance.message}`);
    bootstrapSecret = await bootstrapStore(store, balance.value);
  }

  const gateway = await startGateway(config, store);
  const app = createApp(gateway);
  const listener = listen(config, (request) => app.handle(request), socketRoute(gateway));
  if (bootstrapSecret) announceBootstrap(bootstrapSecret.secret, listener.url, bootstrapSecret.adminToken);
  log("info", "modelgate listening", {
    url: listener.url,
    version: VERSION,
    store: config.store.url,
    http2: config.server.http2,
    tls: config.server.tls_cert !== undefined,
  });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const deadlineMs = config.server.shutdown_deadline_seconds * 1000;
    log("info", "shutting down: no new connections, finishing in-flight requests", {
      signal,
      deadline_ms: deadlineMs,
    });
    const result = await listener.drain(deadlineMs);
    await stopGateway(gateway);
    log("info", "stopped", { drained: result.drained, closed_in_flight: result.remaining });
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

function announceBootstrap(secret: string, url: string, adminToken: string): void {
  const base = url.replace("://0.0.0.0:", "://127.0.0.1:").replace("://[::]:", "://[::1]:");
  process.stderr.write(
    `${[
      "",
      "First start on an empty store: created account `default` (balance from bootstrap.balance_usd),",
      "group `default` (all models) and this API key. It is shown only once; keep it now:",
      "",
      `    ${secret}`,
      "",
      "Try it:",
      `    curl ${base}/v1/models -H "Authorization: Bearer ${secret}"`,
      "",
      "Admin token for /admin/v1 and `modelgate tui` (also shown only once):",
      "",
      `    ${adminToken}`,
      "",
    ].join("\n")}\n`,
  );
}
