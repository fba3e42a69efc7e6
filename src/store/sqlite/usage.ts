// The SQLite usage store, on Drizzle like the PostgreSQL one (pg/usage.ts) and sharing its row
// mapping, debit and replay rules (usage/rows.ts). A batch is one transaction: the usage rows
// keyed by request id, the ledger debits, the balance changes and the journal sequence. The batch
// write runs the SQL of Drizzle statements built once with placeholders, in bun:sqlite's own
// transaction, with their parameters filled without Drizzle's per-call lookups (direct()): it is
// the one hot write path, and building the queries per batch made a 256-record commit 6× slower
// than the hand-written SQL it replaces (31 against 5 µs a record). The SQLite transaction is
// synchronous, so the two dialects stay separate classes. A batch is stored once however often the writer sends it
// (its settlement row, usage/batches.ts).

import type { Changes, Database } from "bun:sqlite";
import { and, eq, getTableColumns, is, like, lt, Param, Placeholder, type Query, sql } from "drizzle-orm";
import type { BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { type BatchClaim, SETTLE_META, StoredBatches } from "../usage/batches.ts";
import { UsageReads } from "../usage/reads.ts";
import type { UsageRecord, UsageStore } from "../usage/record.ts";
import { USAGE_JOURNAL_SEQ } from "../usage/record.ts";
import {
  coveredBy,
  debitsOf,
  firstFreeReuse,
  type NewLedgerRow,
  type NewUsageRow,
  reusedIn,
  toUsageRow,
} from "../usage/rows.ts";
import { metaQuery, metaValue, sqliteDialect } from "./dialect.ts";
import { accounts, ledger, storeMeta, usageRecords } from "./schema.ts";

/** Every usage_records column a settlement writes, as a placeholder of the same name. */
const RECORD_PLACEHOLDERS = Object.fromEntries(
  Object.keys(getTableColumns(usageRecords))
    .filter((name) => name !== "id")
    .map((name) => [name, sql.placeholder(name)]),
) as { [K in Exclude<keyof NewUsageRow, "id">]-?: Placeholder<K> };

/**
 * A Drizzle statement's SQL run on bun:sqlite with its parameters filled by functions made once.
 * Drizzle's own run() finds each placeholder with `is()` (a walk up the parameter's class chain)
 * on every call: for a usage row's 28 parameters that was ~1 µs of the ~7 µs a 100-record batch
 * costs a record (6.2 against 7.0, measured). Same SQL, same placeholders, same column encoders.
 */
function direct<V extends object>(sqlite: Database, query: { getQuery(): Query }): (values: V) => Changes {
  const { sql: text, params } = query.getQuery();
  const statement = sqlite.prepare(text);
  const fill = params.map((param): ((values: V) => unknown) => {
    const placeholder = is(param, Placeholder)
      ? param
      : is(param, Param) && is(param.value, Placeholder)
        ? param.value
        : undefined;
    if (placeholder === undefined) return () => param;
    const name = placeholder.name;
    const encode = is(param, Param) ? (value: unknown) => param.encoder.mapToDriverValue(value) : undefined;
    return (values) => {
      if (!(name in values)) throw new Error(`No value for placeholder "${name}" was provided`);
      const value = (values as Record<string, unknown>)[name];
      return encode ? encode(value) : value;
    };
  });
  // biome-ignore lint/suspicious/noExplicitAny: bun:sqlite binds any of the driver values Drizzle encodes.
  return (values) => statement.run(...(fill.map((f) => f(values)) as any[]));
}

function prepareStatements(db: BunSQLiteDatabase, sqlite: Database) {
  const p = sql.placeholder;
  return {
    insertRecord: direct<NewUsageRow>(
      sqlite,
      db
        .insert(usageRecords)
        .values(RECORD_PLACEHOLDERS)
        .onConflictDoNothing({ target: usageRecords.requestId })
        .prepare(),
    ),
    insertDebit: direct<NewLedgerRow>(
      sqlite,
      db
        .insert(ledger)
        .values({
          accountId: p("accountId"),
          amountNanos: p("amountNanos"),
          kind: "debit",
          requestId: p("requestId"),
          note: p("note"),
          createdAt: p("createdAt"),
        })
        .prepare(),
    ),
    debitAccount: direct<{ accountId: number; cost: number }>(
      sqlite,
      db
        .update(accounts)
        .set({ balanceNanos: sql`${accounts.balanceNanos} - ${p("cost")}` })
        .where(eq(accounts.id, p("accountId")))
        .prepare(),
    ),
    journalSeq: metaQuery(db, USAGE_JOURNAL_SEQ),
    setJournalSeq: db
      .insert(storeMeta)
      .values({ name: USAGE_JOURNAL_SEQ, value: p("seq") })
      .onConflictDoUpdate({
        target: storeMeta.name,
        set: { value: sql`max(${storeMeta.value}, excluded.value)` },
      })
      .prepare(),
    claimBatch: db
      .insert(storeMeta)
      .values({ name: p("row"), value: p("at") })
      .onConflictDoNothing()
      .returning({ name: storeMeta.name })
      .prepare(),
    deleteMeta: db
      .delete(storeMeta)
      .where(eq(storeMeta.name, p("name")))
      .prepare(),
  };
}

export class SqliteUsageStore extends UsageReads implements UsageStore {
  readonly #db: BunSQLiteDatabase;
  /** Prepared at the first commit: the tables exist only after migrate(). */
  #statements: ReturnType<typeof prepareStatements> | undefined;

  readonly #sqlite: Database;
  readonly #batches = new StoredBatches();

  constructor(db: BunSQLiteDatabase, sqlite: Database) {
    super(sqliteDialect(db));
    this.#db = db;
    this.#sqlite = sqlite;
  }

  async commit(records: readonly UsageRecord[], journalSeq?: number, batchId?: string): Promise<string[]> {
    if (records.length === 0) return [];
    this.#statements ??= prepareStatements(this.#db, this.#sqlite);
    const statements = this.#statements;
    return this.#batches.commit(
      batchId,
      records,
      async (claim) =>
        // bun:sqlite's own transaction (its BEGIN and COMMIT cached); the statements run inside it.
        this.#sqlite
          .transaction(() => {
            if (!this.#claim(statements, claim)) return undefined;
            // A journaled batch skips the records the store already has, as the PostgreSQL store does.
            const stored = journalSeq === undefined ? 0 : (statements.journalSeq.get()?.value ?? 0);
            const covered = journalSeq === undefined ? 0 : coveredBy(stored, journalSeq, records.length);
            const ids = this.#write(statements, records.slice(covered));
            if (journalSeq !== undefined) statements.setJournalSeq.run({ seq: journalSeq });
            return [...records.slice(0, covered).map((r) => r.requestId), ...ids];
          })
          .immediate(),
      async (row) => metaQuery(this.#db, row).get() !== undefined,
    );
  }

  /** The batch's settlement rows (usage/batches.ts); false when an earlier try stored the batch. */
  #claim(statements: ReturnType<typeof prepareStatements>, claim: BatchClaim): boolean {
    for (const name of claim.stale) statements.deleteMeta.run({ name });
    if (claim.sweepBefore !== undefined) {
      this.#db
        .delete(storeMeta)
        .where(and(like(storeMeta.name, `${SETTLE_META}%`), lt(storeMeta.value, claim.sweepBefore)))
        .run();
    }
    return statements.claimBatch.get({ row: claim.row, at: claim.at }) !== undefined;
  }

  async journalSeq(): Promise<number> {
    return metaValue(this.#db, USAGE_JOURNAL_SEQ);
  }

  #write(statements: ReturnType<typeof prepareStatements>, records: readonly UsageRecord[]): string[] {
    const inserted: string[] = [];
    for (const record of records) {
      // Inserted or not is the statement's change count: a RETURNING row read back and mapped by
      // Drizzle made a 100-record commit ~1.4x dearer (37 against 26 µs a record, measured).
      if (statements.insertRecord(toUsageRow(record, record.requestId)).changes > 0)
        inserted.push(record.requestId);
    }
    const reused = reusedIn(records, inserted);
    const ids = records.map((record, i) => (reused[i] ? this.#insertReused(record) : record.requestId));
    const { debits, perAccount } = debitsOf(records, ids);
    for (const debit of debits) statements.insertDebit(debit);
    for (const [accountId, cost] of perAccount) statements.debitAccount({ accountId, cost });
    return ids;
  }

  /** Stores a different request that reused a client-sent id under `id~N` (N: its place among the uses). */
  #insertReused(record: UsageRecord): string {
    const tx = this.#db;
    const search = firstFreeReuse();
    let step = search.next(true);
    while (!step.done) {
      const id = `${record.requestId}~${step.value}`;
      const found = tx
        .select({ id: usageRecords.id })
        .from(usageRecords)
        .where(eq(usageRecords.requestId, id))
        .get();
      step = search.next(found !== undefined);
    }
    for (let n = step.value; ; n++) {
      const id = `${record.requestId}~${n}`;
      const rows = tx
        .insert(usageRecords)
        .values(toUsageRow(record, id))
        .onConflictDoNothing({ target: usageRecords.requestId })
        .returning({ requestId: usageRecords.requestId })
        .all();
      if (rows.length > 0) return id;
    }
  }
}
