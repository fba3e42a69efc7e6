// The PostgreSQL usage store, on Drizzle. A settlement batch is ONE transaction: the usage rows
// keyed by request id (ON CONFLICT DO NOTHING), the ledger debits, the balance changes and this
// node's journal sequence. A batch replayed — by a retry after a COMMIT whose connection dropped,
// by a journal replay, or by another node — stores one row and one debit per request:
// - a journaled batch locks this journal's sequence row first and skips the records it covers;
// - every batch claims its settlement row (store_meta `settle:NAME`, named by the writer and sent
//   again with each retry) in its transaction: a retry whose row is stored returns at once, and a
//   COMMIT whose answer was lost is confirmed by reading the row back (usage/batches.ts, shared
//   with SQLite).
// A request id already stored is then a different request that reused a client-sent id, stored
// under `id~N` as in SQLite.

import { randomUUID } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { and, eq, inArray, like, lt, sql } from "drizzle-orm";
import { type BatchClaim, SETTLE_META, StoredBatches } from "../usage/batches.ts";
import { UsageReads } from "../usage/reads.ts";
import type { UsageRecord, UsageStore } from "../usage/record.ts";
import { USAGE_JOURNAL_SEQ } from "../usage/record.ts";
import { coveredBy, debitsOf, firstFreeReuse, INSERT_CHUNK, reusedIn, toUsageRow } from "../usage/rows.ts";
import type { PgDb } from "./db.ts";
import { pgDialect } from "./dialect.ts";
import { JsonRows } from "./rows.ts";
import { accounts, ledger, storeMeta, usageRecords } from "./schema.ts";

/**
 * The store_meta row of one node's journal: several nodes share the database, each its own journal.
 * The row is named by an id kept beside the journal (`<journal>.id`, made once), not by the host
 * name: a container gets a new host name at each start, and a journal replayed under a new name
 * would find no stored sequence and store its records a second time.
 */
export function journalSeqName(journalPath: string | undefined): string {
  return journalPath === undefined ? USAGE_JOURNAL_SEQ : `${USAGE_JOURNAL_SEQ}@${journalId(journalPath)}`;
}

