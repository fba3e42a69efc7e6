// Usage totals grouped by any combination of key, account, model and billing day, built from the
// store's one-dimension totals: the outer dimensions narrow the filter (a key id, an account name,
// a day's bounds) and the innermost one is the store's GROUP BY. Model can only be grouped by the
// store, so it is always made the innermost dimension; rows keep the order the operator asked for.
import { toKeyId } from "../base/types.ts";
import type { Store } from "../store/store.ts";
import type { UsageFilter, UsageTotals } from "../store/usage/record.ts";

export const DIMENSIONS = ["key", "account", "model", "day"] as const;
export type Dimension = (typeof DIMENSIONS)[number];

export interface GroupedTotals {
  /** The value of each grouping dimension of this row. */
  groups: Partial<Record<Dimension, string>>;
  totals: UsageTotals;
}

const DAY_MS = 86_400_000;

/** The bounds of billing day `day` (YYYY-MM-DD in the billing offset), intersected with the filter's. */
function dayFilter(filter: UsageFilter, day: string, offsetMinutes: number): UsageFilter {
  const start = Date.parse(`${day}T00:00:00Z`) - offsetMinutes * 60_000;
  return {
    ...filter,
    since: Math.max(start, filter.since ?? start),
    until: Math.min(start + DAY_MS, filter.until ?? start + DAY_MS),
  };
}

/** Totals over `filter` grouped by `dimensions` (outermost first); groups with no request are left out. */
export async function groupedTotals(
  store: Store,
  filter: UsageFilter,
  dimensions: readonly Dimension[],
  offsetMinutes: number,
): Promise<GroupedTotals[]> {
  if (dimensions.length === 0) {
    const rows = await store.usage.totals(filter, undefined, offsetMinutes);
    return rows.map((totals) => ({ groups: {}, totals }));
  }
  const ordered = [...dimensions.filter((d) => d !== "model"), ...dimensions.filter((d) => d === "model")];
  return group(store, filter, ordered, offsetMinutes);
}

async function group(
  store: Store,
  filter: UsageFilter,
  dims: readonly Dimension[],
  offsetMinutes: number,
): Promise<GroupedTotals[]> {
  const [first, ...rest] = dims;
  if (first === undefined) {
    const rows = await store.usage.totals(filter, undefined, offsetMinutes);
    return rows.filter((r) => r.requests > 0).map((totals) => ({ groups: {}, totals }));
  }
  if (first === "account") {
    const out: GroupedTotals[] = [];
    for (const account of await store.listAccounts()) {
      // The filter's own account (--account) is the only group there can be.
      if (filter.account !== undefined && account.name !== filter.account) continue;
      for (const row of await group(store, { ...filter, account: account.name }, rest, offsetMinutes))
        out.push({ groups: { account: account.name, ...row.groups }, totals: row.totals });
    }
    return out;
  }
  const rows = await store.usage.totals(filter, first, offsetMinutes);
  if (rest.length === 0) {
    return rows.map((totals) => ({ groups: { [first]: totals.group ?? "" }, totals }));
  }
  const out: GroupedTotals[] = [];
  for (const { group: value } of rows) {
    if (value === null) continue;
    const narrowed =
      first === "key" ? { ...filter, keyId: toKeyId(value) } : dayFilter(filter, value, offsetMinutes);
    for (const row of await group(store, narrowed, rest, offsetMinutes))
      out.push({ groups: { [first]: value, ...row.groups }, totals: row.totals });
  }
  return out;
}

/**
 * A spreadsheet runs a cell that starts with `=`, `+`, `-`, `@`, tab or CR as a formula (OWASP: CSV
 * injection). A field's text may become several cells where it is split on another separator (`;`
 * in many locales, tab, a line break), so every such start is matched, not only the field's first.
 */
const FORMULA_START = /(^|[,;\t\r\n])(?=[=+\-@\t\r])/g;
/** A plain decimal number: a spreadsheet reads it as a number, so it stays as it is. */
const PLAIN_NUMBER = /^[+-]?\d+(\.\d+)?([eE][+-]?\d+)?$/;

/**
 * One CSV field (RFC 4180): quoted when it holds a separator (comma, semicolon, tab), a quote or a
 * line break. Text that a spreadsheet would run as a formula (a key name or model id with `=`, `+`,
 * `-`, `@`, tab or CR at its start or after a separator) gets a `'` there so it shows as text;
 * numbers stay numbers.
 */
export function csvField(value: unknown): string {
  let text = value === null || value === undefined ? "" : String(value);
  if (typeof value === "string" && !PLAIN_NUMBER.test(text)) text = text.replace(FORMULA_START, "$1'");
  return /[",;\t\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** Rows as CSV with a header line, columns in the given order. */
export function toCsv(rows: readonly Record<string, unknown>[], columns: readonly string[]): string {
  const lines = [columns.map(csvField).join(",")];
  for (const row of rows) lines.push(columns.map((c) => csvField(row[c])).join(","));
  return `${lines.join("\r\n")}\r\n`;
}
