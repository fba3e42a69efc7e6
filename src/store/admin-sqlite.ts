// SQLite implementation of the AdminStore (tokens, audit, key edits, usage reads, notifications).
import { and, desc, eq, gte, sql } from "drizzle-orm";
import type { BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
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
import {
  adminTokens,
  apiKeys,
  auditLog,
  groups,
  notificationChannels,
  notificationDeliveries,
  storeMeta,
  usageRecords,
} from "./schema.ts";
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
import { selectKeys } from "./sqlite-keys.ts";
import { type KeyRecord, StoreError } from "./store.ts";
import { sqliteDay, WRITE } from "./usage-sqlite.ts";

const tokenColumns = tokenColumnsOf(adminTokens);

export class SqliteAdminStore implements AdminStore {
  readonly #db: BunSQLiteDatabase;

  constructor(db: BunSQLiteDatabase) {
    this.#db = db;
  }

  async createAdminToken(token: NewAdminToken): Promise<AdminToken> {
    return this.#db.insert(adminTokens).values(token).returning(tokenColumns).get();
  }

  async findAdminToken(tokenHash: string): Promise<AdminToken | undefined> {
    return this.#db
      .select(tokenColumns)
      .from(adminTokens)
      .where(and(eq(adminTokens.tokenHash, tokenHash), eq(adminTokens.revoked, false)))
      .get();
  }

  async revokeAdminToken(id: string): Promise<AdminToken | undefined> {
    return this.#db
      .update(adminTokens)
      .set({ revoked: true })
      .where(eq(adminTokens.id, id))
      .returning(tokenColumns)
      .get();
  }

  async listAdminTokens(): Promise<AdminToken[]> {
    return this.#db.select(tokenColumns).from(adminTokens).orderBy(sql`rowid`).all();
  }

  async isApiKeyHash(secretHash: string): Promise<boolean> {
    const row = this.#db
      .select({ id: apiKeys.id })
      .from(apiKeys)
      .where(eq(apiKeys.secretHash, secretHash))
      .get();
    return row !== undefined;
  }

  async audit(actor: string, action: string, target: string, detail?: Record<string, unknown>) {
    this.#db
      .insert(auditLog)
      .values({ actor, action, target, detail: detail ?? null })
      .run();
  }

  async listAudit(limit: number): Promise<AuditEntry[]> {
    return this.#db.select().from(auditLog).orderBy(desc(auditLog.id)).limit(limit).all();
  }

  async getKey(id: string): Promise<KeyRecord> {
    const row = selectKeys(this.#db).where(eq(apiKeys.id, id)).get();
    if (!row)
      throw new StoreError("not_found", `key "${id}" does not exist; GET /admin/v1/keys lists the ids`);
    return toKeyRecord(row);
  }

  async updateKey(id: string, patch: KeyPatch): Promise<KeyRecord> {
    this.#db.transaction((tx) => {
      const set = keyPatchSet(patch);
      if (patch.group !== undefined) {
        const group = tx.select({ id: groups.id }).from(groups).where(eq(groups.name, patch.group)).get();
        if (!group) throw new StoreError("not_found", `group "${patch.group}" does not exist`);
        set.groupId = group.id;
      }
      const row =
        Object.keys(set).length === 0
          ? tx.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.id, id)).get()
          : tx.update(apiKeys).set(set).where(eq(apiKeys.id, id)).returning({ id: apiKeys.id }).get();
      if (!row) throw new StoreError("not_found", `key "${id}" does not exist`);
      // The revision gateways poll: a changed key reaches every key cache.
      tx.update(storeMeta)
        .set({ value: sql`${storeMeta.value} + 1` })
        .where(eq(storeMeta.name, "revision"))
        .run();
    }, WRITE);
    return this.getKey(id);
  }

  async spending(since: number) {
    const rows = this.#db
      .select(spendingFields(usageRecords))
      .from(usageRecords)
      .where(gte(usageRecords.createdAt, since))
      .groupBy(usageRecords.keyId, usageRecords.accountId)
      .all();
    return spendingOf(rows);
  }

  async usage(grouping: UsageGrouping, filter: UsageFilter): Promise<UsageAggregate[]> {
    const bucket = totalsGroup(usageRecords, grouping, 0, sqliteDay);
    return this.#db
      .select(aggregateFields(usageRecords, bucket))
      .from(usageRecords)
      .where(usageWhereOf(usageRecords, filter))
      .groupBy(bucket)
      .orderBy(bucket)
      .all();
  }

  async recentRequests(filter: UsageFilter, limit: number): Promise<UsageRow[]> {
    return this.#db
      .select(recentColumnsOf(usageRecords))
      .from(usageRecords)
      .where(usageWhereOf(usageRecords, filter))
      .orderBy(desc(usageRecords.id))
      .limit(limit)
      .all();
  }

  async createChannel(channel: NewChannel): Promise<NotificationChannel> {
    const row = this.#db.insert(notificationChannels).values(channelRow(channel)).returning().get();
    return toChannel(row);
  }

  async listChannels(): Promise<NotificationChannel[]> {
    return this.#db.select().from(notificationChannels).orderBy(notificationChannels.id).all().map(toChannel);
  }

  async disableChannel(id: number): Promise<NotificationChannel> {
    const row = this.#db
      .update(notificationChannels)
      .set({ enabled: false })
      .where(eq(notificationChannels.id, id))
      .returning()
      .get();
    if (!row) throw new StoreError("not_found", `notification channel ${id} does not exist`);
    return toChannel(row);
  }

  async createDelivery(delivery: Pick<Delivery, "id" | "channelId" | "event" | "payload">) {
    this.#db
      .insert(notificationDeliveries)
      .values({ ...delivery, state: "pending" })
      .run();
  }

  async updateDelivery(
    id: string,
    update: Pick<Delivery, "state" | "attempts" | "lastStatus" | "lastError">,
  ) {
    this.#db
      .update(notificationDeliveries)
      .set({ ...update, updatedAt: Date.now() })
      .where(eq(notificationDeliveries.id, id))
      .run();
  }

  async listDeliveries(limit: number, channelId?: number): Promise<Delivery[]> {
    return (
      this.#db
        .select()
        .from(notificationDeliveries)
        .where(channelId === undefined ? undefined : eq(notificationDeliveries.channelId, channelId))
        // Newest first by insertion order (rowid): created_at ties within a millisecond, ids are random.
        .orderBy(desc(sql`rowid`))
        .limit(limit)
        .all()
    );
  }
}
