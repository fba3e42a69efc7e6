// The AdminStore (tokens, audit, key edits, usage reads, notifications), written once over a store
// dialect (dialect.ts): the same Drizzle queries run on SQLite and on PostgreSQL.

import { and, desc, eq, getTableColumns, gte } from "drizzle-orm";
import type { KeyId } from "../base/types.ts";
import type {
  AdminStore,
  AdminToken,
  AuditEntry,
  Delivery,
  KeyPatch,
  NewAdminToken,
  NewChannel,
  NotificationChannel,
  UsageAggregate,
  UsageFilter,
  UsageGrouping,
} from "./admin.ts";
import { channelRow, toChannel, tokenColumnsOf } from "./admin-rows.ts";
import type { Dialect, Tables } from "./dialect.ts";
import { keyPatchSet, selectKeys, toKeyRecord } from "./key-rows.ts";
import type { QueryDb } from "./query-db.ts";
import type { Budgets } from "./sqlite/schema.ts";
import { type KeyRecord, StoreError } from "./store.ts";
import type { UsageRecord } from "./usage/record.ts";
import { fromUsageRow } from "./usage/rows.ts";
import { spendingFields, spendingOf } from "./usage/seeds.ts";
import { aggregateFields, totalsGroup, usageWhereOf } from "./usage/totals.ts";

export class DrizzleAdminStore implements AdminStore {
  readonly #dialect: Dialect;
  readonly #db: QueryDb;
  readonly #t: Tables;
  readonly #tokenColumns;

  constructor(dialect: Dialect) {
    this.#dialect = dialect;
    this.#db = dialect.db;
    this.#t = dialect.tables;
    this.#tokenColumns = tokenColumnsOf(dialect.tables.adminTokens);
  }

  async createAdminToken(token: NewAdminToken): Promise<AdminToken> {
    const [row] = await this.#db.insert(this.#t.adminTokens).values(token).returning(this.#tokenColumns);
    if (row === undefined) throw new Error(`admin token "${token.name}" was not stored`);
    return row;
  }

