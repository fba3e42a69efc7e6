// The PostgreSQL tables, written beside their SQLite twins in sqlite/schema.ts with the same table,
// column, unique, index and foreign-key names and the same TypeScript row types, so the queries
// written once over the dialect (dialect.ts) read either. Integers are bigint (nanos and epoch
// milliseconds outgrow 32 bits) read as JS numbers, autoincrement keys bigserial, JSON stays text
// holding JSON, booleans are booleans, and created_at defaults to PostgreSQL's epoch milliseconds.
// drizzle-kit reads this file for migrations/pg/; test/unit/store-pg.test.ts checks that a migrated
// database has exactly sqlite/schema.ts's tables, columns, nullability and indexes.
import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  boolean,
  customType,
  index,
  type PgColumn,
  pgTable,
  text,
} from "drizzle-orm/pg-core";
import type { AccountId, KeyId, ModelId } from "../../base/types.ts";
import type { ToolCalls } from "../../wire/usage-counts.ts";
import type { Budgets } from "../sqlite/schema.ts";

/**
 * JSON kept as text, as in SQLite: drizzle-orm/bun-sql sends a jsonb parameter as a JSON string,
 * which PostgreSQL then stores as a jsonb *string* (measured); nothing queries inside these values.
 */
const jsonText = customType<{ data: unknown; driverData: string }>({
  dataType: () => "text",
  toDriver: (value) => JSON.stringify(value),
  fromDriver: (value) => JSON.parse(value),
});

/** The default of every created_at: now in epoch milliseconds (sqlite/schema.ts's nowMs on SQLite). */
const nowMs = sql`((extract(epoch from clock_timestamp()) * 1000)::bigint)`;

/** An integer column: bigint, read as a JS number. */
const int = (name: string) => bigint(name, { mode: "number" });

/** An autoincrement key. */
const serialId = () => bigserial("id", { mode: "number" }).primaryKey();

/** A time column set when the row is written: epoch milliseconds. */
const stamped = (name: string) => int(name).notNull().default(nowMs);

/** A row's required owner: the id of a row in another table. */
const owner = (name: string, id: () => PgColumn) => int(name).notNull().references(id);

export const accounts = pgTable("accounts", {
  id: serialId().$type<AccountId>(),
  name: text("name").notNull().unique(),
  balanceNanos: int("balance_nanos").notNull().default(0),
  /** Budgets with periods, nano-USD by period (`{"monthly": 50000000000}`); null = none. */
  budgets: jsonText("budgets").$type<Budgets>(),
  createdAt: stamped("created_at"),
});

export const groups = pgTable("groups", {
  id: serialId(),
  name: text("name").notNull().unique(),
  modelPatterns: jsonText("model_patterns").$type<string[]>().notNull(),
  createdAt: stamped("created_at"),
});

export const apiKeys = pgTable(
  "api_keys",
  {
    id: text("id").primaryKey().$type<KeyId>(),
    accountId: owner("account_id", () => accounts.id).$type<AccountId>(),
    groupId: owner("group_id", () => groups.id),
    name: text("name").notNull(),
    prefix: text("prefix").notNull(),
    secretHash: text("secret_hash").notNull().unique(),
    status: text("status", { enum: ["enabled", "revoked"] }).notNull(),
    expiresAt: int("expires_at"),
    allowIps: jsonText("allow_ips").$type<string[]>(),
    dailyCapNanos: int("daily_cap_nanos"),
    rpm: int("rpm"),
    concurrency: int("concurrency"),
    /** Tokens per sliding minute (worst case held at admission, corrected at settlement); null = the group's. */
    tpm: int("tpm"),
    /** Budgets with periods other than daily (the daily cap is `daily_cap_nanos`), nano-USD by period. */
    budgets: jsonText("budgets").$type<Budgets>(),
    createdAt: stamped("created_at"),
    lastUsedAt: int("last_used_at"),
  },
  (t) => [index("api_keys_account_idx").on(t.accountId)],
);

export const ledger = pgTable(
  "ledger",
  {
    id: serialId(),
    accountId: owner("account_id", () => accounts.id).$type<AccountId>(),
    amountNanos: int("amount_nanos").notNull(),
    kind: text("kind", { enum: ["credit", "debit"] }).notNull(),
    requestId: text("request_id").unique(),
    note: text("note").notNull().default(""),
    createdAt: stamped("created_at"),
  },
  (t) => [index("ledger_account_idx").on(t.accountId)],
);

