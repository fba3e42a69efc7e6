// The PostgreSQL twin of schema.ts, derived from it: schema.ts stays the one definition of every
// table, and each SQLite table becomes a pg-core table with the same names, columns, defaults,
// uniques, indexes and foreign keys. Integers become bigint (nanos and epoch milliseconds outgrow
// 32 bits), the autoincrement key a bigserial, JSON text stays JSON text, booleans booleans, and the
// `now` default PostgreSQL's epoch milliseconds. drizzle-kit reads this file for migrations/pg/.
import { type ColumnBaseConfig, type ColumnDataType, is, SQL, sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  boolean,
  customType,
  getTableConfig as getPgTableConfig,
  index,
  type PgColumn,
  type PgColumnBuilderBase,
  type PgTableWithColumns,
  pgTable,
  text,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { getTableConfig, type SQLiteColumn, type SQLiteTable } from "drizzle-orm/sqlite-core";
import * as sqlite from "./schema.ts";

/**
 * JSON kept as text, as in SQLite: drizzle-orm/bun-sql sends a jsonb parameter as a JSON string,
 * which PostgreSQL then stores as a jsonb *string* (measured); nothing queries inside these values.
 */
const jsonText = customType<{ data: unknown; driverData: string }>({
  dataType: () => "text",
  toDriver: (value) => JSON.stringify(value),
  fromDriver: (value) => JSON.parse(value),
});

const now = sql`((extract(epoch from clock_timestamp()) * 1000)::bigint)`;

/** The column of the twin: the SQLite column's TypeScript shape (data, nullability, defaults) on pg. */
type PgTwinColumn<C extends SQLiteColumn> = PgColumn<
  ColumnBaseConfig<ColumnDataType, string> & {
    name: C["_"]["name"];
    tableName: C["_"]["tableName"];
    dataType: C["_"]["dataType"];
    columnType: string;
    data: C["_"]["data"];
    driverParam: unknown;
    notNull: C["_"]["notNull"];
    hasDefault: C["_"]["hasDefault"];
    isPrimaryKey: C["_"]["isPrimaryKey"];
    isAutoincrement: C["_"]["isAutoincrement"];
    hasRuntimeDefault: C["_"]["hasRuntimeDefault"];
    enumValues: C["_"]["enumValues"];
    baseColumn: never;
    identity: undefined;
    generated: undefined;
  }
>;

type Columns<T extends SQLiteTable> = T["_"]["columns"];

export type PgTwin<T extends SQLiteTable> = PgTableWithColumns<{
  name: T["_"]["name"];
  schema: undefined;
  dialect: "pg";
  columns: {
    [K in keyof Columns<T>]: Columns<T>[K] extends SQLiteColumn ? PgTwinColumn<Columns<T>[K]> : never;
  };
}>;

/** Twins made so far by SQLite table name: foreign keys point at them. */
const twins = new Map<string, PgTableWithColumns<never>>();

/** The builder calls the twin makes, the same on every pg column type. */
interface Chain extends PgColumnBuilderBase {
  primaryKey(): Chain;
  notNull(): Chain;
  unique(name?: string): Chain;
  default(value: unknown): Chain;
  references(ref: () => PgColumn): Chain;
}

function columnOf(col: SQLiteColumn, table: string): Chain {
  const auto = "autoIncrement" in col && col.autoIncrement === true;
  const made =
    col.columnType === "SQLiteInteger" && col.primary && auto
      ? bigserial(col.name, { mode: "number" })
      : col.columnType === "SQLiteInteger"
        ? bigint(col.name, { mode: "number" })
        : col.columnType === "SQLiteTextJson"
          ? jsonText(col.name)
          : col.columnType === "SQLiteBoolean"
            ? boolean(col.name)
            : col.columnType === "SQLiteText"
              ? text(col.name)
              : undefined;
  if (made === undefined) {
    throw new Error(
      `schema-pg: column ${table}.${col.name} has type ${col.columnType}, which has no pg twin`,
    );
  }
  let builder = made as unknown as Chain;
  if (col.primary) builder = builder.primaryKey();
  if (col.notNull && !col.primary) builder = builder.notNull();
  if (col.isUnique) builder = builder.unique(col.uniqueName);
  if (col.hasDefault && col.default !== undefined) {
    if (is(col.default, SQL) && col.default !== sqlite.nowMs) {
      throw new Error(`schema-pg: ${table}.${col.name} has an SQL default with no pg twin; add one here`);
    }
    builder = builder.default(col.default === sqlite.nowMs ? now : col.default);
  }
  return builder;
}

/** The pg-core table of a SQLite table from schema.ts (columns under their TypeScript keys). */
function twin<T extends SQLiteTable>(table: T): PgTwin<T> {
  const config = getTableConfig(table);
  const keys = new Map<string, string>();
  for (const [key, value] of Object.entries(table)) {
    if (config.columns.includes(value as SQLiteColumn)) keys.set((value as SQLiteColumn).name, key);
  }
  const references = new Map<string, () => PgColumn>();
  for (const fk of config.foreignKeys) {
    const ref = fk.reference();
    const target = twins.get(getTableConfig(ref.foreignTable).name);
    const column = ref.columns[0];
    const foreign = ref.foreignColumns[0];
    if (target === undefined || column === undefined || foreign === undefined || ref.columns.length !== 1) {
      throw new Error(`schema-pg: ${config.name} references a table not twinned before it`);
    }
    const found = getPgTableConfig(target).columns.find((c) => c.name === foreign.name);
    if (found === undefined)
      throw new Error(`schema-pg: ${config.name} references a missing column ${foreign.name}`);
    references.set(column.name, () => found);
  }
  const columns: Record<string, PgColumnBuilderBase> = {};
  for (const col of config.columns) {
    const key = keys.get(col.name) ?? col.name;
    const builder = columnOf(col, config.name);
    const ref = references.get(col.name);
    columns[key] = ref === undefined ? builder : builder.references(ref);
  }
  const made = pgTable(config.name, columns, (t) =>
    config.indexes.map((ix) => {
      const names = ix.config.columns.map((c) => keys.get((c as SQLiteColumn).name) ?? "");
      const cols = names.map((name) => t[name] as PgColumn);
      const [first, ...rest] = cols;
      if (first === undefined) throw new Error(`schema-pg: index ${ix.config.name} has no column`);
      return (ix.config.unique ? uniqueIndex(ix.config.name) : index(ix.config.name)).on(first, ...rest);
    }),
  );
  twins.set(config.name, made as unknown as PgTableWithColumns<never>);
  return made as unknown as PgTwin<T>;
}

export const accounts = twin(sqlite.accounts);
export const groups = twin(sqlite.groups);
export const apiKeys = twin(sqlite.apiKeys);
export const ledger = twin(sqlite.ledger);
export const storeMeta = twin(sqlite.storeMeta);
export const usageRecords = twin(sqlite.usageRecords);
export const auditLog = twin(sqlite.auditLog);
export const adminTokens = twin(sqlite.adminTokens);
export const notificationChannels = twin(sqlite.notificationChannels);
export const notificationDeliveries = twin(sqlite.notificationDeliveries);
export const responseCache = twin(sqlite.responseCache);
