// Opens the store named by a database URL: `sqlite://PATH` (one node's file) or
// `postgres://USER[:PASSWORD]@HOST[:PORT]/DB` (the shared store of a cluster, docs/cluster.md),
// and says where the node's usage journal lives for each. Each dialect's module is imported only
// when its store is opened: a process (and its store thread) never loads the other's code.
import { basename, resolve } from "node:path";
import { type Store, StoreError } from "./store.ts";

export const DEFAULT_DB_URL = "sqlite://modelgate.db";

const FORMS =
  "use sqlite://PATH (e.g. sqlite://modelgate.db or sqlite:///var/lib/modelgate/db.sqlite) or postgres://USER@HOST:PORT/DB";

/** Parses a database URL into the path of a SQLite file; throws a message naming the accepted forms. */
export function sqlitePathOf(url: string): string {
  if (url === "sqlite://:memory:") return ":memory:";
  if (!url.startsWith("sqlite://") || url.length === "sqlite://".length) {
    throw new StoreError("invalid_url", `database URL "${url}" is not supported: ${FORMS}`);
  }
  return resolve(url.slice("sqlite://".length));
}

/** True for a PostgreSQL URL (postgres:// or postgresql://). */
export function isPostgresUrl(url: string): boolean {
  return url.startsWith("postgres://") || url.startsWith("postgresql://");
}

/** The database name of a PostgreSQL URL; throws a message naming the fix when it has no host or name. */
export function postgresDatabaseOf(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new StoreError("invalid_url", `database URL "${storeLabel(url)}" is not a valid URL: ${FORMS}`);
  }
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ""));
  if (parsed.hostname === "" || database === "" || database.includes("/")) {
    throw new StoreError(
      "invalid_url",
      `database URL "${storeLabel(url)}" names no host or database: use postgres://USER@HOST:PORT/DB`,
    );
  }
  return database;
}

/**
 * Opens and migrates the store at `url`. `journal` is the configured usage-journal path
 * (store.journal), which names this node's journal sequence in a shared PostgreSQL store;
 * `poolSize` bounds a PostgreSQL store's pool (store.pool_size).
 */
export async function openStore(url: string, journal?: string, poolSize?: number): Promise<Store> {
  if (!isPostgresUrl(url)) {
    const path = sqlitePathOf(url);
    const store = (await import("./sqlite/store.ts")).openSqliteStore(path);
    await store.migrate();
    return store;
  }
  // Checked before anything connects: a URL without a database must not migrate the server's default one.
  postgresDatabaseOf(url);
  const { openPgStore } = await import("./pg/store.ts");
  const { journalSeqName } = await import("./pg/usage.ts");
  const store = openPgStore(url, {
    journalSeqName: () => journalSeqName(usageJournalPath(url, journal)),
    maxConnections: poolSize,
  });
  try {
    await store.migrate();
  } catch (error) {
    await store.close().catch(() => undefined);
    const cause = error instanceof Error ? error.message : String(error);
    throw new StoreError(
      "unavailable",
      `cannot open the PostgreSQL store ${storeLabel(url)}: ${cause}; check store.url (--db, MODELGATE_DB), that the server is up, and that the database exists (createdb NAME)`,
    );
  }
  return store;
}

/**
 * The node's usage journal (src/billing/journal.ts): `journal` when configured; beside a SQLite
 * file otherwise; for PostgreSQL `modelgate-DB-usage.log` in the working directory (each node
 * keeps its own: the journal is what survives a database outage); none for an in-memory store.
 */
export function usageJournalPath(url: string, journal?: string): string | undefined {
  if (journal !== undefined && journal !== "") return resolve(journal);
  if (isPostgresUrl(url)) return resolve(`modelgate-${basename(postgresDatabaseOf(url))}-usage.log`);
  const path = sqlitePathOf(url);
  return path === ":memory:" ? undefined : `${path}-usage.log`;
}

/** The URL as logs show it: a PostgreSQL password is replaced by `***`. */
export function storeLabel(url: string): string {
  if (!isPostgresUrl(url)) return url;
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    return parsed.toString();
  } catch {
    // Unparseable (e.g. a password with an unescaped `#`): hide everything between the scheme and
    // the last `@`, where a password would be; a password may itself hold an `@`.
    const at = url.lastIndexOf("@");
    const scheme = url.indexOf("://") + 3;
    return at > scheme ? `${url.slice(0, scheme)}***${url.slice(at)}` : url;
  }
}