export const storeMeta = pgTable("store_meta", {
  name: text("name").primaryKey(),
  value: int("value").notNull(),
});

export const usageRecords = pgTable(
  "usage_records",
  {
    id: serialId(),
    requestId: text("request_id").notNull().unique(),
    clientRequestId: text("client_request_id"),
    keyId: text("key_id").notNull().$type<KeyId>(),
    accountId: int("account_id").notNull().$type<AccountId>(),
    model: text("model").notNull().$type<ModelId>(),
    endpoint: text("endpoint").notNull(),
    stream: boolean("stream").notNull(),
    status: int("status").notNull(),
    inputTokens: int("input_tokens").notNull().default(0),
    cachedInputTokens: int("cached_input_tokens").notNull().default(0),
    cacheWriteTokens: int("cache_write_tokens").notNull().default(0),
    cacheWrite1hTokens: int("cache_write_1h_tokens").notNull().default(0),
    outputTokens: int("output_tokens").notNull().default(0),
    reasoningTokens: int("reasoning_tokens").notNull().default(0),
    generations: int("generations").notNull().default(0),
    toolCalls: jsonText("tool_calls").$type<ToolCalls>(),
    audioMs: int("audio_ms").notNull().default(0),
    characters: int("characters").notNull().default(0),
    costNanos: int("cost_nanos").notNull().default(0),
    usageSource: text("usage_source", { enum: ["reported", "counted", "estimated", "none"] }).notNull(),
    channels: text("channels").notNull().default(""),
    latencyMs: int("latency_ms").notNull().default(0),
    ttfbMs: int("ttfb_ms"),
    clientAddress: text("client_address"),
    endUser: text("end_user"),
    alias: text("alias"),
    cacheHit: boolean("cache_hit").notNull().default(false),
    detail: jsonText("detail").$type<Record<string, unknown>>(),
    createdAt: stamped("created_at"),
  },
  (t) => [
    index("usage_key_time_idx").on(t.keyId, t.createdAt),
    index("usage_account_time_idx").on(t.accountId, t.createdAt),
  ],
);

export const auditLog = pgTable("audit_log", {
  id: serialId(),
  actor: text("actor").notNull(),
  action: text("action").notNull(),
  target: text("target").notNull(),
  detail: jsonText("detail").$type<Record<string, unknown>>(),
  createdAt: stamped("created_at"),
});

export const adminTokens = pgTable("admin_tokens", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  prefix: text("prefix").notNull(),
  tokenHash: text("token_hash").notNull().unique(),
  revoked: boolean("revoked").notNull().default(false),
  createdAt: stamped("created_at"),
});

export const notificationChannels = pgTable("notification_channels", {
  id: serialId(),
  accountId: int("account_id")
    .references(() => accounts.id)
    .$type<AccountId>(),
  kind: text("kind", { enum: ["webhook", "email"] }).notNull(),
  target: text("target").notNull(),
  secret: text("secret"),
  events: jsonText("events").$type<string[]>().notNull(),
  balanceThresholdNanos: int("balance_threshold_nanos"),
  enabled: boolean("enabled").notNull().default(true),
  createdAt: stamped("created_at"),
});

export const notificationDeliveries = pgTable(
  "notification_deliveries",
  {
    id: text("id").primaryKey(),
    channelId: owner("channel_id", () => notificationChannels.id),
    event: text("event").notNull(),
    payload: jsonText("payload").$type<Record<string, unknown>>().notNull(),
    state: text("state", { enum: ["pending", "delivered", "failed"] }).notNull(),
    attempts: int("attempts").notNull().default(0),
    lastStatus: int("last_status"),
    lastError: text("last_error"),
    createdAt: stamped("created_at"),
    updatedAt: stamped("updated_at"),
  },
  (t) => [index("notification_deliveries_channel_idx").on(t.channelId)],
);

export const responseCache = pgTable(
  "response_cache",
  {
    key: text("key").primaryKey(),
    scope: text("scope").notNull(),
    protocol: text("protocol").notNull(),
    answer: text("answer").notNull(),
    usage: jsonText("usage").$type<Record<string, unknown>>().notNull(),
    costNanos: int("cost_nanos").notNull(),
    bytes: int("bytes").notNull(),
    createdAt: stamped("created_at"),
    expiresAt: int("expires_at").notNull(),
  },
  (t) => [index("response_cache_created_idx").on(t.createdAt), index("response_cache_scope_idx").on(t.scope)],
);
