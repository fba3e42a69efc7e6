// The database handle every PostgreSQL sub-store takes, and how to recognise its unique violation.
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";

/** The Drizzle database of the PostgreSQL store, or a transaction on it. */
export type PgDb = PgDatabase<PgQueryResultHKT>;

/** True when `error` is PostgreSQL's unique violation (SQLSTATE 23505). */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { errno?: unknown; code?: unknown; cause?: unknown } | null;
  if (e === null || typeof e !== "object") return false;
  if (e.errno === "23505" || e.code === "23505") return true;
  return e.cause !== undefined && isUniqueViolation(e.cause);
}
