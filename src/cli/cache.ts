// `modelgate cache purge [--account NAME]`: deletes the response cache's stored answers (all, or
// those stored in one account's scope) where the configuration keeps them — the SQLite store's
// file, or Redis when `[redis] url` is set — with no gateway running. Audited like other changes.
import { openCacheBackend, ResponseCache } from "../cache/cache.ts";
import { parse } from "./flags.ts";
import { configFrom, openStoreCaughtUp, STORE_FLAGS } from "./open-store.ts";
import { UsageError } from "./usage-error.ts";

export const USAGE = `usage:
  modelgate cache purge [--account NAME]   deletes stored answers (all, or one account's)
common: --db URL (sqlite://PATH or postgres://USER@HOST:PORT/DB) | --config FILE (its [redis] and [cache])`;

const FLAGS = { ...STORE_FLAGS, account: { type: "string" } } as const;

export async function cacheCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub !== "purge") throw new UsageError(USAGE);
  const { values, positionals } = parse(rest, FLAGS, "cache purge");
  if (positionals.length > 0) throw new UsageError(USAGE);
  const config = configFrom(values);
  const store = await openStoreCaughtUp(config);
  try {
    let scope: string | undefined;
    if (values.account !== undefined) {
      const account = (await store.listAccounts()).find((a) => a.name === values.account);
      if (account === undefined) throw new UsageError(`--account: no account named "${values.account}"`);
      scope = `account:${account.id}`;
    }
    const cache = new ResponseCache(config.cache, await openCacheBackend(config, true));
    try {
      const purged = await cache.purge(scope);
      await store.admin.audit(`cli:${process.env.USER ?? "unknown"}`, "cache.purge", values.account ?? "*", {
        purged,
      });
      if (values.json) console.log(JSON.stringify({ purged, account: values.account ?? null }));
      else console.log(`purged ${purged} stored answer${purged === 1 ? "" : "s"}`);
    } finally {
      await cache.close();
    }
  } finally {
    await store.close();
  }
}
