// The operator's part of the store (`store.admin`): admin tokens, the audit log, key edits,
// spending and usage aggregates read from usage_records, notification channels and deliveries.

import type { AccountId, KeyId, ModelId, Nanos } from "../base/types.ts";
import type { KeyRecord } from "./key-record.ts";
import type { Budgets } from "./sqlite/schema.ts";
import type { UsageRecord } from "./usage/record.ts";

export interface AdminToken {
  id: string;
  name: string;
  prefix: string;
  revoked: boolean;
  createdAt: number;
}

export interface NewAdminToken {
  id: string;
  name: string;
  prefix: string;
  tokenHash: string;
}

export interface AuditEntry {
  id: number;
  actor: string;
  action: string;
  target: string;
  detail: Record<string, unknown> | null;
  createdAt: number;
}

/** A partial change of a key: fields left undefined stay as they are; null clears a limit. */
export interface KeyPatch {
  name?: string | undefined;
  group?: string | undefined;
  expiresAt?: number | null | undefined;
  allowIps?: string[] | null | undefined;
  dailyCap?: Nanos | null | undefined;
  rpm?: number | null | undefined;
  concurrency?: number | null | undefined;
  tpm?: number | null | undefined;
  /** The key's weekly, monthly and total budgets (its daily one is `dailyCap`); null removes them all. */
  budgets?: Budgets | null | undefined;
}

export type UsageGrouping = "key" | "model" | "day";

export interface UsageFilter {
  /** Records created at or after this time (ms since epoch). */
  since: number;
  keyId?: KeyId | undefined;
  accountId?: AccountId | undefined;
  model?: ModelId | undefined;
}

export interface UsageAggregate {
  /** The key id, model id or UTC day (`YYYY-MM-DD`) the row sums. */
  bucket: string;
  requests: number;
  errors: number;
  inputTokens: number;
  outputTokens: number;
  generations: number;
  /** Audio billed per minute, in milliseconds, and speech input characters (usage_records' columns). */
  audioMs: number;
  characters: number;
  costNanos: number;
}

export type ChannelKind = "webhook" | "email";

export interface NotificationChannel {
  id: number;
  /** The account whose events the channel receives; null: every account's (an operator channel). */
  accountId: AccountId | null;
  kind: ChannelKind;
  target: string;
  secret: string | null;
  events: string[];
  balanceThreshold: Nanos | null;
  enabled: boolean;
  createdAt: number;
}

export type NewChannel = Omit<NotificationChannel, "id" | "createdAt" | "enabled">;

export type DeliveryState = "pending" | "delivered" | "failed";

export interface Delivery {
  id: string;
  channelId: number;
  event: string;
  payload: Record<string, unknown>;
  state: DeliveryState;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface AdminStore {
  createAdminToken(token: NewAdminToken): Promise<AdminToken>;
  /** The live (not revoked) token with this hash, if any. */
  findAdminToken(tokenHash: string): Promise<AdminToken | undefined>;
  listAdminTokens(): Promise<AdminToken[]>;
  /** Marks the token revoked (it is refused from the next request on); undefined when no token has this id. */
  revokeAdminToken(id: string): Promise<AdminToken | undefined>;
  /** True when an API key has this secret hash (someone sent an API key as admin token). */
  isApiKeyHash(secretHash: string): Promise<boolean>;

  audit(actor: string, action: string, target: string, detail?: Record<string, unknown>): Promise<void>;
  listAudit(limit: number): Promise<AuditEntry[]>;

  getKey(id: KeyId): Promise<KeyRecord>;
  /** Changes a key's settings and bumps the store revision so gateways reload their key cache. */
  updateKey(id: KeyId, patch: KeyPatch): Promise<KeyRecord>;

  /** Cost of requests since `since`, per key id and per account id. */
  spending(since: number): Promise<{ byKey: Map<KeyId, number>; byAccount: Map<AccountId, number> }>;
  /** Sets (null: removes) an account's budgets; every gateway applies them at its next revision check. */
  setAccountBudgets(account: string, budgets: Budgets | null): Promise<void>;
  usage(grouping: UsageGrouping, filter: UsageFilter): Promise<UsageAggregate[]>;
  recentRequests(filter: UsageFilter, limit: number): Promise<UsageRecord[]>;

  createChannel(channel: NewChannel): Promise<NotificationChannel>;
  listChannels(): Promise<NotificationChannel[]>;
  /** Turns a channel off (kept for its delivery history). */
  disableChannel(id: number): Promise<NotificationChannel>;

  createDelivery(delivery: Pick<Delivery, "id" | "channelId" | "event" | "payload">): Promise<void>;
  updateDelivery(
    id: string,
    update: Pick<Delivery, "state" | "attempts" | "lastStatus" | "lastError">,
  ): Promise<void>;
  listDeliveries(limit: number, channelId?: number): Promise<Delivery[]>;
}
