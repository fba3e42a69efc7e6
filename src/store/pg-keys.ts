// The PostgreSQL twin of sqlite-keys.ts: keys joined with their account and group names, and the
// database handle type every PostgreSQL sub-store takes (the pool or a transaction on it).
import { eq } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { accounts, apiKeys, groups } from "./schema-pg.ts";
import { keyColumnsOf } from "./shapes.ts";

/** The Drizzle database of the PostgreSQL store, or a transaction on it. */
export type PgDb = PgDatabase<PgQueryResultHKT>;

export const pgKeyColumns = keyColumnsOf(apiKeys, accounts, groups);

/** Keys joined with their account and group names, ready for `.where`/`.orderBy`. */
export function selectPgKeys(db: PgDb) {
  return db
    .select(pgKeyColumns)
    .from(apiKeys)
    .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
    .innerJoin(groups, eq(groups.id, apiKeys.groupId))
    .$dynamic();
}

/** True when `error` is PostgreSQL's unique violation (SQLSTATE 23505). */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { errno?: unknown; code?: unknown; cause?: unknown } | null;
  if (e === null || typeof e !== "object") return false;
  if (e.errno === "23505" || e.code === "23505") return true;
  return e.cause !== undefined && isUniqueViolation(e.cause);
}
