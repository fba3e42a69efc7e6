// The SQLite store: drizzle-orm over bun:sqlite, WAL mode, migrations applied at open.
import { Database } from "bun:sqlite";
import { eq, sql } from "drizzle-orm";
import { type BunSQLiteDatabase, drizzle } from "drizzle-orm/bun-sqlite";
import type { Nanos } from "../types.ts";
import { SqliteAdminStore } from "./admin-sqlite.ts";
import { embeddedMigrations } from "./migrations.ts";
import { accounts, apiKeys, groups, ledger, storeMeta } from "./schema.ts";
import { newKeyRow, toAccount, toKeyRecord } from "./shapes.ts";
import { keyColumns, selectKeys } from "./sqlite-keys.ts";
import type { Account, AuthKeyRecord, Group, KeyRecord, KeyStatus, NewKey, Store } from "./store.ts";
import { StoreError } from "./store.ts";
import { CREDITED_META, REVISION_META } from "./usage.ts";
import { metaQuery, SqliteUsageStore, WRITE } from "./usage-sqlite.ts";

/** Opens (creating if needed) the SQLite file at `path`; `:memory:` gives a private in-memory store. */
export function openSqliteStore(path: string): SqliteStore {
  const sqlite = new Database(path, { create: true, strict: true });
  sqlite.run("PRAGMA journal_mode = WAL");
  sqlite.run("PRAGMA synchronous = NORMAL");
  sqlite.run("PRAGMA busy_timeout = 5000");
  sqlite.run("PRAGMA foreign_keys = ON");
  return new SqliteStore(sqlite);
}

export class SqliteStore implements Store {
  readonly #sqlite: Database;
  readonly #db: BunSQLiteDatabase;
  readonly admin: SqliteAdminStore;
  readonly usage: SqliteUsageStore;
  #revision: ReturnType<typeof metaQuery> | undefined;

  constructor(sqlite: Database) {
    this.#sqlite = sqlite;
    this.#db = drizzle({ client: sqlite });
    this.admin = new SqliteAdminStore(this.#db);
    this.usage = new SqliteUsageStore(this.#db, sqlite);
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
      tx.update(storeMeta)
        .set({ value: sql`${storeMeta.value} + 1` })
        .where(eq(storeMeta.name, REVISION_META))
        .run();
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

  async listAccounts(): Promise<Account[]> {
    return this.#db.select().from(accounts).orderBy(accounts.id).all().map(toAccount);
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

  async listGroups(): Promise<Group[]> {
    return this.#db
      .select({ id: groups.id, name: groups.name, modelPatterns: groups.modelPatterns })
      .from(groups)
      .orderBy(groups.id)
      .all();
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
    return this.#getKey(key.id);
  }

  async listKeys(): Promise<KeyRecord[]> {
    return this.#keyQuery().orderBy(apiKeys.createdAt, apiKeys.id).all().map(toKeyRecord);
  }

  async setKeyStatus(id: string, status: KeyStatus): Promise<KeyRecord> {
    this.#change((tx) => {
      const row = tx
        .update(apiKeys)
        .set({ status })
        .where(eq(apiKeys.id, id))
        .returning({ id: apiKeys.id })
        .get();
      if (!row)
        throw new StoreError(
          "not_found",
          `key "${id}" does not exist; \`modelgate keys list\` shows the ids`,
        );
    });
    return this.#getKey(id);
  }

  async loadAuthKeys(): Promise<AuthKeyRecord[]> {
    return this.#db
      .select({ ...keyColumns, secretHash: apiKeys.secretHash, groupModelPatterns: groups.modelPatterns })
      .from(apiKeys)
      .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
      .innerJoin(groups, eq(groups.id, apiKeys.groupId))
      .all()
      .map((row) => ({
        ...toKeyRecord(row),
        secretHash: row.secretHash,
        groupModelPatterns: row.groupModelPatterns,
      }));
  }

  async touchKeys(lastUsed: ReadonlyMap<string, number>): Promise<void> {
    if (lastUsed.size === 0) return;
    // Not a #change: last-used times are informational and must not make every gateway reload.
    this.#db.transaction((tx) => {
      for (const [id, at] of lastUsed) {
        tx.update(apiKeys).set({ lastUsedAt: at }).where(eq(apiKeys.id, id)).run();
      }
    }, WRITE);
  }

  #keyQuery() {
    return selectKeys(this.#db);
  }

  #getKey(id: string): KeyRecord {
    const row = this.#keyQuery().where(eq(apiKeys.id, id)).get();
    if (!row) throw new StoreError("not_found", `key "${id}" does not exist`);
    return toKeyRecord(row);
  }
}
