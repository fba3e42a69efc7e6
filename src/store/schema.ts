// Drizzle table definitions for the SQLite store; drizzle-kit turns changes here into migrations/.
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

const now = sql`(cast(unixepoch('subsec') * 1000 as integer))`;

/** Who pays: an account holds a balance in nano-USD. */
export const accounts = sqliteTable("accounts", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  name: text("name").notNull().unique(),
  balanceNanos: integer("balance_nanos").notNull().default(0),
  createdAt: integer("created_at").notNull().default(now),
});

/** Which models a key may use: a list of exact ids or prefixes ending in `*`, as JSON. */
export const groups = sqliteTable("groups", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  name: text("name").notNull().unique(),
  modelPatterns: text("model_patterns", { mode: "json" }).$type<string[]>().notNull(),
  createdAt: integer("created_at").notNull().default(now),
});

/** API keys: only the SHA-256 hash of the secret and a short display prefix are kept. */
export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id),
    groupId: integer("group_id")
      .notNull()
      .references(() => groups.id),
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
    createdAt: integer("created_at").notNull().default(now),
    lastUsedAt: integer("last_used_at"),
  },
  (t) => [index("api_keys_account_idx").on(t.accountId)],
);

/** Every change of a balance, credits included: the balance is their running sum. */
export const ledger = sqliteTable(
  "ledger",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: integer("account_id")
      .notNull()
      .references(() => accounts.id),
    amountNanos: integer("amount_nanos").notNull(),
    kind: text("kind", { enum: ["credit", "debit"] }).notNull(),
    note: text("note").notNull().default(""),
    createdAt: integer("created_at").notNull().default(now),
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
