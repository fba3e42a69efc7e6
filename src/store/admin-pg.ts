// PostgreSQL implementation of the AdminStore (tokens, audit, key edits, usage reads, notifications):
// the queries of admin-sqlite.ts on the pg twin tables, awaited, with aggregates mapped to numbers
// (PostgreSQL sums bigints as numeric, which the driver returns as text).

import { and, desc, eq, gte } from "drizzle-orm";
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
  UsageRow,
} from "./admin.ts";
import { type PgDb, selectPgKeys } from "./pg-keys.ts";
import { bumpRevision } from "./pg-notify.ts";
import {
  adminTokens,
  apiKeys,
  auditLog,
  groups,
  notificationChannels,
  notificationDeliveries,
  usageRecords,
} from "./schema-pg.ts";
import {
  aggregateFields,
  channelRow,
  keyPatchSet,
  recentColumnsOf,
  spendingFields,
  spendingOf,
  toChannel,
  toKeyRecord,
  tokenColumnsOf,
  totalsGroup,
  usageWhereOf,
} from "./shapes.ts";
import { type KeyRecord, StoreError } from "./store.ts";
import { pgDay } from "./usage-pg.ts";

const tokenColumns = tokenColumnsOf(adminTokens);

export class PgAdminStore implements AdminStore {
  readonly #db: PgDb;

  constructor(db: PgDb) {
    this.#db = db;
  }

  async createAdminToken(token: NewAdminToken): Promise<AdminToken> {
    const [row] = await this.#db.insert(adminTokens).values(token).returning(tokenColumns);
    if (row === undefined) throw new Error(`admin token "${token.name}" was not stored`);
    return row;
  }

  async findAdminToken(tokenHash: string): Promise<AdminToken | undefined> {
    const [row] = await this.#db
      .select(tokenColumns)
      .from(adminTokens)
      .where(and(eq(adminTokens.tokenHash, tokenHash), eq(adminTokens.revoked, false)));
    return row;
  }

  async revokeAdminToken(id: string): Promise<AdminToken | undefined> {
    const [row] = await this.#db
      .update(adminTokens)
      .set({ revoked: true })
      .where(eq(adminTokens.id, id))
      .returning(tokenColumns);
    return row;
  }

  async listAdminTokens(): Promise<AdminToken[]> {
    return this.#db.select(tokenColumns).from(adminTokens).orderBy(adminTokens.createdAt, adminTokens.id);
  }

  async isApiKeyHash(secretHash: string): Promise<boolean> {
    const rows = await this.#db
      .select({ id: apiKeys.id })
      .from(apiKeys)
      .where(eq(apiKeys.secretHash, secretHash));
    return rows.length > 0;
  }

  async audit(actor: string, action: string, target: string, detail?: Record<string, unknown>) {
    await this.#db.insert(auditLog).values({ actor, action, target, detail: detail ?? null });
  }

  async listAudit(limit: number): Promise<AuditEntry[]> {
    return this.#db.select().from(auditLog).orderBy(desc(auditLog.id)).limit(limit);
  }

  async getKey(id: string): Promise<KeyRecord> {
    const [row] = await selectPgKeys(this.#db).where(eq(apiKeys.id, id));
    if (!row)
      throw new StoreError("not_found", `key "${id}" does not exist; GET /admin/v1/keys lists the ids`);
    return toKeyRecord(row);
  }

  async updateKey(id: string, patch: KeyPatch): Promise<KeyRecord> {
    await this.#db.transaction(async (tx) => {
      const set = keyPatchSet(patch);
      if (patch.group !== undefined) {
        const [group] = await tx.select({ id: groups.id }).from(groups).where(eq(groups.name, patch.group));
        if (!group) throw new StoreError("not_found", `group "${patch.group}" does not exist`);
        set.groupId = group.id;
      }
      const [row] =
        Object.keys(set).length === 0
          ? await tx.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.id, id))
          : await tx.update(apiKeys).set(set).where(eq(apiKeys.id, id)).returning({ id: apiKeys.id });
      if (!row) throw new StoreError("not_found", `key "${id}" does not exist`);
      // The revision gateways poll and listen for: a changed key reaches every key cache.
      await bumpRevision(tx);
    });
    return this.getKey(id);
  }

  async spending(since: number) {
    const rows = await this.#db
      .select(spendingFields(usageRecords))
      .from(usageRecords)
      .where(gte(usageRecords.createdAt, since))
      .groupBy(usageRecords.keyId, usageRecords.accountId);
    return spendingOf(rows);
  }

  async usage(grouping: UsageGrouping, filter: UsageFilter): Promise<UsageAggregate[]> {
    const bucket = totalsGroup(usageRecords, grouping, 0, pgDay);
    return this.#db
      .select(aggregateFields(usageRecords, bucket))
      .from(usageRecords)
      .where(usageWhereOf(usageRecords, filter))
      .groupBy(bucket)
      .orderBy(bucket);
  }

  async recentRequests(filter: UsageFilter, limit: number): Promise<UsageRow[]> {
    return this.#db
      .select(recentColumnsOf(usageRecords))
      .from(usageRecords)
      .where(usageWhereOf(usageRecords, filter))
      .orderBy(desc(usageRecords.id))
      .limit(limit);
  }

  async createChannel(channel: NewChannel): Promise<NotificationChannel> {
    const [row] = await this.#db.insert(notificationChannels).values(channelRow(channel)).returning();
    if (row === undefined) throw new Error(`notification channel ${channel.target} was not stored`);
    return toChannel(row);
  }

  async listChannels(): Promise<NotificationChannel[]> {
    return (await this.#db.select().from(notificationChannels).orderBy(notificationChannels.id)).map(
      toChannel,
    );
  }

  async disableChannel(id: number): Promise<NotificationChannel> {
    const [row] = await this.#db
      .update(notificationChannels)
      .set({ enabled: false })
      .where(eq(notificationChannels.id, id))
      .returning();
    if (!row) throw new StoreError("not_found", `notification channel ${id} does not exist`);
    return toChannel(row);
  }

  async createDelivery(delivery: Pick<Delivery, "id" | "channelId" | "event" | "payload">) {
    await this.#db.insert(notificationDeliveries).values({ ...delivery, state: "pending" });
  }

  async updateDelivery(
    id: string,
    update: Pick<Delivery, "state" | "attempts" | "lastStatus" | "lastError">,
  ) {
    await this.#db
      .update(notificationDeliveries)
      .set({ ...update, updatedAt: Date.now() })
      .where(eq(notificationDeliveries.id, id));
  }

  async listDeliveries(limit: number, channelId?: number): Promise<Delivery[]> {
    // Newest first. PostgreSQL has no insertion order (rowid): creation time, then id, decide.
    return this.#db
      .select()
      .from(notificationDeliveries)
      .where(channelId === undefined ? undefined : eq(notificationDeliveries.channelId, channelId))
      .orderBy(desc(notificationDeliveries.createdAt), desc(notificationDeliveries.id))
      .limit(limit);
  }
}
