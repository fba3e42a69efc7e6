// Query shapes both dialects use: an accounts row as an Account; which columns make a key as
// operators see it (and such a row as a KeyRecord), an admin token, a recent request; the filter of usage reads; a key patch as column
// values; a new channel as a row and a channel row as the API's channel; spending summed per key
// and per account. Each takes the dialect's tables (schema.ts or its PostgreSQL twin schema-pg.ts), which have
// the same columns, so one definition serves the SQLite and the PostgreSQL store.
import { and, eq, gte, lt, type SQL, type SQLWrapper, sql } from "drizzle-orm";
import { nanos } from "../base/money.ts";
import type { KeyId } from "../types.ts";
import type { KeyPatch, NewChannel, NotificationChannel, UsageFilter } from "./admin.ts";
import type { Dialect, ToolCount } from "./dialect.ts";
import type * as sqlite from "./schema.ts";
import type * as pg from "./schema-pg.ts";
import type { Account, KeyRecord, NewKey } from "./store.ts";
import {
  CREDITED_META,
  PRICED_TOOLS,
  type PricedTool,
  REVISION_META,
  type SeedFigures,
  type UsageFilter as TotalsFilter,
  type UsageGroupBy,
  type UsageTotals,
} from "./usage.ts";

type Either<K extends keyof typeof sqlite & keyof typeof pg> = (typeof sqlite)[K] | (typeof pg)[K];

const KEY_FIELDS = [
  "id",
  "name",
  "prefix",
  "accountId",
  "status",
  "expiresAt",
  "allowIps",
  "rpm",
  "concurrency",
  "tpm",
  "budgets",
  "createdAt",
  "lastUsedAt",
] as const;

type KeyColumns<
  K extends Either<"apiKeys">,
  A extends { name: unknown; budgets: unknown },
  G extends { name: unknown },
> = Pick<K, (typeof KEY_FIELDS)[number]> & {
  account: A["name"];
  accountBudgets: A["budgets"];
  group: G["name"];
  dailyCap: K["dailyCapNanos"];
};

type KeyRow = Omit<KeyRecord, "id" | "dailyCap"> & { id: string; dailyCap: number | null };

/** A key row (keyColumnsOf) as the KeyRecord operators see. */
export function toKeyRecord(row: KeyRow): KeyRecord {
  return {
    ...row,
    id: row.id as KeyId,
    dailyCap: row.dailyCap === null ? null : nanos(row.dailyCap),
  };
}

/** A key joined with its account and group names. */
export function keyColumnsOf<
  K extends Either<"apiKeys">,
  A extends Either<"accounts">,
  G extends Either<"groups">,
>(apiKeys: K, accounts: A, groups: G): KeyColumns<K, A, G> {
  return {
    id: apiKeys.id,
    name: apiKeys.name,
    prefix: apiKeys.prefix,
    account: accounts.name,
    accountId: apiKeys.accountId,
    group: groups.name,
    status: apiKeys.status,
    expiresAt: apiKeys.expiresAt,
    allowIps: apiKeys.allowIps,
    dailyCap: apiKeys.dailyCapNanos,
    rpm: apiKeys.rpm,
    concurrency: apiKeys.concurrency,
    tpm: apiKeys.tpm,
    budgets: apiKeys.budgets,
    accountBudgets: accounts.budgets,
    createdAt: apiKeys.createdAt,
    lastUsedAt: apiKeys.lastUsedAt,
  };
}

/** Keys joined with their account and group names (keyColumnsOf), ready for a where or an order. */
export function selectKeys({ db, tables }: Dialect) {
  const { apiKeys, accounts, groups } = tables;
  return db
    .select(keyColumnsOf(apiKeys, accounts, groups))
    .from(apiKeys)
    .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
    .innerJoin(groups, eq(groups.id, apiKeys.groupId));
}

/** An accounts row as the Store's Account. */
export function toAccount(row: typeof sqlite.accounts.$inferSelect): Account {
  return {
    id: row.id,
    name: row.name,
    balance: nanos(row.balanceNanos),
    budgets: row.budgets ?? null,
    createdAt: row.createdAt,
  };
}

/** An admin token without its hash. */
export function tokenColumnsOf<T extends Either<"adminTokens">>(
  t: T,
): Pick<T, "id" | "name" | "prefix" | "revoked" | "createdAt"> {
  return { id: t.id, name: t.name, prefix: t.prefix, revoked: t.revoked, createdAt: t.createdAt };
}

