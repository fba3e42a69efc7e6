// Multi-row inserts on PostgreSQL sent as ONE parameter: the rows travel as a JSON array that
// PostgreSQL expands with json_to_recordset, so the statement's text is the same for any number of
// rows and neither Drizzle nor the driver handles a placeholder per value. Drizzle's VALUES builder
// spent most of the store thread's CPU of a settlement batch (30 placeholders a usage row; see
// docs/cluster.md, Cost). Values go through each column's own driver mapping (JSON kept as text is
// stringified as Drizzle stores it), so the rows stored are the ones Drizzle's insert stored.
import { type Column, getTableColumns, getTableName, is, SQL, sql } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";

/**
 * A column's type as the rows are read from the JSON. Integers are read as double precision and
 * cast by the insert, as Bun's client sends a JS number (a float8 parameter): a time taken from
 * Redis's clock as seen by a node has a fraction, which bigint's input refuses and the cast rounds.
 */
function jsonType(column: Column): string {
  const type = column.getSQLType();
  return type === "bigint" ? "double precision" : type;
}

export class JsonRows<T extends PgTable> {
  readonly #table: T;
  /** Every column but the serial key: property name and column. */
  readonly #columns: [string, Column][];
  readonly #names: SQL;
  readonly #types: SQL;

  constructor(table: T) {
    this.#table = table;
    this.#columns = Object.entries(getTableColumns(table)).filter(([, column]) => !column.primary);
    this.#names = sql.join(
      this.#columns.map(([, column]) => sql.identifier(column.name)),
      sql`, `,
    );
    this.#types = sql.join(
      this.#columns.map(([, column]) => sql`${sql.identifier(column.name)} ${sql.raw(jsonType(column))}`),
      sql`, `,
    );
  }

  /**
   * `INSERT INTO table (columns) SELECT columns FROM json_to_recordset($1)`. A value left out takes
   * the column's default as Drizzle's insert would: its plain default, or NULL when it may be null;
   * a column whose default is SQL (created_at) must be given.
   */
  insert(rows: readonly T["$inferInsert"][]): SQL {
    // Sent as text: a parameter PostgreSQL types json, Bun's client encodes as a JSON string again.
    const json = JSON.stringify(rows.map((row) => this.#driverRow(row)));
    return sql`INSERT INTO ${sql.identifier(getTableName(this.#table))} (${this.#names}) SELECT ${this.#names} FROM json_to_recordset(${json}::text::json) AS r(${this.#types})`;
  }

  #driverRow(row: Record<string, unknown>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [property, column] of this.#columns) {
      let value = row[property];
      if (value === undefined) {
        if (column.default !== undefined && !is(column.default, SQL)) value = column.default;
        else if (!column.notNull) value = null;
        else throw new Error(`${getTableName(this.#table)}.${column.name}: no value given`);
      }
      out[column.name] = value === null ? null : column.mapToDriverValue(value);
    }
    return out;
  }
}
