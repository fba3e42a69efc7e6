// The two dialect schemas side by side (src/store/sqlite/schema.ts for SQLite, src/store/pg/schema.ts for
// PostgreSQL) describe the same tables: the same exports, table, column, unique, index and
// foreign-key names, nullability and defaults, and (checked by tsc below) the same row types, so
// the queries written once over the dialect read and write either. A column added to one schema
// only fails here.
import { expect, test } from "bun:test";
import { getTableName } from "drizzle-orm";
import { PgTable, getTableConfig as pgConfig } from "drizzle-orm/pg-core";
import { SQLiteTable, getTableConfig as sqliteConfig } from "drizzle-orm/sqlite-core";
import * as pg from "../../src/store/pg/schema.ts";
import * as sqlite from "../../src/store/sqlite/schema.ts";

type TableName = keyof typeof pg;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Each table's selected and inserted rows are the same type on both dialects (tsc checks). */
const rowsAgree: {
  [K in TableName]: [
    Same<(typeof sqlite)[K]["$inferSelect"], (typeof pg)[K]["$inferSelect"]>,
    Same<(typeof sqlite)[K]["$inferInsert"], (typeof pg)[K]["$inferInsert"]>,
  ];
} = {
  accounts: [true, true],
  groups: [true, true],
  apiKeys: [true, true],
  ledger: [true, true],
  storeMeta: [true, true],
  usageRecords: [true, true],
  auditLog: [true, true],
  adminTokens: [true, true],
  notificationChannels: [true, true],
  notificationDeliveries: [true, true],
  responseCache: [true, true],
};

/** A table as drizzle-kit sees it, in words both dialects share. */
function shape(c: ReturnType<typeof sqliteConfig> | ReturnType<typeof pgConfig>): string[] {
  const columns = c.columns.map((col) => {
    const nullable = col.notNull || col.primary ? "not null" : "null";
    const unique = col.isUnique ? ` unique ${col.uniqueName}` : "";
    return `column ${col.name} ${nullable}${col.primary ? " primary" : ""}${unique}${col.hasDefault ? " default" : ""}`;
  });
  const indexes = c.indexes.map((ix) => {
    const on = ix.config.columns.map((col) => ("name" in col ? col.name : "(expression)"));
    return `index ${ix.config.name}${ix.config.unique ? " unique" : ""} on ${on.join(",")}`;
  });
  const foreignKeys = c.foreignKeys.map((fk) => {
    const ref = fk.reference();
    const to = ref.foreignColumns.map((col) => col.name).join(",");
    return `foreign key ${ref.columns.map((col) => col.name).join(",")} -> ${getTableName(ref.foreignTable)}.${to}`;
  });
  return [`table ${c.name}`, ...columns, ...indexes, ...foreignKeys];
}

test("both schemas export the same tables, each with the same columns, uniques, defaults, indexes and foreign keys", () => {
  const sqliteTables = Object.entries(sqlite).filter(([, t]) => t instanceof SQLiteTable);
  expect(Object.keys(pg).sort()).toEqual(sqliteTables.map(([name]) => name).sort());
  expect(Object.keys(rowsAgree).sort()).toEqual(Object.keys(pg).sort());
  for (const [name, table] of sqliteTables) {
    const twin = (pg as Record<string, unknown>)[name];
    if (!(table instanceof SQLiteTable) || !(twin instanceof PgTable))
      throw new Error(`${name} is not a table`);
    expect(shape(pgConfig(twin))).toEqual(shape(sqliteConfig(table)));
  }
});
