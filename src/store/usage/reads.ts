// The reads of the usage store, written once over a store dialect (dialect.ts): balances and the
// limiter's seed, spending since a time, one record, and `modelgate usage` totals. The SQLite and
// PostgreSQL usage stores extend it with their own batch write, which stays per dialect.
import { eq, getTableColumns, gte, sql } from "drizzle-orm";
import { nanos } from "../../base/money.ts";
import type { AccountId, KeyId, Nanos } from "../../base/types.ts";
import type { Dialect } from "../dialect.ts";
import type { SeedFigures, UsageFilter, UsageGroupBy, UsageRecord, UsageTotals } from "./record.ts";
import { fromUsageRow } from "./rows.ts";
import { creditedJoin, seedFieldsOf, toSeedFigures } from "./seeds.ts";
import { toTotals, totalsFields, totalsGroup, totalsWhere } from "./totals.ts";

export class UsageReads {
  readonly #dialect: Dialect;

  constructor(dialect: Dialect) {
    this.#dialect = dialect;
  }

  async balances(): Promise<Map<AccountId, Nanos>> {
    const { accounts } = this.#dialect.tables;
    const rows = await this.#dialect.db.select({ id: accounts.id, b: accounts.balanceNanos }).from(accounts);
    return new Map(rows.map((r) => [r.id, nanos(r.b)]));
  }

  async seedFigures(): Promise<SeedFigures> {
    const { db, tables, credited } = this.#dialect;
    const rows = await db
      .select(seedFieldsOf(tables.accounts, tables.storeMeta, credited.value))
      .from(tables.accounts)
      .leftJoin(credited, creditedJoin(tables.accounts, credited.name));
    return toSeedFigures(rows);
  }

  async spentByKeySince(since: number): Promise<Map<KeyId, Nanos>> {
    const { usageRecords } = this.#dialect.tables;
    const rows = await this.#dialect.db
      .select({ k: usageRecords.keyId, c: sql<number>`sum(${usageRecords.costNanos})`.mapWith(Number) })
      .from(usageRecords)
      .where(gte(usageRecords.createdAt, since))
      .groupBy(usageRecords.keyId);
    return new Map(rows.map((r) => [r.k, nanos(r.c)]));
  }

  async find(requestId: string): Promise<UsageRecord | undefined> {
    const { usageRecords } = this.#dialect.tables;
    const [row] = await this.#dialect.db
      .select(getTableColumns(usageRecords))
      .from(usageRecords)
      .where(eq(usageRecords.requestId, requestId))
      .limit(1);
    return row ? fromUsageRow(row) : undefined;
  }

  async totals(filter: UsageFilter, groupBy?: UsageGroupBy, dayOffsetMinutes = 0): Promise<UsageTotals[]> {
    const { db, tables, day, toolCount } = this.#dialect;
    const { usageRecords, accounts } = tables;
    const group = totalsGroup(usageRecords, groupBy, dayOffsetMinutes, day);
    const query = db
      .select(totalsFields(usageRecords, group, toolCount))
      .from(usageRecords)
      .where(totalsWhere(usageRecords, accounts, filter));
    const rows = groupBy ? await query.groupBy(sql`1`).orderBy(sql`1`) : await query;
    return rows.map(toTotals);
  }
}
