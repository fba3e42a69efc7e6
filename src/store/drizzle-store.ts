// What the SQLite and the PostgreSQL Store do the same way, over their dialect (dialect.ts): the
// admin part, key and account reads, and a key's status (one statement and the revision, in the
// dialect's transaction). Each store (sqlite.ts, pg.ts) extends it with its opening, migration,
// revision reads and its transactions that change accounts, groups and keys.
import { eq, getTableColumns } from "drizzle-orm";
import type { KeyId } from "../base/types.ts";
import { toAccount } from "./admin-rows.ts";
import { DrizzleAdminStore } from "./admin-store.ts";
import type { Dialect } from "./dialect.ts";
import { keyColumnsOf, selectKeys, toKeyRecord } from "./key-rows.ts";
import type { Account, AuthKeyRecord, Group, KeyRecord, KeyStatus } from "./store.ts";
import { StoreError } from "./store.ts";

export abstract class DrizzleStore {
  readonly #dialect: Dialect;
  readonly admin: DrizzleAdminStore;

  constructor(dialect: Dialect) {
    this.#dialect = dialect;
    this.admin = new DrizzleAdminStore(dialect);
  }

  async listAccounts(): Promise<Account[]> {
    const { accounts } = this.#dialect.tables;
    const rows = await this.#dialect.db.select(getTableColumns(accounts)).from(accounts).orderBy(accounts.id);
    return rows.map(toAccount);
  }

  async listGroups(): Promise<Group[]> {
    const { groups } = this.#dialect.tables;
    return this.#dialect.db
      .select({ id: groups.id, name: groups.name, modelPatterns: groups.modelPatterns })
      .from(groups)
      .orderBy(groups.id);
  }

  async listKeys(): Promise<KeyRecord[]> {
    const { apiKeys } = this.#dialect.tables;
    return (await selectKeys(this.#dialect).orderBy(apiKeys.createdAt, apiKeys.id)).map(toKeyRecord);
  }

  async setKeyStatus(id: KeyId, status: KeyStatus): Promise<KeyRecord> {
    if (!(await this.#dialect.patchKey(id, { status }))) {
      throw new StoreError("not_found", `key "${id}" does not exist; \`modelgate keys list\` shows the ids`);
    }
    return this.admin.getKey(id);
  }

  /** Every key with its secret's hash and its group's model patterns, for the auth cache. */
  async loadAuthKeys(): Promise<AuthKeyRecord[]> {
    const { apiKeys, accounts, groups } = this.#dialect.tables;
    const rows = await this.#dialect.db
      .select({
        ...keyColumnsOf(apiKeys, accounts, groups),
        secretHash: apiKeys.secretHash,
        groupModelPatterns: groups.modelPatterns,
      })
      .from(apiKeys)
      .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
      .innerJoin(groups, eq(groups.id, apiKeys.groupId));
    return rows.map((row) => ({
      ...toKeyRecord(row),
      secretHash: row.secretHash,
      groupModelPatterns: row.groupModelPatterns,
    }));
  }
}
