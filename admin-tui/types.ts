// What the terminal UI reads from the admin API, as valibot schemas (the API is external input).
import * as v from "valibot";
import { formatUsd } from "../src/base/money.ts";

const nullableString = v.nullable(v.string());

export const KeyView = v.object({
  id: v.string(),
  prefix: v.string(),
  name: v.string(),
  account: v.string(),
  group: v.string(),
  status: v.picklist(["enabled", "revoked", "expired"]),
  expires_at: nullableString,
  allow_ips: v.array(v.string()),
  daily_cap_nanos: v.nullable(v.number()),
  rpm: v.nullable(v.number()),
  concurrency: v.nullable(v.number()),
  spent_today_nanos: v.number(),
  last_used_at: nullableString,
});
export type KeyView = v.InferOutput<typeof KeyView>;

export const CreatedKey = v.object({ ...KeyView.entries, secret: v.string() });

/** One budget in its current period (GET /admin/v1/keys/{id}: `budgets`, `account_budgets`). */
export const BudgetFigure = v.object({
  period: v.string(),
  limit_nanos: v.number(),
  spent_nanos: v.number(),
  reserved_nanos: v.number(),
  remaining_nanos: v.number(),
});
export type BudgetFigure = v.InferOutput<typeof BudgetFigure>;

export const KeyBudgets = v.object({
  budgets: v.optional(v.array(BudgetFigure), []),
  account_budgets: v.optional(v.array(BudgetFigure), []),
});
export type KeyBudgets = v.InferOutput<typeof KeyBudgets>;

export const AccountView = v.object({
  id: v.number(),
  name: v.string(),
  balance_nanos: v.number(),
  spent_today_nanos: v.number(),
});
export type AccountView = v.InferOutput<typeof AccountView>;

export const UsageRow = v.object({
  bucket: v.string(),
  requests: v.number(),
  errors: v.number(),
  input_tokens: v.number(),
  output_tokens: v.number(),
  generations: v.number(),
  /** Audio billed per minute and speech characters (absent from gateways older than the fields). */
  audio_ms: v.optional(v.number(), 0),
  characters: v.optional(v.number(), 0),
  cost_nanos: v.number(),
});
export type UsageRow = v.InferOutput<typeof UsageRow>;

export const RequestEvent = v.object({
  request_id: v.string(),
  at: v.string(),
  method: v.string(),
  endpoint: v.string(),
  key_id: v.string(),
  key_name: v.string(),
  model: v.string(),
  stream: v.boolean(),
  status: v.number(),
  input_tokens: v.number(),
  output_tokens: v.number(),
  generations: v.number(),
  /** Audio billed per minute and speech characters (absent from gateways older than the fields). */
  audio_ms: v.optional(v.number(), 0),
  characters: v.optional(v.number(), 0),
  cost_nanos: v.number(),
  latency_ms: v.number(),
  ttfb_ms: v.nullable(v.number()),
  /** Set on a request refused before billing (absent from gateways older than the field). */
  error_code: v.optional(v.nullable(v.string()), null),
});
export type RequestEvent = v.InferOutput<typeof RequestEvent>;

export const ListOf = <S extends v.GenericSchema>(item: S) => v.object({ data: v.array(item) });

export const ApiError = v.object({ error: v.object({ message: v.string() }) });

/**
 * Money for display, one format everywhere: the exact nano-USD amount in dollars, at least two
 * decimals and as many more as it has (`$10.00`, `$0.50`, `$9.9999862`, `$0.000046`), as the
 * admin API's `*_usd` fields write it: small spending is never rounded away.
 */
export function usd(nanos: number | null): string {
  return nanos === null ? "-" : `$${formatUsd(nanos)}`;
}

/** A count (tokens, seconds, characters) in at most four characters: 9999, 123k, 1.2M. */
export function shortCount(n: number): string {
  if (n < 10_000) return String(n);
  return n < 999_500 ? `${Math.round(n / 1000)}k` : `${(n / 1e6).toFixed(1)}M`;
}