/** The admin API's usage filter on usage_records. */
export function usageWhereOf(u: Either<"usageRecords">, filter: UsageFilter) {
  return and(
    gte(u.createdAt, filter.since),
    filter.keyId === undefined ? undefined : eq(u.keyId, filter.keyId),
    filter.accountId === undefined ? undefined : eq(u.accountId, filter.accountId),
    filter.model === undefined ? undefined : eq(u.model, filter.model),
  );
}

/** The api_keys row of a key being created, once its account and group ids are known. */
export function newKeyRow(
  key: NewKey,
  accountId: number,
  groupId: number,
): typeof sqlite.apiKeys.$inferInsert {
  return {
    id: key.id,
    accountId,
    groupId,
    name: key.name,
    prefix: key.prefix,
    secretHash: key.secretHash,
    status: "enabled",
    expiresAt: key.expiresAt,
    allowIps: key.allowIps,
    dailyCapNanos: key.dailyCap,
    rpm: key.rpm,
    concurrency: key.concurrency,
    tpm: key.tpm,
    budgets: key.budgets ?? null,
  };
}

/** The row of a new notification channel. */
export function channelRow(channel: NewChannel) {
  return {
    accountId: channel.accountId,
    kind: channel.kind,
    target: channel.target,
    secret: channel.secret,
    events: channel.events,
    balanceThresholdNanos: channel.balanceThreshold,
  };
}

/** The api_keys columns a patch sets (the group is looked up by the caller). */
export function keyPatchSet(patch: KeyPatch): Partial<typeof sqlite.apiKeys.$inferInsert> {
  const set: Partial<typeof sqlite.apiKeys.$inferInsert> = {};
  if (patch.name !== undefined) set.name = patch.name;
  if (patch.expiresAt !== undefined) set.expiresAt = patch.expiresAt;
  if (patch.allowIps !== undefined) set.allowIps = patch.allowIps;
  if (patch.dailyCap !== undefined) set.dailyCapNanos = patch.dailyCap;
  if (patch.rpm !== undefined) set.rpm = patch.rpm;
  if (patch.concurrency !== undefined) set.concurrency = patch.concurrency;
  if (patch.tpm !== undefined) set.tpm = patch.tpm;
  if (patch.budgets !== undefined) set.budgets = patch.budgets;
  return set;
}

export function toChannel(row: typeof sqlite.notificationChannels.$inferSelect): NotificationChannel {
  return {
    id: row.id,
    accountId: row.accountId,
    kind: row.kind,
    target: row.target,
    secret: row.secret,
    events: row.events,
    balanceThreshold: row.balanceThresholdNanos === null ? null : nanos(row.balanceThresholdNanos),
    enabled: row.enabled,
    createdAt: row.createdAt,
  };
}

/**
 * The grouping of `modelgate usage` totals; `day` formats epoch seconds (shifted by the offset) as
 * YYYY-MM-DD in the dialect's own function.
 */
export function totalsGroup(
  u: Either<"usageRecords">,
  groupBy: UsageGroupBy | undefined,
  dayOffsetMinutes: number,
  day: (seconds: SQL) => SQL,
): SQL<string | null> {
  if (groupBy === "model") return sql<string>`${u.model}`;
  if (groupBy === "key") return sql<string>`${u.keyId}`;
  if (groupBy === "day") {
    const seconds = sql`(${u.createdAt} / 1000 + ${sql.raw(String(Math.trunc(dayOffsetMinutes) * 60))})`;
    return sql<string>`${day(seconds)}`;
  }
  return sql<null>`NULL`;
}

/**
 * The columns of `modelgate usage` totals, grouped by `group` (a dialect's SQL expression), with
 * each priced hosted tool's calls summed from the records' JSON by the dialect's `toolCount`.
 */
export function totalsFields(u: Either<"usageRecords">, group: SQL<string | null>, toolCount: ToolCount) {
  const sum = (column: SQLWrapper) => sql<number>`coalesce(sum(${column}), 0)`.mapWith(Number);
  const tools = Object.fromEntries(PRICED_TOOLS.map((tool) => [tool, sum(toolCount(u.toolCalls, tool))]));
  // `g` first: the stores group and order by column 1.
  return {
    g: group,
    requests: sql<number>`count(*)`.mapWith(Number),
    input: sum(u.inputTokens),
    cached: sum(u.cachedInputTokens),
    output: sum(u.outputTokens),
    reasoning: sum(u.reasoningTokens),
    generations: sum(u.generations),
    audioMs: sum(u.audioMs),
    characters: sum(u.characters),
    cost: sum(u.costNanos),
    ...(tools as Record<PricedTool, SQL<number>>),
  };
}

