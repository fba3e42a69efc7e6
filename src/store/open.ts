// Opens the store named by a database URL: `sqlite://PATH` now, `postgres://…` in the cluster issue.
import { resolve } from "node:path";
import { openSqliteStore } from "./sqlite.ts";
import type { Store } from "./store.ts";

export const DEFAULT_DB_URL = "sqlite://modelgate.db";

/** Parses a database URL into the path of a SQLite file; throws a message naming the accepted forms. */
export function sqlitePathOf(url: string): string {
  if (url === "sqlite://:memory:") return ":memory:";
  if (!url.startsWith("sqlite://") || url.length === "sqlite://".length) {
    throw new Error(
      `database URL "${url}" is not supported: use sqlite://PATH (e.g. sqlite://modelgate.db or sqlite:///var/lib/modelgate/db.sqlite)`,
    );
  }
  return resolve(url.slice("sqlite://".length));
}

/** Opens and migrates the store at `url`. */
export async function openStore(url: string): Promise<Store> {
  const store = openSqliteStore(sqlitePathOf(url));
  await store.migrate();
  return store;
}

/** The usage journal next to a SQLite file (src/billing/journal.ts); none for an in-memory store. */
export function usageJournalPath(url: string): string | undefined {
  const path = sqlitePathOf(url);
  return path === ":memory:" ? undefined : `${path}-usage.log`;
}
