// The PostgreSQL store: drizzle-orm over Bun's built-in SQL client (drizzle-orm/bun-sql), the
// tables of pg/schema.ts (the twin of sqlite/schema.ts), migrations from migrations/pg/ applied at open
// under an advisory lock so several nodes starting at once migrate once.
import { SQL } from "bun";
import { eq, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sql";
import type { KeyId, Nanos } from "../../base/types.ts";
import type { LimiterLedger } from "../../limits/limiter.ts";
import { toAccount } from "../admin-rows.ts";
import { DrizzleStore } from "../drizzle-store.ts";
import { newKeyRow } from "../key-rows.ts";
import { embeddedMigrations } from "../migrations.ts";
import type { Account, Group, KeyRecord, NewKey, Store } from "../store.ts";
import { StoreError } from "../store.ts";
import { CREDITED_META, REVISION_META } from "../usage/record.ts";
import { isUniqueViolation, type PgDb } from "./db.ts";
import { pgDialect } from "./dialect.ts";
import { PgLimiterLedger } from "./limiter-ledger.ts";
import { bumpRevision, watchRevision } from "./notify.ts";
import { accounts, apiKeys, groups, ledger, storeMeta } from "./schema.ts";
import { PgUsageStore } from "./usage.ts";

/** The pool of a store opened without a size (the CLI); a serving node's is store.pool_size. */
const DEFAULT_POOL = 4;
/** pg_advisory_lock key held while migrating ("modelgate" in ASCII, as a bigint). */
const MIGRATION_LOCK = 0x6d6f64656c676174n;
/** Held by every serving node: shared with a shared limiter (Redis), exclusive without one. */
const NODE_LOCK = 0x6d6f64656c6e6f64n;

export interface PgStoreOptions {
  /** The store_meta row name of this node's usage-journal sequence (one per journal). */
  /** Names this node's journal sequence row, called on first use. */
  journalSeqName: () => string;
  /** Most pooled connections (default DEFAULT_POOL). */
  maxConnections?: number | undefined;
}

/** Connects to the PostgreSQL database at `url` (postgres://USER[:PASSWORD]@HOST:PORT/DB). */
export function openPgStore(url: string, options: PgStoreOptions): PgStore {
  const client = new SQL({ url, max: options.maxConnections ?? DEFAULT_POOL });
  return new PgStore(url, client, options.journalSeqName);
}

export class PgStore extends DrizzleStore implements Store {
  readonly #url: string;
  readonly #client: SQL;
  /** The connection holding this serving node's advisory lock (claimNode). */
  #nodeLock: SQL | undefined;
  readonly #db: PgDb;
  readonly usage: PgUsageStore;
  readonly #revision;

  constructor(url: string, client: SQL, journalSeqName: () => string) {
    const db = drizzle({ client }) as unknown as PgDb;
    super(pgDialect(db));
    this.#url = url;
    this.#client = client;
    this.#db = db;
    this.usage = new PgUsageStore(db, journalSeqName);
    this.#revision = this.#db
      .select({ value: storeMeta.value })
      .from(storeMeta)
      .where(eq(storeMeta.name, REVISION_META))
      .prepare("modelgate_revision");
  }

  async migrate(): Promise<void> {
    // One connection holds the session-level lock for the whole migration: nodes starting at once
    // wait here, and find the migrations applied.
    const client = new SQL({ url: this.#url, max: 1 });
    try {
      await client`SELECT pg_advisory_lock(${MIGRATION_LOCK})`;
      const db = drizzle({ client }) as unknown as {
        dialect: { migrate(m: unknown, s: unknown, c: unknown): Promise<void> };
        session: unknown;
      };
      await db.dialect.migrate(embeddedMigrations("pg"), db.session, { migrationsFolder: "" });
      await client`INSERT INTO store_meta (name, value) VALUES (${REVISION_META}, 0) ON CONFLICT DO NOTHING`;
      await client`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`;
    } finally {
      await client.close();
    }
  }

  async revision(): Promise<number> {
    // Polled 4 times a second by the key cache and again by the balance sync: built once.
    const [row] = await this.#revision.execute();
    return row?.value ?? 0;
  }

  async isEmpty(): Promise<boolean> {
    const a = await this.#db.select({ id: accounts.id }).from(accounts).limit(1);
    const k = await this.#db.select({ id: apiKeys.id }).from(apiKeys).limit(1);
    return a.length === 0 && k.length === 0;
  }

  async ping(): Promise<void> {
    await this.#client`SELECT 1`;
  }

  async claimNode(sharedLimiter: boolean): Promise<void> {
    const client = new SQL({ url: this.#url, max: 1 });
    const [row] = (
      sharedLimiter
        ? await client`SELECT pg_try_advisory_lock_shared(${NODE_LOCK}) AS ok`
        : await client`SELECT pg_try_advisory_lock(${NODE_LOCK}) AS ok`
    ) as { ok: boolean }[];
    if (row?.ok !== true) {
      await client.close();
      throw new StoreError(
        "conflict",
        sharedLimiter
          ? "a modelgate node without Redis already serves this PostgreSQL database: its limits and balances are its own. Give it the same --redis-url and --redis-prefix (redis.url), or stop it, before starting more nodes"
          : "another modelgate node already serves this PostgreSQL database: nodes on one database must share one Redis. Give every node the same --redis-url and --redis-prefix (redis.url, MODELGATE_REDIS_URL)",
      );
    }
    this.#nodeLock = client;
  }

  limiterLedger(): LimiterLedger {
    return new PgLimiterLedger(this.#db, () => this.usage.journalRow());
  }

  watch(onChange: () => void): Promise<() => Promise<void>> {
    return watchRevision(this.#client, onChange);
  }

  async close(): Promise<void> {
    await this.#nodeLock?.close();
    await this.#client.close();
  }

  /** Runs `fn` in one transaction that also bumps the revision gateways poll, and notifies them. */
  #change<T>(fn: (tx: PgDb) => Promise<T>): Promise<T> {
    return this.#db.transaction(async (tx) => {
      const result = await fn(tx);
      await bumpRevision(tx);
      return result;
    });
  }

  async createAccount(name: string, balance: Nanos): Promise<Account> {
    try {
      return await this.#change(async (tx) => {
        const [row] = await tx.insert(accounts).values({ name, balanceNanos: balance }).returning();
        if (row === undefined) throw new Error(`account "${name}" was not stored`);
        if (balance > 0) {
          await tx
            .insert(ledger)
            .values({ accountId: row.id, amountNanos: balance, kind: "credit", note: "opening balance" });
        }
        return toAccount(row);
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new StoreError("conflict", `account "${name}" already exists`);
      throw error;
    }
  }

  async creditAccount(name: string, amount: Nanos, note: string): Promise<Account> {
    return this.#change(async (tx) => {
      const [row] = await tx
        .update(accounts)
        .set({ balanceNanos: sql`${accounts.balanceNanos} + ${amount}` })
        .where(eq(accounts.name, name))
        .returning();
      if (!row) throw new StoreError("not_found", `account "${name}" does not exist`);
      await tx.insert(ledger).values({ accountId: row.id, amountNanos: amount, kind: "credit", note });
      await tx
        .insert(storeMeta)
        .values({ name: `${CREDITED_META}${row.id}`, value: amount })
        .onConflictDoUpdate({ target: storeMeta.name, set: { value: sql`${storeMeta.value} + ${amount}` } });
      return toAccount(row);
    });
  }

  async setGroup(name: string, modelPatterns: string[]): Promise<Group> {
    return this.#change(async (tx) => {
      const [row] = await tx
        .insert(groups)
        .values({ name, modelPatterns })
        .onConflictDoUpdate({ target: groups.name, set: { modelPatterns } })
        .returning();
      if (row === undefined) throw new Error(`group "${name}" was not stored`);
      return { id: row.id, name: row.name, modelPatterns: row.modelPatterns };
    });
  }

  async createKey(key: NewKey): Promise<KeyRecord> {
    await this.#change(async (tx) => {
      const [account] = await tx
        .select({ id: accounts.id })
        .from(accounts)
        .where(eq(accounts.name, key.account));
      if (!account) throw new StoreError("not_found", `account "${key.account}" does not exist`);
      const [group] = await tx.select({ id: groups.id }).from(groups).where(eq(groups.name, key.group));
      if (!group) throw new StoreError("not_found", `group "${key.group}" does not exist`);
      await tx.insert(apiKeys).values(newKeyRow(key, account.id, group.id));
    });
    return this.admin.getKey(key.id);
  }

  async touchKeys(lastUsed: ReadonlyMap<KeyId, number>): Promise<void> {
    if (lastUsed.size === 0) return;
    // Not a #change: last-used times are informational and must not make every gateway reload.
    const values = [...lastUsed].map(([id, at]) => sql`(${id}::text, ${at}::bigint)`);
    await this.#db.execute(
      sql`UPDATE ${apiKeys} SET last_used_at = v.at FROM (VALUES ${sql.join(values, sql`, `)}) AS v(id, at)
        WHERE ${apiKeys.id} = v.id`,
    );
  }
}