/** The journal's id from `<journal>.id`, made when the file does not exist yet. */
export function journalId(journalPath: string): string {
  const file = `${journalPath}.id`;
  try {
    writeFileSync(file, `${randomUUID()}\n`, { flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const id = readFileSync(file, "utf8").trim();
  if (!/^[0-9a-f-]{36}$/.test(id))
    throw new Error(`${file} does not hold a journal id; remove it only with its journal`);
  return id;
}

/** A batch's usage rows and ledger debits, each inserted as one JSON parameter (rows.ts). */
const USAGE_ROWS = new JsonRows(usageRecords);
const LEDGER_ROWS = new JsonRows(ledger);

export class PgUsageStore extends UsageReads implements UsageStore {
  readonly #db: PgDb;
  /** Named on first use: a command that never touches the journal makes no journal id file. */
  readonly #nameSeq: () => string;
  #seqNameCache: string | undefined;
  readonly #batches = new StoredBatches();

  constructor(db: PgDb, seqName: () => string) {
    super(pgDialect(db));
    this.#db = db;
    this.#nameSeq = seqName;
  }

  /** The store_meta row of this node's journal sequence. */
  journalRow(): string {
    return this.#seqName();
  }

  #seqName(): string {
    this.#seqNameCache ??= this.#nameSeq();
    return this.#seqNameCache;
  }

  async commit(records: readonly UsageRecord[], journalSeq?: number, batchId?: string): Promise<string[]> {
    if (records.length === 0) return [];
    return this.#batches.commit(
      batchId,
      records,
      (claim) => this.#commitOnce(records, journalSeq, claim),
      (row) => this.#rowStored(row),
    );
  }

  async #rowStored(row: string): Promise<boolean> {
    const rows = await this.#db.select({ n: storeMeta.name }).from(storeMeta).where(eq(storeMeta.name, row));
    return rows.length > 0;
  }

  /** The batch's transaction; undefined when its settlement row shows an earlier try stored it. */
  async #commitOnce(
    records: readonly UsageRecord[],
    journalSeq: number | undefined,
    claim: BatchClaim,
  ): Promise<string[] | undefined> {
    return this.#db.transaction(async (tx) => {
      if (claim.stale.length > 0) await tx.delete(storeMeta).where(inArray(storeMeta.name, claim.stale));
      if (claim.sweepBefore !== undefined) {
        await tx
          .delete(storeMeta)
          .where(and(like(storeMeta.name, `${SETTLE_META}%`), lt(storeMeta.value, claim.sweepBefore)));
      }
      const claimed = await tx
        .insert(storeMeta)
        .values({ name: claim.row, value: claim.at })
        .onConflictDoNothing()
        .returning({ name: storeMeta.name });
      if (claimed.length === 0) return undefined;
      let fresh = records;
      if (journalSeq !== undefined) {
        await tx.insert(storeMeta).values({ name: this.#seqName(), value: 0 }).onConflictDoNothing();
        // FOR UPDATE: a concurrent commit of the same journal waits, then sees this one's number.
        const [row] = await tx
          .select({ value: storeMeta.value })
          .from(storeMeta)
          .where(eq(storeMeta.name, this.#seqName()))
          .for("update");
        fresh = records.slice(coveredBy(row?.value ?? 0, journalSeq, records.length));
      }
      const ids = await this.#write(tx, fresh);
      if (journalSeq !== undefined) {
        await tx
          .update(storeMeta)
          .set({ value: sql`greatest(${storeMeta.value}, ${journalSeq})` })
          .where(eq(storeMeta.name, this.#seqName()));
      }
      return [...records.slice(0, records.length - fresh.length).map((r) => r.requestId), ...ids];
    });
  }

  async journalSeq(): Promise<number> {
    const [row] = await this.#db
      .select({ value: storeMeta.value })
      .from(storeMeta)
      .where(eq(storeMeta.name, this.#seqName()));
    return row?.value ?? 0;
  }

  /** Inserts the rows in one statement; only the ids already taken are looked at one by one. */
  async #write(tx: PgDb, records: readonly UsageRecord[]): Promise<string[]> {
    if (records.length === 0) return [];
    const inserted: string[] = [];
    for (let i = 0; i < records.length; i += INSERT_CHUNK) {
      const chunk = records.slice(i, i + INSERT_CHUNK).map((r) => toUsageRow(r, r.requestId));
      const rows = (await tx.execute(
        sql`${USAGE_ROWS.insert(chunk)} ON CONFLICT (request_id) DO NOTHING RETURNING request_id`,
      )) as unknown as { request_id: string }[];
      for (const row of rows) inserted.push(row.request_id);
    }
    const reused = reusedIn(records, inserted);
    const ids: string[] = [];
    for (const [i, record] of records.entries()) {
      ids.push(reused[i] ? await this.#insertReused(tx, record) : record.requestId);
    }
    const { debits, perAccount } = debitsOf(records, ids);
    for (let i = 0; i < debits.length; i += INSERT_CHUNK) {
      await tx.execute(LEDGER_ROWS.insert(debits.slice(i, i + INSERT_CHUNK)));
    }
    for (const [accountId, cost] of perAccount) {
      await tx
        .update(accounts)
        .set({ balanceNanos: sql`${accounts.balanceNanos} - ${cost}` })
        .where(eq(accounts.id, accountId));
    }
    return ids;
  }

  /** Stores a different request that reused a client-sent id under `id~N`. */
  async #insertReused(tx: PgDb, record: UsageRecord): Promise<string> {
    const search = firstFreeReuse();
    let step = search.next(true);
    while (!step.done) {
      const id = `${record.requestId}~${step.value}`;
      const found = await tx
        .select({ id: usageRecords.id })
        .from(usageRecords)
        .where(eq(usageRecords.requestId, id))
        .limit(1);
      step = search.next(found.length > 0);
    }
    for (let n = step.value; ; n++) {
      const id = `${record.requestId}~${n}`;
      const rows = await tx
        .insert(usageRecords)
        .values(toUsageRow(record, id))
        .onConflictDoNothing({ target: usageRecords.requestId })
        .returning({ requestId: usageRecords.requestId });
      if (rows.length > 0) return id;
    }
  }
}
