// Drizzle table definitions of the SQLite store, with their meaning; pg/schema.ts holds the same
// tables for PostgreSQL (test/unit/store-schemas.test.ts checks they agree). drizzle-kit turns
// changes into migrations/ and migrations/pg/: change both files, then run `drizzle-kit generate`
// and `drizzle-kit generate --config drizzle.pg.config.ts`.
import { sql } from "drizzle-orm";
import { index, integer, type SQLiteColumn, sqliteTable, text } from "drizzle-orm/sqlite-core";
import type { AccountId, KeyId, ModelId } from "../../base/types.ts";
import type { ToolCalls } from "../../wire/usage-counts.ts";

/** The default of every created_at: now in epoch milliseconds (pg/schema.ts has PostgreSQL's). */
const nowMs = sql`(cast(unixepoch('subsec') * 1000 as integer))`;

/** A time column set when the row is written: epoch milliseconds. */
const stamped = (name: string) => integer(name).notNull().default(nowMs);

/** A row's required owner: the id of a row in another table. */
const owner = (name: string, id: () => SQLiteColumn) => integer(name).notNull().references(id);

/** Budgets with periods as stored: nano-USD by period (src/limits/periods.ts defines the periods). */
export type Budgets = Partial<Record<"daily" | "weekly" | "monthly" | "total", number>>;

/** Who pays: an account holds a balance in nano-USD. */
export const accounts = sqliteTable("accounts", {
  id: integer("id").primaryKey({ autoIncrement: true }).$type<AccountId>(),
  name: text("name").notNull().unique(),
  balanceNanos: integer("balance_nanos").notNull().default(0),
  /** Budgets with periods, nano-USD by period (`{"monthly": 50000000000}`); null = none. */
  budgets: text("budgets", { mode: "json" }).$type<Budgets>(),
  createdAt: stamped("created_at"),
});

/** Which models a key may use: a list of exact ids or prefixes ending in `*`, as JSON. */
export const groups = sqliteTable("groups", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  name: text("name").notNull().unique(),
  modelPatterns: text("model_patterns", { mode: "json" }).$type<string[]>().notNull(),
  createdAt: stamped("created_at"),
});

/** API keys: only the SHA-256 hash of the secret and a short display prefix are kept. */
export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey().$type<KeyId>(),
    accountId: owner("account_id", () => accounts.id).$type<AccountId>(),
    groupId: owner("group_id", () => groups.id),
    name: text("name").notNull(),
    prefix: text("prefix").notNull(),
    secretHash: text("secret_hash").notNull().unique(),
    /** `enabled` or `revoked`; `expired` is derived from `expiresAt` at read time. */
    status: text("status", { enum: ["enabled", "revoked"] }).notNull(),
    expiresAt: integer("expires_at"),
    allowIps: text("allow_ips", { mode: "json" }).$type<string[]>(),
    dailyCapNanos: integer("daily_cap_nanos"),
    rpm: integer("rpm"),
    concurrency: integer("concurrency"),
    /** Tokens per sliding minute (worst case held at admission, corrected at settlement); null = the group's. */
    tpm: integer("tpm"),
    /** Budgets with periods other than daily (the daily cap is `daily_cap_nanos`), nano-USD by period. */
    budgets: text("budgets", { mode: "json" }).$type<Budgets>(),
    createdAt: stamped("created_at"),
    lastUsedAt: integer("last_used_at"),
  },
  (t) => [index("api_keys_account_idx").on(t.accountId)],
);

/** Every change of a balance, credits included: the balance is their running sum. */
export const ledger = sqliteTable(
  "ledger",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: owner("account_id", () => accounts.id).$type<AccountId>(),
    amountNanos: integer("amount_nanos").notNull(),
    kind: text("kind", { enum: ["credit", "debit"] }).notNull(),
    /** The request a debit settles; unique so a request is never debited twice. */
    requestId: text("request_id").unique(),
    note: text("note").notNull().default(""),
    createdAt: stamped("created_at"),
  },
  (t) => [index("ledger_account_idx").on(t.accountId)],
);

/**
 * A counter bumped by every change that running gateways must see (keys, groups, accounts).
 * Gateways poll this one row to know when to reload their in-memory caches.
 */
export const storeMeta = sqliteTable("store_meta", {
  name: text("name").primaryKey(),
  value: integer("value").notNull(),
});

/**
 * One row per client request (unique request id, the gateway's own): what was asked, what it
 * cost, where it went.
 * Written by the billing issue's group-commit writer; read by `modelgate usage` and the admin API.
 */
