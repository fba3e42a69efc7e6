// What every serving process does around its work that needs no HTTP: bootstrapping a fresh store
// and announcing its secrets, shedding start-up's leftovers, and stopping once on SIGINT/SIGTERM.
// `serve` alone, the cluster primary (which loads no request path) and its workers use it; the
// HTTP side is serving.ts.
import { type Bootstrapped, bootstrapStore } from "../admin/bootstrap.ts";
import { formatUsd, parseUsd } from "../base/money.ts";
import type { Nanos } from "../base/types.ts";
import type { Config } from "../config/schema.ts";
import type { Store } from "../store/store.ts";
import { UsageError } from "./usage-error.ts";

/** What a first start created: the new secrets and the default account's opening balance. */
export type BootstrapResult = Bootstrapped & { balance: Nanos };

/** Creates the defaults on an empty store when bootstrap is enabled; the new secrets, if any. */
export async function bootstrapIfEnabled(config: Config, store: Store): Promise<BootstrapResult | undefined> {
  if (!config.bootstrap.enabled) return undefined;
  const balance = parseUsd(config.bootstrap.balance_usd);
  if (!balance.ok) throw new UsageError(`bootstrap.balance_usd: ${balance.message}`);
  const created = await bootstrapStore(store, balance.value);
  return created && { ...created, balance: balance.value };
}

/**
 * Called once a serving process is up, before its first request: a full collection frees
 * start-up's garbage (module evaluation, the config's parse, migrations, bootstrap), then
 * Bun.shrink() drops the code compiled for start-up, which runs once (the request path is compiled
 * as it runs; before the first request none of it is). ~20-30 ms once, nothing per request; a
 * single `serve`'s idle RSS -4 MB (docs/benchmarks.md, "Idle memory").
 */
export function shedStartUp(): void {
  Bun.gc(true);
  Bun.shrink();
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

export function announceBootstrap(secrets: BootstrapResult, url: string): void {
  const base = url.replace("://0.0.0.0:", "://127.0.0.1:").replace("://[::]:", "://[::1]:");
  process.stderr.write(
    `${[
      "",
      `First start on an empty store: created account \`default\` with ${formatUsd(secrets.balance)} USD (bootstrap.balance_usd),`,
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