  async findAdminToken(tokenHash: string): Promise<AdminToken | undefined> {
    const { adminTokens } = this.#t;
    const [row] = await this.#db
      .select(this.#tokenColumns)
      .from(adminTokens)
      .where(and(eq(adminTokens.tokenHash, tokenHash), eq(adminTokens.revoked, false)))
      .limit(1);
    return row;
  }

  async revokeAdminToken(id: string): Promise<AdminToken | undefined> {
    const { adminTokens } = this.#t;
    const [row] = await this.#db
      .update(adminTokens)
      .set({ revoked: true })
      .where(eq(adminTokens.id, id))
      .returning(this.#tokenColumns);
    return row;
  }

  async listAdminTokens(): Promise<AdminToken[]> {
    const { adminTokens } = this.#t;
    return this.#db
      .select(this.#tokenColumns)
      .from(adminTokens)
      .orderBy(...this.#dialect.insertionOrder(adminTokens));
  }

  async isApiKeyHash(secretHash: string): Promise<boolean> {
    const { apiKeys } = this.#t;
    const rows = await this.#db
      .select({ id: apiKeys.id })
      .from(apiKeys)
      .where(eq(apiKeys.secretHash, secretHash))
      .limit(1);
    return rows.length > 0;
  }

  async audit(actor: string, action: string, target: string, detail?: Record<string, unknown>) {
    await this.#db.insert(this.#t.auditLog).values({ actor, action, target, detail: detail ?? null });
  }

  async listAudit(limit: number): Promise<AuditEntry[]> {
    const { auditLog } = this.#t;
    return this.#db.select(getTableColumns(auditLog)).from(auditLog).orderBy(desc(auditLog.id)).limit(limit);
  }

  async getKey(id: KeyId): Promise<KeyRecord> {
    const [row] = await selectKeys(this.#dialect).where(eq(this.#t.apiKeys.id, id)).limit(1);
    if (!row)
      throw new StoreError("not_found", `key "${id}" does not exist; GET /admin/v1/keys lists the ids`);
    return toKeyRecord(row);
  }

  async updateKey(id: KeyId, patch: KeyPatch): Promise<KeyRecord> {
    const set = keyPatchSet(patch);
    if (patch.group !== undefined) {
      // Outside the key's transaction: groups are never deleted, so the id stays valid.
      const { groups } = this.#t;
      const [group] = await this.#db
        .select({ id: groups.id })
        .from(groups)
        .where(eq(groups.name, patch.group))
        .limit(1);
      if (!group) throw new StoreError("not_found", `group "${patch.group}" does not exist`);
      set.groupId = group.id;
    }
    if (!(await this.#dialect.patchKey(id, set))) {
      throw new StoreError("not_found", `key "${id}" does not exist`);
    }
    return this.getKey(id);
  }

  async setAccountBudgets(account: string, budgets: Budgets | null): Promise<void> {
    if (!(await this.#dialect.patchAccountBudgets(account, budgets))) {
      throw new StoreError("not_found", `account "${account}" does not exist`);
    }
  }

  async spending(since: number) {
    const { usageRecords } = this.#t;
    const rows = await this.#db
      .select(spendingFields(usageRecords))
      .from(usageRecords)
      .where(gte(usageRecords.createdAt, since))
      .groupBy(usageRecords.keyId, usageRecords.accountId);
    return spendingOf(rows);
  }

  async usage(grouping: UsageGrouping, filter: UsageFilter): Promise<UsageAggregate[]> {
    const { usageRecords } = this.#t;
    const bucket = totalsGroup(usageRecords, grouping, 0, this.#dialect.day);
    return this.#db
      .select(aggregateFields(usageRecords, bucket))
      .from(usageRecords)
      .where(usageWhereOf(usageRecords, filter))
      .groupBy(bucket)
      .orderBy(bucket);
  }

  async recentRequests(filter: UsageFilter, limit: number): Promise<UsageRecord[]> {
    const { usageRecords } = this.#t;
    const rows = await this.#db
      .select(getTableColumns(usageRecords))
      .from(usageRecords)
      .where(usageWhereOf(usageRecords, filter))
      .orderBy(desc(usageRecords.id))
      .limit(limit);
    return rows.map(fromUsageRow);
  }

  async createChannel(channel: NewChannel): Promise<NotificationChannel> {
    const { notificationChannels } = this.#t;
    const [row] = await this.#db
      .insert(notificationChannels)
      .values(channelRow(channel))
      .returning(getTableColumns(notificationChannels));
    if (row === undefined) throw new Error(`notification channel ${channel.target} was not stored`);
    return toChannel(row);
  }

  async listChannels(): Promise<NotificationChannel[]> {
    const { notificationChannels } = this.#t;
    const rows = await this.#db
      .select(getTableColumns(notificationChannels))
      .from(notificationChannels)
      .orderBy(notificationChannels.id);
    return rows.map(toChannel);
  }

  async disableChannel(id: number): Promise<NotificationChannel> {
    const { notificationChannels } = this.#t;
    const [row] = await this.#db
      .update(notificationChannels)
      .set({ enabled: false })
      .where(eq(notificationChannels.id, id))
      .returning(getTableColumns(notificationChannels));
    if (!row) throw new StoreError("not_found", `notification channel ${id} does not exist`);
    return toChannel(row);
  }

  async createDelivery(delivery: Pick<Delivery, "id" | "channelId" | "event" | "payload">) {
    await this.#db.insert(this.#t.notificationDeliveries).values({ ...delivery, state: "pending" });
  }

  async updateDelivery(
    id: string,
    update: Pick<Delivery, "state" | "attempts" | "lastStatus" | "lastError">,
  ) {
    const { notificationDeliveries } = this.#t;
    await this.#db
      .update(notificationDeliveries)
      .set({ ...update, updatedAt: Date.now() })
      .where(eq(notificationDeliveries.id, id));
  }

  async listDeliveries(limit: number, channelId?: number): Promise<Delivery[]> {
    const { notificationDeliveries } = this.#t;
    // Newest first: insertion order reversed.
    return this.#db
      .select(getTableColumns(notificationDeliveries))
      .from(notificationDeliveries)
      .where(channelId === undefined ? undefined : eq(notificationDeliveries.channelId, channelId))
      .orderBy(...this.#dialect.insertionOrder(notificationDeliveries).map((by) => desc(by)))
      .limit(limit);
  }
}
