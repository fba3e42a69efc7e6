// The PostgreSQL usage store, on Drizzle. A settlement batch is ONE transaction: the usage rows
// keyed by request id (ON CONFLICT DO NOTHING), the ledger debits, the balance changes and this
// node's journal sequence. A batch replayed — by a retry after a COMMIT whose connection dropped,
// by a journal replay, or by another node — stores one row and one debit per request:
// - a journaled batch locks this journal's sequence row first and skips the records it covers;
// - a record whose id is taken by a row with the same key, time, latency and cost is the same
//   settlement again (nothing is stored); any other holder of the id is a different request that
//   reused a client-sent id, stored under `id~N` as in SQLite.

import { hostname } from "node:os";
import { and, eq, gte, inArray, like, lt, or, type SQL, type SQLWrapper, sql } from "drizzle-orm";
import { nanos } from "../billing/money.ts";
import type { Nanos } from "../types.ts";
import type { PgDb } from "./pg-keys.ts";
import { accounts, ledger, storeMeta, usageRecords } from "./schema-pg.ts";
import type { UsageFilter, UsageGroupBy, UsageRecord, UsageStore, UsageTotals } from "./usage.ts";
import { USAGE_JOURNAL_SEQ } from "./usage.ts";

/** The store_meta row of one node's journal: several nodes share the database, each its own journal. */
export function journalSeqName(journalPath: string | undefined): string {
  return journalPath === undefined ? USAGE_JOURNAL_SEQ : `${USAGE_JOURNAL_SEQ}@${hostname()}:${journalPath}`;
}

type Row = typeof usageRecords.$inferSelect;
type NewRow = typeof usageRecords.$inferInsert;

export class PgUsageStore implements UsageStore {
  readonly #db: PgDb;
  readonly #seqName: string;

  constructor(db: PgDb, seqName: string) {
    this.#db = db;
    this.#seqName = seqName;
  }

