// Usage sums in both dialects: the admin API's filter and aggregates, and `modelgate usage` totals
// (grouping, columns, filter, the row as UsageTotals).
import { and, eq, gte, lt, type SQL, type SQLWrapper, sql } from "drizzle-orm";
import { nanos } from "../../base/money.ts";
import { PRICED_TOOLS, type PricedTool } from "../../wire/usage-counts.ts";
import type { UsageFilter } from "../admin.ts";
import type { Tables, ToolCount } from "../dialect.ts";
import type { UsageFilter as TotalsFilter, UsageGroupBy, UsageTotals } from "./record.ts";

/** The admin API's usage filter on usage_records. */
export function usageWhereOf(u: Tables["usageRecords"], filter: UsageFilter) {
  return and(
    gte(u.createdAt, filter.since),
    filter.keyId === undefined ? undefined : eq(u.keyId, filter.keyId),
    filter.accountId === undefined ? undefined : eq(u.accountId, filter.accountId),
    filter.model === undefined ? undefined : eq(u.model, filter.model),
  );
}

/**
 * The grouping of `modelgate usage` totals; `day` formats epoch seconds (shifted by the offset) as
 * YYYY-MM-DD in the dialect's own function.
 */
export function totalsGroup(
  u: Tables["usageRecords"],
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
export function totalsFields(u: Tables["usageRecords"], group: SQL<string | null>, toolCount: ToolCount) {
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
export function totalsWhere(u: Tables["usageRecords"], accounts: Tables["accounts"], filter: TotalsFilter) {
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
export function aggregateFields(u: Tables["usageRecords"], bucket: SQL<string | null>) {
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
