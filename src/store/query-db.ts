// The part of Drizzle's query builder that the SQLite and the PostgreSQL database share, typed once.
// Both dialects build the same select/insert/update chains and resolve them when awaited; Drizzle
// types them per dialect, so a query written once over both would not compile. `QueryDb` states
// the common part, and each dialect's database is assigned to it without a cast: tsc checks that
// both still have every method used here (sqlite/dialect.ts, pg/dialect.ts). Rows are typed by
// Drizzle's own SelectResultFields, as its partial selects are.
//
// What differs stays in the dialect (dialect.ts): transactions, which are synchronous on SQLite,
// SQL functions, the insertion order, table aliases.
import type { Column, SQL, SQLWrapper, Table } from "drizzle-orm";
import type { SelectResultFields } from "drizzle-orm/query-builders/select.types";

/** The selection of a partial select: columns and SQL expressions by result field name. */
export type Selection = Record<string, Column | SQL | SQL.Aliased>;

export type Row<S extends Selection> = SelectResultFields<S>;

/**
 * A select, step by step as Drizzle allows it (each clause once, in SQL's order); awaiting any
 * step runs it. A left join does not change the row type: a selection that reads a left-joined
 * column types it as nullable itself (seedFieldsOf).
 */
export interface Limited<R> extends PromiseLike<R[]> {}
export interface Ordered<R> extends Limited<R> {
  limit(count: number): Limited<R>;
}
export interface Grouped<R> extends Ordered<R> {
  orderBy(...by: SQLWrapper[]): Ordered<R>;
}
export interface Filtered<R> extends Grouped<R> {
  groupBy(...by: SQLWrapper[]): Grouped<R>;
}
export interface Joined<R> extends Filtered<R> {
  where(condition: SQL | undefined): Filtered<R>;
}
export interface SelectFrom<R> extends Joined<R> {
  innerJoin(table: Table, on: SQL): SelectFrom<R>;
  leftJoin(table: Table, on: SQL): SelectFrom<R>;
}

/** Awaiting runs the statement; `returning` reads back the rows it wrote. */
export interface Written extends PromiseLike<unknown> {
  returning<S extends Selection>(fields: S): PromiseLike<Row<S>[]>;
}
export interface Updating {
  where(condition: SQL | undefined): Written;
}

export interface QueryDb {
  select<S extends Selection>(fields: S): { from(table: Table): SelectFrom<Row<S>> };
  insert<T extends Table>(table: T): { values(row: T["$inferInsert"]): Written };
  update<T extends Table>(table: T): { set(values: Partial<T["$inferInsert"]>): Updating };
}
