// The SQLite side of the queries written once for both stores (dialect.ts), and the SQLite pieces
// the SQLite store's own modules share: how a write transaction begins, prepared store_meta reads.
import { eq, type SQL, sql } from "drizzle-orm";
import type { BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { alias } from "drizzle-orm/sqlite-core";
import type { Dialect, DialectSql, ToolCount } from "../dialect.ts";
import { REVISION_META } from "../usage/record.ts";
import * as tables from "./schema.ts";

const { accounts, apiKeys, storeMeta } = tables;

/**
 * How every SQLite write transaction begins: IMMEDIATE takes the write lock at BEGIN, so it waits
 * (busy_timeout) for another connection's write. A DEFERRED one that read first and then writes
 * fails at once with SQLITE_BUSY when another connection committed in between — the gateway, its
 * store thread and the CLI all write the same file.
 */
export const WRITE = { behavior: "immediate" } as const;

/** The select of a store_meta row's value, prepared once (`.get()?.value`). */
export function metaQuery(db: BunSQLiteDatabase, name: string) {
  return db.select({ value: storeMeta.value }).from(storeMeta).where(eq(storeMeta.name, name)).prepare();
}

/** The value of a store_meta row (0 when there is none). */
export function metaValue(db: BunSQLiteDatabase, name: string): number {
  return metaQuery(db, name).get()?.value ?? 0;
}

/** Moves the revision gateways poll, inside the caller's transaction. */
export function bumpSqliteRevision(tx: BunSQLiteDatabase): void {
  tx.update(storeMeta)
    .set({ value: sql`${storeMeta.value} + 1` })
    .where(eq(storeMeta.name, REVISION_META))
    .run();
}

const day = (seconds: SQL): SQL => sql`strftime('%Y-%m-%d', ${seconds}, 'unixepoch')`;

/** A tool's call count in the record's `tool_calls` JSON text. */
const toolCount: ToolCount = (toolCalls, tool) => sql`json_extract(${toolCalls}, ${`$.${tool}`})`;

const SQLITE_SQL: DialectSql = {
  tables,
  credited: alias(storeMeta, "credited"),
  day,
  toolCount,
  insertionOrder: () => [sql`rowid`],
};

export function sqliteDialect(db: BunSQLiteDatabase): Dialect {
  return {
    ...SQLITE_SQL,
    db,
    patchKey: async (id, set) =>
      db.transaction((tx) => {
        const key = eq(apiKeys.id, id);
        const row =
          Object.keys(set).length === 0
            ? tx.select({ id: apiKeys.id }).from(apiKeys).where(key).get()
            : tx.update(apiKeys).set(set).where(key).returning({ id: apiKeys.id }).get();
        if (row !== undefined) bumpSqliteRevision(tx as unknown as BunSQLiteDatabase);
        return row !== undefined;
      }, WRITE),
    patchAccountBudgets: async (name, budgets) =>
      db.transaction((tx) => {
        const row = tx
          .update(accounts)
          .set({ budgets })
          .where(eq(accounts.name, name))
          .returning({ id: accounts.id })
          .get();
        if (row !== undefined) bumpSqliteRevision(tx as unknown as BunSQLiteDatabase);
        return row !== undefined;
      }, WRITE),
  };
}
