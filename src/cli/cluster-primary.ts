// The cluster primary (`serve` with server.workers above 1). It owns what must exist once: the
// store's migrations and bootstrap, and all billing state — the one LedgerMeter (limiter,
// reservations, group-commit usage writer, balance sync), the usage feed and the notifier. It
// serves no HTTP: its workers do, on one port through reusePort, and call it for every admission
// and settlement, so limits stay exact however the kernel spreads connections.
import pkg from "../../package.json";
import { log } from "../base/log.ts";
import { startBilling } from "../billing/start.ts";
import { Supervisor } from "../cluster/supervisor.ts";
import { ConfigError } from "../config/load.ts";
import { type Config, splitListen } from "../config/schema.ts";
import { openStore, storeLabel } from "../store/open.ts";
import { announceBootstrap, bootstrapIfEnabled, shedStartUp, stopOnSignal } from "./lifecycle.ts";

/** How long beyond the workers' own shutdown deadline the primary waits before killing them. */
const STOP_GRACE_MS = 10_000;

/**
 * Binds the address once without reusePort, then lets it go: an address in use fails here as it
 * would for one process (another cluster on the port would otherwise silently join this one's
 * reusePort group), and port 0 becomes one free port that every worker then binds.
 */
function claimPort(listen: string): number {
  const { hostname, port } = splitListen(listen);
  try {
    const probe = Bun.listen({ hostname, port, socket: { data() {} } });
    const chosen = probe.port;
    probe.stop(true);
    return chosen;
  } catch (error) {
    throw new ConfigError(
      `server.listen: cannot listen on ${listen}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

export async function runPrimary(config: Config): Promise<void> {
  const workers = config.server.workers;
  const port = claimPort(config.server.listen);
  const store = await openStore(config.store.url, config.store.journal, config.store.pool_size);
  const bootstrapped = await bootstrapIfEnabled(config, store);
  const billing = await startBilling(config, store);
  billing.notifier.start(billing.feed);
  const supervisor = new Supervisor({ workers, port, billing });
  billing.feed.subscribe((event) => supervisor.publish(event));

  const waitMs = config.server.shutdown_deadline_seconds * 1000 + STOP_GRACE_MS;
  const shutdown = async (signal: NodeJS.Signals) => {
    await supervisor.stop(signal, waitMs);
    // Every worker has exited: nothing more can settle, so the writer's last batch is the last.
    await billing.meter.close();
    await billing.notifier.stop();
    await store.close();
  };
  stopOnSignal(async (signal) => {
    log("info", "shutting down: workers finish their in-flight requests", { signal, workers });
    await shutdown(signal === "SIGINT" ? "SIGINT" : "SIGTERM");
    log("info", "stopped", { workers });
  });

  let url: string;
  try {
    url = await supervisor.start();
  } catch (error) {
    await shutdown("SIGTERM");
    throw error;
  }
  shedStartUp();
  if (bootstrapped) announceBootstrap(bootstrapped, url);
  log("info", "modelgate listening", {
    url,
    version: pkg.version,
    store: storeLabel(config.store.url),
    http2: config.server.http2,
    tls: config.server.tls_cert !== undefined,
    workers,
    pid: process.pid,
  });
}