/** The filter of `modelgate usage` totals (the account by name). */
export function totalsWhere(u: Either<"usageRecords">, accounts: Either<"accounts">, filter: TotalsFilter) {
  return and(
    filter.keyId === undefined ? undefined : eq(u.keyId, filter.keyId),
    filter.account === undefined
      ? undefined
      : sql`${u.accountId} = (SELECT ${accounts.id} FROM ${accounts} WHERE ${accounts.name} = ${filter.account})`,
    filter.since === undefined ? undefined : gte(u.createdAt, filter.since),
    filter.until === undefined ? undefined : lt(u.createdAt, filter.until),
  );
}

export function toTotals(
  r: {
    g: string | null;
    requests: number;
    input: number;
    cached: number;
    output: number;
    reasoning: number;
    generations: number;
    audioMs: number;
    characters: number;
    cost: number;
  } & Record<PricedTool, number>,
): UsageTotals {
  return {
    group: r.g === null || r.g === undefined ? null : String(r.g),
    requests: r.requests,
    inputTokens: r.input,
    cachedInputTokens: r.cached,
    outputTokens: r.output,
    reasoningTokens: r.reasoning,
    generations: r.generations,
    toolCalls: Object.fromEntries(PRICED_TOOLS.map((tool) => [tool, r[tool]])) as Record<PricedTool, number>,
    audioMs: r.audioMs,
    characters: r.characters,
    costNanos: nanos(r.cost),
  };
}

/** The columns of the admin API's usage aggregates, grouped by `bucket`. */
export function aggregateFields(u: Either<"usageRecords">, bucket: SQL<string | null>) {
  const sum = (column: SQLWrapper) => sql<number>`coalesce(sum(${column}), 0)`.mapWith(Number);
  return {
    bucket: sql<string>`${bucket}`,
    requests: sql<number>`count(*)`.mapWith(Number),
    errors: sum(sql`case when ${u.status} >= 400 then 1 else 0 end`),
    inputTokens: sum(u.inputTokens),
    outputTokens: sum(u.outputTokens),
    generations: sum(u.generations),
    audioMs: sum(u.audioMs),
    characters: sum(u.characters),
    costNanos: sum(u.costNanos),
  };
}

/**
 * The columns of seedFigures(): each account's balance, its credit total (`credited`, an alias of
 * store_meta joined on `credited:ID`) and the revision, in one statement so they share a snapshot.
 */
export function seedFieldsOf<A extends Either<"accounts">>(
  accounts: A,
  storeMeta: Either<"storeMeta">,
  creditedValue: SQLWrapper,
): { id: A["id"]; balance: A["balanceNanos"]; credited: SQL<number | null>; revision: SQL<number> } {
  return {
    id: accounts.id,
    balance: accounts.balanceNanos,
    // Left-joined: NULL for an account never credited (drizzle maps NULL to null, not through Number).
    credited: sql<number | null>`${creditedValue}`.mapWith(Number),
    revision:
      sql<number>`(select ${storeMeta.value} from ${storeMeta} where ${storeMeta.name} = ${REVISION_META})`.mapWith(
        Number,
      ),
  };
}

/** The join of an account to its credit total row (both dialects concatenate with ||). */
export function creditedJoin(accounts: Either<"accounts">, creditedName: SQLWrapper) {
  return eq(creditedName, sql`cast(${CREDITED_META} as text) || cast(${accounts.id} as text)`);
}

export function toSeedFigures(
  rows: readonly { id: number; balance: number; credited: number | null; revision: number }[],
): SeedFigures {
  return {
    revision: rows[0]?.revision ?? 0,
    accounts: new Map(
      rows.map((r) => [r.id, { balance: nanos(r.balance), credited: nanos(r.credited ?? 0) }]),
    ),
  };
}

/** The columns spendingOf sums up: the cost per key and account (grouped by both). */
export function spendingFields<U extends Either<"usageRecords">>(
  u: U,
): { keyId: U["keyId"]; accountId: U["accountId"]; cost: SQL<number> } {
  return { keyId: u.keyId, accountId: u.accountId, cost: sql<number>`sum(${u.costNanos})`.mapWith(Number) };
}

/** Each key's and each account's spending from the costs summed per key and account. */
export function spendingOf(rows: readonly { keyId: string; accountId: number; cost: number }[]) {
  const byKey = new Map<string, number>();
  const byAccount = new Map<number, number>();
  for (const row of rows) {
    byKey.set(row.keyId, (byKey.get(row.keyId) ?? 0) + row.cost);
    byAccount.set(row.accountId, (byAccount.get(row.accountId) ?? 0) + row.cost);
  }
  return { byKey, byAccount };
}
