// The SQLite store: drizzle-orm over bun:sqlite, WAL mode, migrations applied at open.
import { Database } from "bun:sqlite";
import { eq, sql } from "drizzle-orm";
import { type BunSQLiteDatabase, drizzle } from "drizzle-orm/bun-sqlite";
import type { KeyId, Nanos } from "../../base/types.ts";
import { toAccount } from "../admin-rows.ts";
import { DrizzleStore } from "../drizzle-store.ts";
import { newKeyRow } from "../key-rows.ts";
import { embeddedMigrations } from "../migrations.ts";
import type { Account, Group, KeyRecord, NewKey, Store } from "../store.ts";
import { StoreError } from "../store.ts";
import { CREDITED_META, REVISION_META } from "../usage/record.ts";
import { bumpSqliteRevision, metaQuery, sqliteDialect, WRITE } from "./dialect.ts";
import { accounts, apiKeys, groups, ledger, storeMeta } from "./schema.ts";
import { SqliteUsageStore } from "./usage.ts";

/** Opens (creating if needed) the SQLite file at `path`; `:memory:` gives a private in-memory store. */
export function openSqliteStore(path: string): SqliteStore {
  const sqlite = new Database(path, { create: true, strict: true });
  sqlite.run("PRAGMA journal_mode = WAL");
  sqlite.run("PRAGMA synchronous = NORMAL");
  sqlite.run("PRAGMA busy_timeout = 5000");
  sqlite.run("PRAGMA foreign_keys = ON");
  return new SqliteStore(sqlite);
}

export class SqliteStore extends DrizzleStore implements Store {
  readonly #sqlite: Database;
  readonly #db: BunSQLiteDatabase;
  readonly usage: SqliteUsageStore;
  #revision: ReturnType<typeof metaQuery> | undefined;

  constructor(sqlite: Database) {
    const db = drizzle({ client: sqlite });
    super(sqliteDialect(db));
    this.#sqlite = sqlite;
    this.#db = db;
    this.usage = new SqliteUsageStore(db, sqlite);
  }

  async migrate(): Promise<void> {
    // drizzle's dialect applies each pending migration and records its hash in __drizzle_migrations.
    const db = this.#db as unknown as {
      dialect: { migrate(m: unknown, s: unknown, c: unknown): void };
      session: unknown;
    };
    db.dialect.migrate(embeddedMigrations(), db.session, { migrationsFolder: "" });
    this.#db.insert(storeMeta).values({ name: REVISION_META, value: 0 }).onConflictDoNothing().run();
  }

  async revision(): Promise<number> {
    // Polled 4 times a second by the key cache and again by the balance sync: prepared once (at
    // the first poll, after migrate made the table), not built and prepared by drizzle each time.
    this.#revision ??= metaQuery(this.#db, REVISION_META);
    return this.#revision.get()?.value ?? 0;
  }

  async isEmpty(): Promise<boolean> {
    const a = this.#db.select({ n: sql<number>`count(*)` }).from(accounts).get();
    const k = this.#db.select({ n: sql<number>`count(*)` }).from(apiKeys).get();
    return (a?.n ?? 0) === 0 && (k?.n ?? 0) === 0;
  }

  async ping(): Promise<void> {
    this.#sqlite.query("SELECT 1").get();
  }

  async close(): Promise<void> {
    this.#sqlite.close();
  }

  /** Runs `fn` in one write transaction that also bumps the revision gateways poll. */
  #change<T>(fn: (tx: BunSQLiteDatabase) => T): T {
    return this.#db.transaction((tx) => {
      const result = fn(tx as unknown as BunSQLiteDatabase);
      bumpSqliteRevision(tx as unknown as BunSQLiteDatabase);
      return result;
    }, WRITE);
  }

  async createAccount(name: string, balance: Nanos): Promise<Account> {
    return this.#change((tx) => {
      if (tx.select({ id: accounts.id }).from(accounts).where(eq(accounts.name, name)).get()) {
        throw new StoreError("conflict", `account "${name}" already exists`);
      }
      const row = tx.insert(accounts).values({ name, balanceNanos: balance }).returning().get();
      if (balance > 0) {
        tx.insert(ledger)
          .values({ accountId: row.id, amountNanos: balance, kind: "credit", note: "opening balance" })
          .run();
      }
      return toAccount(row);
    });
  }

  async creditAccount(name: string, amount: Nanos, note: string): Promise<Account> {
    return this.#change((tx) => {
      const row = tx
        .update(accounts)
        .set({ balanceNanos: sql`${accounts.balanceNanos} + ${amount}` })
        .where(eq(accounts.name, name))
        .returning()
        .get();
      if (!row) throw new StoreError("not_found", `account "${name}" does not exist`);
      tx.insert(ledger).values({ accountId: row.id, amountNanos: amount, kind: "credit", note }).run();
      tx.insert(storeMeta)
        .values({ name: `${CREDITED_META}${row.id}`, value: amount })
        .onConflictDoUpdate({ target: storeMeta.name, set: { value: sql`${storeMeta.value} + ${amount}` } })
        .run();
      return toAccount(row);
    });
  }

  async setGroup(name: string, modelPatterns: string[]): Promise<Group> {
    return this.#change((tx) => {
      const row = tx
        .insert(groups)
        .values({ name, modelPatterns })
        .onConflictDoUpdate({ target: groups.name, set: { modelPatterns } })
        .returning()
        .get();
      return { id: row.id, name: row.name, modelPatterns: row.modelPatterns };
    });
  }

  async createKey(key: NewKey): Promise<KeyRecord> {
    this.#change((tx) => {
      const account = tx
        .select({ id: accounts.id })
        .from(accounts)
        .where(eq(accounts.name, key.account))
        .get();
      if (!account) throw new StoreError("not_found", `account "${key.account}" does not exist`);
      const group = tx.select({ id: groups.id }).from(groups).where(eq(groups.name, key.group)).get();
      if (!group) throw new StoreError("not_found", `group "${key.group}" does not exist`);
      tx.insert(apiKeys)
        .values(newKeyRow(key, account.id, group.id))
        .run();
    });
    return this.admin.getKey(key.id);
  }

  async touchKeys(lastUsed: ReadonlyMap<KeyId, number>): Promise<void> {
    if (lastUsed.size === 0) return;
    // Not a #change: last-used times are informational and must not make every gateway reload.
    this.#db.transaction((tx) => {
      for (const [id, at] of lastUsed) {
        tx.update(apiKeys).set({ lastUsedAt: at }).where(eq(apiKeys.id, id)).run();
      }
    }, WRITE);
  }
}
