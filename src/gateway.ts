// The running gateway's shared state, built once at start and handed to every handler.

import pkg from "../package.json";
import { KeyCache } from "./auth/keys.ts";
import { CidrList } from "./base/ip.ts";
import { LongLived } from "./base/long-lived.ts";
import type { Meter } from "./billing/contract.ts";
import type { UsageFeed } from "./billing/feed.ts";
import { type Billing, startBilling } from "./billing/start.ts";
import { openResponseCache, type ResponseCache } from "./cache/cache.ts";
import { AliasTable } from "./catalog/aliases.ts";
import type { Config } from "./config/schema.ts";
import { NO_LIMITER_HEALTH } from "./limits/limiter.ts";
import { TrafficMetrics } from "./metrics/traffic.ts";
import type { Notifier } from "./notify/notifier.ts";
import type { Store } from "./store/store.ts";
import { openTracer } from "./telemetry/open.ts";
import type { Tracer } from "./telemetry/span.ts";
import { ChannelTable } from "./upstream/channels.ts";

export const VERSION: string = pkg.version;

export interface Gateway {
  config: Config;
  store: Store;
  keys: KeyCache;
  /** Peers whose X-Forwarded-For is believed. */
  trustedProxies: CidrList;
  /** Which upstream channels serve which model. */
  channels: ChannelTable;
  /** Client-facing model aliases (`[aliases]`), resolved at start. */
  aliases: AliasTable;
  /** The exact response cache (`[cache]`); holds nothing while no group or key turns it on. */
  cache: ResponseCache;
  /** Admission and settlement of every billable request. */
  meter: Meter;
  /** Settled requests, live, for the admin feed and notifications. */
  feed: UsageFeed;
  /** Balance, daily-cap and key security notifications; announcements. */
  notifier: Notifier;
  /** This process's place in a cluster (`N pid`, see src/cluster/); undefined when serving alone. */
  worker: string | undefined;
  /** Tokens, cost, attempts, errors and refusals for /metrics (src/metrics/traffic.ts). */
  traffic: TrafficMetrics;
  /** Request traces; undefined when `[telemetry]` is off (nothing of OpenTelemetry loaded). */
  tracer: Tracer | undefined;
  /** Feeds that never end on their own (the admin event stream), ended when a drain starts. */
  longLived: LongLived;
}

export interface GatewayOptions {
  /** Billing kept elsewhere (a cluster worker's remote meter); by default the real one, here. */
  billing?: Billing;
  worker?: string;
}

export async function startGateway(
  config: Config,
  store: Store,
  options: GatewayOptions = {},
): Promise<Gateway> {
  const billing = options.billing ?? (await startBilling(config, store));
  // Last-used times are written by the store thread too, when billing runs one.
  const thread = billing.thread;
  const keys = new KeyCache(store, thread ? { touch: (lastUsed) => thread.touchKeys(lastUsed) } : {});
  await keys.start();
  if (!options.billing) billing.notifier.start(billing.feed, keys);
  const channels = new ChannelTable(config);
  const meter = billing.meter;
  const traffic = new TrafficMetrics(config.metrics.max_key_labels, {
    circuits: () => channels.all().map((c) => ({ channel: c.name, state: c.circuit.snapshot().state })),
    journalBacklog: () => meter.backlog?.() ?? 0,
    limiter: () => meter.limiterHealth?.() ?? NO_LIMITER_HEALTH,
  });
  billing.feed.subscribe((event) => traffic.settled(event));
  return {
    config,
    store,
    keys,
    trustedProxies: new CidrList(config.server.trusted_proxies),
    channels,
    aliases: new AliasTable(config.aliases),
    cache: await openResponseCache(config),
    meter: billing.meter,
    feed: billing.feed,
    notifier: billing.notifier,
    worker: options.worker,
    traffic,
    tracer: await openTracer(config.telemetry, VERSION, billing.feed),
    longLived: new LongLived(),
  };
}

export async function stopGateway(gateway: Gateway): Promise<void> {
  await gateway.keys.stop();
  await gateway.meter.close?.();
  await gateway.cache.close();
  await gateway.notifier.stop();
  await gateway.store.close();
  await gateway.tracer?.shutdown();
}
