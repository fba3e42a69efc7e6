// The one SQLite query shape for keys as operators see them (key joined with account and group
// names), shared by the main store and the admin sub-store.
import { eq } from "drizzle-orm";
import type { BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { accounts, apiKeys, groups } from "./schema.ts";
import { keyColumnsOf } from "./shapes.ts";

export const keyColumns = keyColumnsOf(apiKeys, accounts, groups);

/** Keys joined with their account and group names, ready for `.where`/`.orderBy`. */
export function selectKeys(db: BunSQLiteDatabase) {
  return db
    .select(keyColumns)
    .from(apiKeys)
    .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
    .innerJoin(groups, eq(groups.id, apiKeys.groupId))
    .$dynamic();
}
