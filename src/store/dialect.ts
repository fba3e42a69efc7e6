// What one store dialect gives the queries written once for both (admin-store.ts, drizzle-store.ts,
// usage/reads.ts, key-rows.ts, admin-rows.ts, usage/totals.ts, usage/seeds.ts): its database as the shared QueryDb (query-db.ts), its tables, the SQL
// that differs between SQLite and PostgreSQL, and the one key write that needs a transaction.
// sqlite/dialect.ts and pg/dialect.ts build it. Transactions stay in the dialect because SQLite's
// are synchronous: a body that awaited between statements would let other queries on the
// connection run inside it.
import type { Column, SQL, SQLWrapper, Table } from "drizzle-orm";
import type { KeyId } from "../base/types.ts";
import type { PricedTool } from "../wire/usage-counts.ts";
import type * as pg from "./pg/schema.ts";
import type { QueryDb } from "./query-db.ts";
import type * as sqlite from "./sqlite/schema.ts";

type TableName = keyof typeof sqlite & keyof typeof pg;

/** A dialect's tables: sqlite/schema.ts's or pg/schema.ts's, which have the same columns. */
export type Tables = { [K in TableName]: (typeof sqlite)[K] | (typeof pg)[K] };

/** A dialect's SQL for one tool's call count in a record's `tool_calls` JSON (NULL when absent). */
export type ToolCount = (toolCalls: SQLWrapper, tool: PricedTool) => SQL;

/** The part of a dialect that needs no connection: its tables and its own SQL. */
export interface DialectSql {
  readonly tables: Tables;
  /** store_meta aliased `credited`: seedFigures joins each account to its credit total row. */
  readonly credited: Table & { name: Column; value: Column };
  /** YYYY-MM-DD of epoch seconds, in UTC. */
  readonly day: (seconds: SQL) => SQL;
  readonly toolCount: ToolCount;
  /** Orders rows as they were inserted, oldest first: ids are random, times tie within a millisecond. */
  readonly insertionOrder: (table: Tables["adminTokens"] | Tables["notificationDeliveries"]) => SQLWrapper[];
}

export type KeyColumnPatch = Partial<Tables["apiKeys"]["$inferInsert"]>;

export interface Dialect extends DialectSql {
  readonly db: QueryDb;
  /**
   * Sets a key's columns and moves the revision gateways watch, in one transaction; false, and
   * nothing written, when no key has the id. An empty patch only moves the revision.
   */
  readonly patchKey: (id: KeyId, set: KeyColumnPatch) => Promise<boolean>;
  /** Sets an account's budgets and moves the revision, in one transaction; false when no account has the name. */
  readonly patchAccountBudgets: (name: string, budgets: sqlite.Budgets | null) => Promise<boolean>;
}
