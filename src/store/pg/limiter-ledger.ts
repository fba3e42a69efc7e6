// The PostgreSQL ledger as a shared limiter sees it (LimiterLedger, src/limits/limiter.ts): the
// database's id and the limiter epoch, kept in store_meta so Redis state built for another
// database or another epoch is never trusted; the serving nodes alive (one store_meta row each,
// stamped with PostgreSQL's clock by the node's heartbeat); and the figures Redis is rebuilt
// from, read in one REPEATABLE READ snapshot: balances, how far each node journal is stored, and
// each key's spending since a day start.
import { and, eq, gte, like, lt, sql } from "drizzle-orm";
import { nanos } from "../../base/money.ts";
import type { LedgerFigures, LimiterLedger } from "../../limits/limiter.ts";
import { REVISION_META, USAGE_JOURNAL_SEQ } from "../usage/record.ts";
import type { PgDb } from "./db.ts";
import { bumpRevision } from "./notify.ts";
import { accounts, storeMeta, usageRecords } from "./schema.ts";

const LEDGER_ID = "limiter_ledger";
const EPOCH = "limiter_epoch";
const NODE = "limiter_node:";
/** PostgreSQL's clock in ms: node liveness never depends on a node's own clock. */
const PG_NOW_MS = sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`;

/** The journal name of a store_meta journal row: the id after `@`, or `-` for the store's only journal. */
export function journalOfRow(name: string): string {
  const at = name.indexOf("@");
  return at < 0 ? "-" : name.slice(at + 1);
}

export class PgLimiterLedger implements LimiterLedger {
  readonly #db: PgDb;
  readonly #journalRow: () => string;

  constructor(db: PgDb, journalRow: () => string) {
    this.#db = db;
    this.#journalRow = journalRow;
  }

  get journal(): string {
    return journalOfRow(this.#journalRow());
  }

  async identity(): Promise<{ ledger: string; epoch: number }> {
    const read = () =>
      this.#db
        .select({ name: storeMeta.name, value: storeMeta.value })
        .from(storeMeta)
        .where(sql`${storeMeta.name} in (${LEDGER_ID}, ${EPOCH})`);
    let rows = await read();
    if (!rows.some((row) => row.name === LEDGER_ID)) {
      // Made once per database: a random id, so a fresh or other database under a reused prefix differs.
      const made = Math.floor(Math.random() * 2 ** 48) + 1;
      await this.#db.insert(storeMeta).values({ name: LEDGER_ID, value: made }).onConflictDoNothing();
      rows = await read();
    }
    const value = (name: string) => rows.find((row) => row.name === name)?.value ?? 0;
    return { ledger: String(value(LEDGER_ID)), epoch: value(EPOCH) };
  }

  async nextEpoch(seen: number): Promise<number> {
    return this.#db.transaction(async (tx) => {
      const [row] = await tx
        .insert(storeMeta)
        .values({ name: EPOCH, value: seen + 1 })
        .onConflictDoUpdate({
          target: storeMeta.name,
          set: { value: sql`greatest(${storeMeta.value}, ${seen}) + 1` },
        })
        .returning({ value: storeMeta.value });
      // Every node reloads on a revision change (NOTIFY): it finds the new epoch at once.
      await bumpRevision(tx);
      return row?.value ?? seen + 1;
    });
  }

  async beat(node: string, withinMs: number): Promise<string[]> {
    await this.#db
      .insert(storeMeta)
      .values({ name: `${NODE}${node}`, value: PG_NOW_MS })
      .onConflictDoUpdate({ target: storeMeta.name, set: { value: PG_NOW_MS } });
    // Rows of nodes gone for long are removed here: a node that died never leaves by itself.
    await this.#db
      .delete(storeMeta)
      .where(
        and(like(storeMeta.name, `${NODE}%`), lt(storeMeta.value, sql`${PG_NOW_MS} - ${withinMs * 20}`)),
      );
    const rows = await this.#db
      .select({ name: storeMeta.name })
      .from(storeMeta)
      .where(and(like(storeMeta.name, `${NODE}%`), gte(storeMeta.value, sql`${PG_NOW_MS} - ${withinMs}`)));
    return rows.map((row) => row.name.slice(NODE.length));
  }

  async leave(node: string): Promise<void> {
    await this.#db.delete(storeMeta).where(eq(storeMeta.name, `${NODE}${node}`));
  }

  async figures(dayStart: number): Promise<LedgerFigures> {
    return this.#db.transaction(
      async (tx) => {
        const [revision] = await tx
          .select({ value: storeMeta.value })
          .from(storeMeta)
          .where(eq(storeMeta.name, REVISION_META));
        const balances = await tx.select({ id: accounts.id, balance: accounts.balanceNanos }).from(accounts);
        const journals = await tx
          .select({ name: storeMeta.name, value: storeMeta.value })
          .from(storeMeta)
          .where(like(storeMeta.name, `${USAGE_JOURNAL_SEQ}%`));
        const spent = await tx
          .select({
            keyId: usageRecords.keyId,
            accountId: usageRecords.accountId,
            spent: sql<number>`sum(${usageRecords.costNanos})`.mapWith(Number),
          })
          .from(usageRecords)
          .where(gte(usageRecords.createdAt, dayStart))
          .groupBy(usageRecords.keyId, usageRecords.accountId);
        return {
          revision: revision?.value ?? 0,
          balances: new Map(balances.map((row) => [row.id, nanos(row.balance)])),
          journals: new Map(journals.map((row) => [journalOfRow(row.name), row.value])),
          spent: spent.map((row) => ({
            keyId: row.keyId,
            accountId: row.accountId,
            spent: nanos(row.spent),
          })),
        };
      },
      { isolationLevel: "repeatable read", accessMode: "read only" },
    );
  }
}
