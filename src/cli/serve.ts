// `modelgate serve`: opens the store, bootstraps a fresh install, listens, and drains on SIGINT/SIGTERM.
// With server.workers above 1 this process becomes the cluster primary and the same command,
// started again by it, a worker (src/cluster/, docs/workers.md).

import { log, setLogFormat, setLogLevel } from "../base/log.ts";
import { loadConfig, type SettingFlag } from "../config/load.ts";
import { configWarnings } from "../config/warnings.ts";
import { startGateway, VERSION } from "../gateway.ts";
import { setAccessLog } from "../http/access-log.ts";
import { openStore, storeLabel } from "../store/open.ts";
import { startTimeline } from "../telemetry/timeline.ts";
import { type Options, parse } from "./flags.ts";
import { announceBootstrap, bootstrapIfEnabled, shedStartUp, stopOnSignal } from "./lifecycle.ts";
import { drainAndStop, serveHttp } from "./serving.ts";
import { UsageError } from "./usage-error.ts";

export const USAGE = `usage: modelgate serve [options]
  --config FILE              the TOML configuration (or MODELGATE_CONFIG)
  --listen HOST:PORT         where to listen (MODELGATE_LISTEN; default 127.0.0.1:8080)
  --db URL                   sqlite://PATH or postgres://USER@HOST:PORT/DB (MODELGATE_DB; default sqlite://modelgate.db)
  --journal PATH             the usage journal (MODELGATE_JOURNAL; default beside the SQLite file)
  --redis-url URL            share limits with other nodes through Redis (MODELGATE_REDIS_URL)
  --redis-prefix TEXT        the key prefix on Redis (MODELGATE_REDIS_PREFIX)
  --tls-cert FILE --tls-key FILE   serve HTTPS (MODELGATE_TLS_CERT, MODELGATE_TLS_KEY)
  --trusted-proxy CIDR       a proxy whose X-Forwarded-For is believed; repeatable (MODELGATE_TRUSTED_PROXIES)
  --shutdown-deadline S      seconds a drain waits for requests in flight (MODELGATE_SHUTDOWN_DEADLINE; default 30)
  --workers N                worker processes sharing the port (MODELGATE_WORKERS; default 1)
  --log-format auto|text|json (MODELGATE_LOG_FORMAT)   --log-level debug|info|warn|error (MODELGATE_LOG_LEVEL)
  --no-bootstrap             do not create the first account, key and admin token on an empty store
  --seed N                   the built-in simulator's seed (MODELGATE_SIM_SEED)
  --otlp-endpoint URL        export traces over OTLP/HTTP (MODELGATE_OTLP_ENDPOINT)
  --otlp-sampling-ratio R    the share of requests traced, 0..1 (MODELGATE_OTLP_SAMPLING_RATIO)
A flag wins over its variable, which wins over the file.`;

/** `--config` and every flag of the settings table (src/config/load.ts): tsc names one left out. */
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
  "stage-trace": { type: "string" },
  "no-bootstrap": { type: "boolean" },
  seed: { type: "string" },
  "otlp-endpoint": { type: "string" },
  "otlp-sampling-ratio": { type: "string" },
} as const satisfies Options & Record<SettingFlag | "config", Options[string]>;

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
  // Before the gateway starts: its timers are created through the timeline's wrappers.
  if (config.server.stage_trace !== undefined) startTimeline(config.server.stage_trace);

  const store = await openStore(config.store.url, config.store.journal, config.store.pool_size);
  await store.claimNode?.(config.redis.url !== undefined);
  const bootstrapped = await bootstrapIfEnabled(config, store);
  const gateway = await startGateway(config, store);
  const listener = serveHttp(config, gateway);
  // Before the line that tells a supervisor (or a test) it may send signals: a SIGTERM sent as
  // soon as the line is read must find the handler (without it the process dies undrained, 143).
  stopOnSignal((signal) => drainAndStop(config, listener, gateway, signal));
  shedStartUp();
  if (bootstrapped) announceBootstrap(bootstrapped, listener.url);
  log("info", "modelgate listening", {
    url: listener.url,
    version: VERSION,
    store: storeLabel(config.store.url),
    limiter: config.redis.url ? `redis, prefix ${config.redis.prefix}` : "memory",
    http2: config.server.http2,
    tls: config.server.tls_cert !== undefined,
  });
}