export const usageRecords = sqliteTable(
  "usage_records",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    requestId: text("request_id").notNull().unique(),
    /** The client's own id for the request (`x-client-request-id` or `x-request-id`), as sent; not unique. */
    clientRequestId: text("client_request_id"),
    keyId: text("key_id").notNull().$type<KeyId>(),
    accountId: integer("account_id").notNull().$type<AccountId>(),
    model: text("model").notNull().$type<ModelId>(),
    endpoint: text("endpoint").notNull(),
    stream: integer("stream", { mode: "boolean" }).notNull(),
    status: integer("status").notNull(),
    inputTokens: integer("input_tokens").notNull().default(0),
    cachedInputTokens: integer("cached_input_tokens").notNull().default(0),
    /** Input tokens written to a prompt cache of the default lifetime (Anthropic: 5 minutes), part of input_tokens. */
    cacheWriteTokens: integer("cache_write_tokens").notNull().default(0),
    /** Input tokens written to Anthropic's 1-hour prompt cache, part of input_tokens. */
    cacheWrite1hTokens: integer("cache_write_1h_tokens").notNull().default(0),
    outputTokens: integer("output_tokens").notNull().default(0),
    reasoningTokens: integer("reasoning_tokens").notNull().default(0),
    /** Image generations billed (n × (1 + partial_images) when streaming). */
    generations: integer("generations").notNull().default(0),
    /** Hosted tool calls billed per call, by tool, as JSON (`{"web_search":2}`); null when none ran. */
    toolCalls: text("tool_calls", { mode: "json" }).$type<ToolCalls>(),
    /** Milliseconds of audio billed per minute (speech to text). */
    audioMs: integer("audio_ms").notNull().default(0),
    /** Input characters billed per character (speech). */
    characters: integer("characters").notNull().default(0),
    costNanos: integer("cost_nanos").notNull().default(0),
    /** Where the figures come from (UsageSource in usage.ts): `reported`, `counted`, `estimated` or `none`. */
    usageSource: text("usage_source", { enum: ["reported", "counted", "estimated", "none"] }).notNull(),
    /** Channels tried, in order, comma-separated. */
    channels: text("channels").notNull().default(""),
    latencyMs: integer("latency_ms").notNull().default(0),
    ttfbMs: integer("ttfb_ms"),
    clientAddress: text("client_address"),
    /** The client's `user` field (end-user id) for audit. */
    endUser: text("end_user"),
    /** The alias the client named (`[aliases]`) when `model` is its target; null when it named the model. */
    alias: text("alias"),
    /** Answered from the response cache (`[cache]`): billed at its hit fraction, no upstream called. */
    cacheHit: integer("cache_hit", { mode: "boolean" }).notNull().default(false),
    /** Protocol-specific billing facts (image quality, size, input fidelity, …) as JSON. */
    detail: text("detail", { mode: "json" }).$type<Record<string, unknown>>(),
    createdAt: stamped("created_at"),
  },
  (t) => [
    index("usage_key_time_idx").on(t.keyId, t.createdAt),
    index("usage_account_time_idx").on(t.accountId, t.createdAt),
  ],
);

/** Who changed what, when: every operator change through the CLI or the admin API. */
export const auditLog = sqliteTable("audit_log", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  actor: text("actor").notNull(),
  action: text("action").notNull(),
  target: text("target").notNull(),
  detail: text("detail", { mode: "json" }).$type<Record<string, unknown>>(),
  createdAt: stamped("created_at"),
});

/** Admin API tokens, distinct from API keys: stored as SHA-256 hashes only. */
export const adminTokens = sqliteTable("admin_tokens", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  prefix: text("prefix").notNull(),
  tokenHash: text("token_hash").notNull().unique(),
  revoked: integer("revoked", { mode: "boolean" }).notNull().default(false),
  createdAt: stamped("created_at"),
});

/**
 * Where notifications go: a webhook URL or an e-mail address, for one account (or every account
 * when `accountId` is null: an operator channel), subscribed to some event kinds.
 */
export const notificationChannels = sqliteTable("notification_channels", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  accountId: integer("account_id")
    .references(() => accounts.id)
    .$type<AccountId>(),
  kind: text("kind", { enum: ["webhook", "email"] }).notNull(),
  /** The webhook URL or the e-mail address. */
  target: text("target").notNull(),
  /** HMAC-SHA256 key of a webhook (kept as is: signing needs it). */
  secret: text("secret"),
  /** Event kinds this channel receives, as JSON. */
  events: text("events", { mode: "json" }).$type<string[]>().notNull(),
  /** Balance under which `balance.low` fires; null uses the configured default. */
  balanceThresholdNanos: integer("balance_threshold_nanos"),
  enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
  createdAt: stamped("created_at"),
});

/** One notification sent to one channel, with its delivery state after each attempt. */
export const notificationDeliveries = sqliteTable(
  "notification_deliveries",
  {
    id: text("id").primaryKey(),
    channelId: owner("channel_id", () => notificationChannels.id),
    event: text("event").notNull(),
    payload: text("payload", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    state: text("state", { enum: ["pending", "delivered", "failed"] }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    lastStatus: integer("last_status"),
    lastError: text("last_error"),
    createdAt: stamped("created_at"),
    updatedAt: stamped("updated_at"),
  },
  (t) => [index("notification_deliveries_channel_idx").on(t.channelId)],
);

/**
 * The exact response cache on one node (`[cache]`, src/cache/): a complete answer by the hash of its
 * canonical request, within its scope, until it expires; the oldest go first when the total is
 * over `[cache] max_bytes`. A cluster keeps it in Redis instead.
 */
export const responseCache = sqliteTable(
  "response_cache",
  {
    /** The scope and the request hash: `account:7:…`, `group:NAME:…`, `global:…`. */
    key: text("key").primaryKey(),
    scope: text("scope").notNull(),
    /** The client protocol the answer is in (responses, chat, messages). */
    protocol: text("protocol").notNull(),
    /** The complete answer, as the non-stream JSON body. */
    answer: text("answer").notNull(),
    /** The usage the original answer settled, as JSON. */
    usage: text("usage", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    /** The original answer's settled cost (a hit bills a fraction of it). */
    costNanos: integer("cost_nanos").notNull(),
    bytes: integer("bytes").notNull(),
    createdAt: stamped("created_at"),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("response_cache_created_idx").on(t.createdAt), index("response_cache_scope_idx").on(t.scope)],
);
