// `modelgate serve`: opens the store, bootstraps a fresh install, listens, and drains on SIGINT/SIGTERM.
// With server.workers above 1 this process becomes the cluster primary and the same command,
// started again by it, a worker (src/cluster/, docs/workers.md).
import { loadConfig } from "../config/load.ts";
import { configWarnings } from "../config/warnings.ts";
import { startGateway, VERSION } from "../gateway.ts";
import { setAccessLog } from "../http/access-log.ts";
import { log, setLogFormat, setLogLevel } from "../log.ts";
import { openStore, storeLabel } from "../store/open.ts";
import { parse, UsageError } from "./args.ts";
import { announceBootstrap, bootstrapIfEnabled, stopOnSignal } from "./lifecycle.ts";
import { drainAndStop, serveHttp } from "./serving.ts";

const FLAGS = {
  config: { type: "string" },
  listen: { type: "string" },
  db: { type: "string" },
  journal: { type: "string" },
  "db-pool-size": { type: "string" },
  "redis-url": { type: "string" },
  "redis-prefix": { type: "string" },
  "redis-timeout-ms": { type: "string" },
  "tls-cert": { type: "string" },
  "tls-key": { type: "string" },
  "trusted-proxy": { type: "string", multiple: true },
  "shutdown-deadline": { type: "string" },
  workers: { type: "string" },
  "log-format": { type: "string" },
  "log-level": { type: "string" },
  "no-bootstrap": { type: "boolean" },
  seed: { type: "string" },
  "otlp-endpoint": { type: "string" },
  "otlp-sampling-ratio": { type: "string" },
} as const;

export async function serveCommand(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, FLAGS, "serve");
  if (positionals.length > 0) throw new UsageError(`serve: unexpected argument "${positionals[0]}"`);
  const { config: file, ...flags } = values;
  const config = loadConfig({ file: file ?? process.env.MODELGATE_CONFIG, env: process.env, flags });
  setLogFormat(config.server.log_format);
  setLogLevel(config.server.log_level);
  setAccessLog(config.server.access_log);
  if (process.env.MODELGATE_WORKER !== undefined)
    return (await import("./cluster-worker.ts")).runWorker(config);
  for (const warning of configWarnings(config, process.env)) log("warn", "config", { problem: warning });
  if (config.server.workers > 1) return (await import("./cluster-primary.ts")).runPrimary(config);

  const store = await openStore(config.store.url, config.store.journal, config.store.pool_size);
  await store.claimNode?.(config.redis.url !== undefined);
  const bootstrapped = await bootstrapIfEnabled(config, store);
  const gateway = await startGateway(config, store);
  const listener = serveHttp(config, gateway);
  if (bootstrapped) announceBootstrap(bootstrapped, listener.url);
  log("info", "modelgate listening", {
    url: listener.url,
    version: VERSION,
    store: storeLabel(config.store.url),
    limiter: config.redis.url ? `redis, prefix ${config.redis.prefix}` : "memory",
    http2: config.server.http2,
    tls: config.server.tls_cert !== undefined,
  });
  stopOnSignal((signal) => drainAndStop(config, listener, gateway, signal));
}
