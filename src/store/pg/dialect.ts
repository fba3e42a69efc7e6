// The PostgreSQL side of the queries written once for both stores (dialect.ts).
import { eq, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { Dialect, DialectSql, ToolCount } from "../dialect.ts";
import type { PgDb } from "./db.ts";
import { bumpRevision } from "./notify.ts";
import * as tables from "./schema.ts";

const { accounts, apiKeys, storeMeta } = tables;

const day = (seconds: SQL): SQL => sql`to_char(to_timestamp(${seconds}) at time zone 'UTC', 'YYYY-MM-DD')`;

/**
 * A tool's call count in the record's `tool_calls` JSON text. The key is a literal from the fixed
 * tool list: a bound parameter would leave `->>` ambiguous between its text and integer forms.
 */
const toolCount: ToolCount = (toolCalls, tool) =>
  sql`((${toolCalls})::jsonb ->> ${sql.raw(`'${tool}'`)})::bigint`;

const PG_SQL: DialectSql = {
  tables,
  credited: alias(storeMeta, "credited"),
  day,
  toolCount,
  // No rowid: creation time, then the id, decide.
  insertionOrder: (table) => [table.createdAt, table.id],
};

export function pgDialect(db: PgDb): Dialect {
  return {
    ...PG_SQL,
    db,
    patchKey: (id, set) =>
      db.transaction(async (tx) => {
        const key = eq(apiKeys.id, id);
        const [row] =
          Object.keys(set).length === 0
            ? await tx.select({ id: apiKeys.id }).from(apiKeys).where(key)
            : await tx.update(apiKeys).set(set).where(key).returning({ id: apiKeys.id });
        // The revision gateways poll and listen for: a changed key reaches every key cache.
        if (row !== undefined) await bumpRevision(tx);
        return row !== undefined;
      }),
    patchAccountBudgets: (name, budgets) =>
      db.transaction(async (tx) => {
        const [row] = await tx
          .update(accounts)
          .set({ budgets })
          .where(eq(accounts.name, name))
          .returning({ id: accounts.id });
        if (row !== undefined) await bumpRevision(tx);
        return row !== undefined;
      }),
  };
}
