// The one SQLite query shape for keys as operators see them (key joined with account and group
// names), shared by the main store and the admin sub-store.
import { eq } from "drizzle-orm";
import type { BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { nanos } from "../base/money.ts";
import type { KeyId } from "../types.ts";
import { accounts, apiKeys, groups } from "./schema.ts";
import { keyColumnsOf } from "./shapes.ts";
import type { KeyRecord } from "./store.ts";

export const keyColumns = keyColumnsOf(apiKeys, accounts, groups);

type KeyRow = Omit<KeyRecord, "id" | "dailyCap"> & { id: string; dailyCap: number | null };

export function toKeyRecord(row: KeyRow): KeyRecord {
  return {
    ...row,
    id: row.id as KeyId,
    dailyCap: row.dailyCap === null ? null : nanos(row.dailyCap),
  };
}

/** Keys joined with their account and group names, ready for `.where`/`.orderBy`. */
export function selectKeys(db: BunSQLiteDatabase) {
  return db
    .select(keyColumns)
    .from(apiKeys)
    .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
    .innerJoin(groups, eq(groups.id, apiKeys.groupId))
    .$dynamic();
}
