// A cluster worker: the gateway's whole request path in one of several processes sharing the port
// through reusePort. Billing lives in the primary: the meter is a RemoteMeter, the usage feed is
// filled by the primary while this worker has admin event readers, and the notifier's hooks are
// forwarded. The worker opens the store the primary has already migrated and bootstrapped, drains
// on SIGINT/SIGTERM like a single process, and exits at once if the primary goes away.

import { log, setLogFields } from "../base/log.ts";
import type { AccountId } from "../base/types.ts";
import type { UsageEvent } from "../billing/feed.ts";
import { UsageFeed } from "../billing/feed.ts";
import { PrimaryLink } from "../cluster/link.ts";
import { batched, type ToPrimary } from "../cluster/protocol.ts";
import { RemoteMeter } from "../cluster/remote-meter.ts";
import type { NotificationsConfig } from "../config/admin.ts";
import type { Config } from "../config/schema.ts";
import { startGateway } from "../gateway.ts";
import { Notifier } from "../notify/notifier.ts";
import { sqlitePathOf } from "../store/open.ts";
import { openSqliteStore } from "../store/sqlite/store.ts";
import type { Store } from "../store/store.ts";
import { shedStartUp, stopOnSignal } from "./lifecycle.ts";
import { drainAndStop, serveHttp } from "./serving.ts";
import { UsageError } from "./usage-error.ts";

/** A feed the primary fills: it asks for events when its first reader comes and stops at the last. */
class RelayedFeed extends UsageFeed {
  readonly #demand: (on: boolean) => void;

  constructor(demand: (on: boolean) => void) {
    super();
    this.#demand = demand;
  }

  override subscribe(listener: (event: UsageEvent) => void): () => void {
    const unsubscribe = super.subscribe(listener);
    if (this.subscribers === 1) this.#demand(true);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      unsubscribe();
      if (this.subscribers === 0) this.#demand(false);
    };
  }
}

/** Announcements are sent from here; balance checks after a credit are the primary's. */
class ForwardingNotifier extends Notifier {
  readonly #link: PrimaryLink;

  constructor(store: Store, config: NotificationsConfig, link: PrimaryLink) {
    super(store, config);
    this.#link = link;
  }

  override balanceChanged(accountId: AccountId): void {
    this.#link.post({ t: "balance-changed", accountId });
  }
}

/** This worker's number and the port the primary chose, from the variables the primary set. */
function role(env: NodeJS.ProcessEnv): { index: number; port: number } {
  const index = Number(env.MODELGATE_WORKER);
  const port = Number(env.MODELGATE_WORKER_PORT);
  if (
    !Number.isInteger(index) ||
    index < 1 ||
    !Number.isInteger(port) ||
    typeof process.send !== "function"
  ) {
    throw new UsageError(
      "MODELGATE_WORKER and MODELGATE_WORKER_PORT are set only by `modelgate serve --workers N` on its own worker processes; unset them",
    );
  }
  return { index, port };
}

/** The listen address with the primary's port (it resolves port 0 once for every worker). */
function withPort(config: Config, port: number): Config {
  const at = config.server.listen.lastIndexOf(":");
  return { ...config, server: { ...config.server, listen: `${config.server.listen.slice(0, at)}:${port}` } };
}

export async function runWorker(base: Config): Promise<void> {
  const { index, port } = role(process.env);
  const config = withPort(base, port);
  setLogFields({ worker: index });
  const link = new PrimaryLink(batched<ToPrimary>((messages) => process.send?.(messages)));
  process.on("message", (message) => link.receive(message));
  process.on("disconnect", () => {
    link.lost();
    log("error", "the cluster primary is gone; exiting without draining (nothing could be settled)");
    process.exit(1);
  });

  const store = openSqliteStore(sqlitePathOf(config.store.url));
  const feed = new RelayedFeed((on) => link.post({ t: "feed", on }));
  link.onEvent = (event) => feed.publish(event);
  const notifier = new ForwardingNotifier(store, config.admin.notifications, link);
  const gateway = await startGateway(config, store, {
    billing: { meter: new RemoteMeter(link), feed, notifier },
    worker: `${index} ${process.pid}`,
  });
  gateway.keys.onRefused = (refusal) => link.post({ t: "key-refused", refusal });
  const listener = serveHttp(config, gateway, { reusePort: true });
  shedStartUp();
  link.post({ t: "ready", url: listener.url });
  stopOnSignal((signal) => drainAndStop(config, listener, gateway, signal));
}