  async commit(records: readonly UsageRecord[], journalSeq?: number): Promise<string[]> {
    if (records.length === 0) return [];
    return this.#db.transaction(async (tx) => {
      let fresh = records;
      if (journalSeq !== undefined) {
        await tx.insert(storeMeta).values({ name: this.#seqName, value: 0 }).onConflictDoNothing();
        // FOR UPDATE: a concurrent commit of the same journal waits, then sees this one's number.
        const [row] = await tx
          .select({ value: storeMeta.value })
          .from(storeMeta)
          .where(eq(storeMeta.name, this.#seqName))
          .for("update");
        // The batch's sequence numbers are consecutive and end at journalSeq.
        const first = journalSeq - records.length + 1;
        const covered = Math.min(records.length, Math.max(0, (row?.value ?? 0) - first + 1));
        fresh = records.slice(covered);
      }
      const ids = await this.#write(tx, fresh);
      if (journalSeq !== undefined) {
        await tx
          .update(storeMeta)
          .set({ value: sql`greatest(${storeMeta.value}, ${journalSeq})` })
          .where(eq(storeMeta.name, this.#seqName));
      }
      return [...records.slice(0, records.length - fresh.length).map((r) => r.requestId), ...ids];
    });
  }

  async journalSeq(): Promise<number> {
    const [row] = await this.#db
      .select({ value: storeMeta.value })
      .from(storeMeta)
      .where(eq(storeMeta.name, this.#seqName));
    return row?.value ?? 0;
  }

  /** Inserts the rows in one statement; only the ids already taken are looked at one by one. */
  async #write(tx: PgDb, records: readonly UsageRecord[]): Promise<string[]> {
    if (records.length === 0) return [];
    const inserted = await tx
      .insert(usageRecords)
      .values(records.map((r) => toRow(r, r.requestId)))
      .onConflictDoNothing({ target: usageRecords.requestId })
      .returning({ requestId: usageRecords.requestId });
    const taken = new Set(inserted.map((r) => r.requestId));
    const ids: string[] = [];
    const debited: { record: UsageRecord; id: string }[] = [];
    for (const record of records) {
      let id = record.requestId;
      if (taken.has(id)) {
        taken.delete(id); // a second record with the same id in this batch is a reuse
        debited.push({ record, id });
      } else {
        const stored = await this.#sameSettlement(tx, record);
        if (stored !== undefined) {
          ids.push(stored);
          continue;
        }
        id = await this.#insertReused(tx, record);
        debited.push({ record, id });
      }
      ids.push(id);
    }
    const debits = debited.filter((d) => d.record.costNanos > 0);
    if (debits.length > 0) {
      await tx.insert(ledger).values(
        debits.map(({ record, id }) => ({
          accountId: record.accountId,
          amountNanos: -record.costNanos,
          kind: "debit" as const,
          requestId: id,
          note: record.endpoint,
          createdAt: record.createdAt,
        })),
      );
      const perAccount = new Map<number, number>();
      for (const { record } of debits) {
        perAccount.set(record.accountId, (perAccount.get(record.accountId) ?? 0) + record.costNanos);
      }
      // In account order, so two nodes settling the same accounts never deadlock.
      for (const [accountId, cost] of [...perAccount].sort((a, b) => a[0] - b[0])) {
        await tx
          .update(accounts)
          .set({ balanceNanos: sql`${accounts.balanceNanos} - ${cost}` })
          .where(eq(accounts.id, accountId));
      }
    }
    return ids;
  }

  /** The stored id of this very settlement (same id family, key, time, latency and cost), if any. */
  async #sameSettlement(tx: PgDb, record: UsageRecord): Promise<string | undefined> {
    const [row] = await tx
      .select({ requestId: usageRecords.requestId })
      .from(usageRecords)
      .where(
        and(
          idFamily(record.requestId),
          eq(usageRecords.keyId, record.keyId),
          eq(usageRecords.createdAt, record.createdAt),
          eq(usageRecords.latencyMs, record.latencyMs),
          eq(usageRecords.costNanos, record.costNanos),
        ),
      )
      .limit(1);
    return row?.requestId;
  }

  /** Stores a different request that reused a client-sent id under `id~N`. */
  async #insertReused(tx: PgDb, record: UsageRecord): Promise<string> {
    const [count] = await tx
      .select({ n: sql<number>`count(*)`.mapWith(Number) })
      .from(usageRecords)
      .where(idFamily(record.requestId));
    for (let n = count?.n ?? 1; ; n++) {
      const id = `${record.requestId}~${n}`;
      const rows = await tx
        .insert(usageRecords)
        .values(toRow(record, id))
        .onConflictDoNothing({ target: usageRecords.requestId })
        .returning({ requestId: usageRecords.requestId });
      if (rows.length > 0) return id;
    }
  }

  async balances(): Promise<Map<number, Nanos>> {
    const rows = await this.#db.select({ id: accounts.id, b: accounts.balanceNanos }).from(accounts);
    return new Map(rows.map((r) => [r.id, nanos(r.b)]));
  }

  async spentByKeySince(since: number): Promise<Map<string, Nanos>> {
    const rows = await this.#db
      .select({ k: usageRecords.keyId, c: sql<number>`sum(${usageRecords.costNanos})`.mapWith(Number) })
      .from(usageRecords)
      .where(gte(usageRecords.createdAt, since))
      .groupBy(usageRecords.keyId);
    return new Map(rows.map((r) => [r.k, nanos(r.c)]));
  }

  async find(requestId: string): Promise<UsageRecord | undefined> {
    const [row] = await this.#db.select().from(usageRecords).where(eq(usageRecords.requestId, requestId));
    return row ? fromRow(row) : undefined;
  }

  async totals(filter: UsageFilter, groupBy?: UsageGroupBy, dayOffsetMinutes = 0): Promise<UsageTotals[]> {
    const offsetSeconds = Math.trunc(dayOffsetMinutes) * 60;
    const u = usageRecords;
    const group: SQL<string | null> =
      groupBy === "model"
        ? sql`${u.model}`
        : groupBy === "key"
          ? sql`${u.keyId}`
          : groupBy === "day"
            ? sql`to_char(to_timestamp(${u.createdAt} / 1000 + ${sql.raw(String(offsetSeconds))}) at time zone 'UTC', 'YYYY-MM-DD')`
            : sql`NULL::text`;
    const sum = (column: SQLWrapper) => sql<number>`coalesce(sum(${column}), 0)`.mapWith(Number);
    const where = and(
      filter.keyId === undefined ? undefined : eq(u.keyId, filter.keyId),
      filter.account === undefined
        ? undefined
        : inArray(
            u.accountId,
            this.#db.select({ id: accounts.id }).from(accounts).where(eq(accounts.name, filter.account)),
          ),
      filter.since === undefined ? undefined : gte(u.createdAt, filter.since),
      filter.until === undefined ? undefined : lt(u.createdAt, filter.until),
    );
    const query = this.#db
      .select({
        g: group,
        requests: sql<number>`count(*)`.mapWith(Number),
        input: sum(u.inputTokens),
        cached: sum(u.cachedInputTokens),
        output: sum(u.outputTokens),
        reasoning: sum(u.reasoningTokens),
        generations: sum(u.generations),
        cost: sum(u.costNanos),
      })
      .from(u)
      .where(where)
      .$dynamic();
    const rows = groupBy ? await query.groupBy(sql`1`).orderBy(sql`1`) : await query;
    return rows.map((r) => ({
      group: r.g === null || r.g === undefined ? null : String(r.g),
      requests: r.requests,
      inputTokens: r.input,
      cachedInputTokens: r.cached,
      outputTokens: r.output,
      reasoningTokens: r.reasoning,
      generations: r.generations,
      costNanos: nanos(r.cost),
    }));
  }
}

/** The request id itself and the `id~N` ids of requests that reused it. */
function idFamily(id: string) {
  const escaped = id.replaceAll("\\", "\\\\").replaceAll("%", "\\%").replaceAll("_", "\\_");
  return or(eq(usageRecords.requestId, id), like(usageRecords.requestId, `${escaped}~%`));
}

function toRow(r: UsageRecord, id: string): NewRow {
  return {
    requestId: id,
    keyId: r.keyId,
    accountId: r.accountId,
    model: r.model,
    endpoint: r.endpoint,
    stream: r.stream,
    status: r.status,
    inputTokens: r.inputTokens,
    cachedInputTokens: r.cachedInputTokens,
    // A journal line written before these fields existed has none.
    cacheWriteTokens: r.cacheWriteTokens ?? 0,
    cacheWrite1hTokens: r.cacheWrite1hTokens ?? 0,
    outputTokens: r.outputTokens,
    reasoningTokens: r.reasoningTokens,
    generations: r.generations,
    costNanos: r.costNanos,
    usageSource: r.usageSource,
    channels: r.channels.join(","),
    latencyMs: r.latencyMs,
    ttfbMs: r.ttfbMs,
    clientAddress: r.clientAddress,
    endUser: r.endUser,
    detail: r.detail,
    createdAt: r.createdAt,
  };
}

function fromRow({ id: _serial, ...row }: Row): UsageRecord {
  return {
    ...row,
    costNanos: nanos(row.costNanos),
    channels: row.channels.split(",").filter((c) => c.length > 0),
  };
}
