// The deployment's one real billing: the ledger meter (balances loaded, usage journal beside the
// SQLite file, usage committed by the store thread), the live usage feed and the notifier. A single process builds it beside its
// gateway; a cluster primary builds only this (src/cli/cluster-primary.ts), so it stays light.
import type { Config } from "../config/schema.ts";
import { openLimiter } from "../limits/open.ts";
import { calendarOf } from "../limits/periods.ts";
import { Notifier } from "../notify/notifier.ts";
import { usageJournalPath } from "../store/open.ts";
import type { Store } from "../store/store.ts";
import type { Meter } from "./contract.ts";
import { UsageFeed } from "./feed.ts";
import { LedgerMeter } from "./ledger.ts";
import { openStoreThread, type StoreThread } from "./store-thread.ts";

/** The billing side of a gateway: one per deployment, in the single process or in the cluster primary. */
export interface Billing {
  meter: Meter;
  feed: UsageFeed;
  notifier: Notifier;
  /** The thread that writes usage (and keys' last-used times) off the event loop, when there is one. */
  thread?: StoreThread | undefined;
}

/** The real billing: ledger meter (balances loaded), live feed, and a notifier not yet started. */
export async function startBilling(
  config: Config,
  store: Store,
): Promise<{ meter: LedgerMeter; feed: UsageFeed; notifier: Notifier; thread: StoreThread | undefined }> {
  const feed = new UsageFeed();
  // Nodes sharing a Redis show one another's requests on the admin event stream (closed at exit).
  if (config.redis.url) {
    const { RedisFeedRelay } = await import("../limits/redis-feed.ts");
    new RedisFeedRelay(feed, config.redis.url, config.redis.prefix);
  }
  const thread = openStoreThread(config.store.url, config.store.journal);
  const meter = new LedgerMeter({
    store,
    feed,
    billing: config.billing,
    journalPath: usageJournalPath(config.store.url, config.store.journal),
    limiter: await openLimiter(config),
    thread,
  });
  await meter.start();
  return {
    meter,
    feed,
    notifier: new Notifier(store, config.admin.notifications, {
      budgets: {
        calendar: calendarOf(config.billing.budgets),
        levels: config.billing.budgets.notify_at_percent,
      },
    }),
    thread,
  };
}
