// What the terminal UI reads from the admin API, as valibot schemas (the API is external input).
import * as v from "valibot";

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
 * Money for display: nano-USD as dollars with 2 decimals from $1, 4 below, and below $0.01 as many
 * as two significant digits need (`$0.000021`), so a real small cost never shows as `$0.0000`.
 */
export function usd(nanos: number | null): string {
  if (nanos === null) return "-";
  const dollars = nanos / 1e9;
  const size = Math.abs(dollars);
  if (size >= 1 || dollars === 0) return `$${dollars.toFixed(2)}`;
  if (size >= 0.01) return `$${dollars.toFixed(4)}`;
  const decimals = Math.min(9, 1 - Math.floor(Math.log10(size)));
  return `$${dollars.toFixed(decimals).replace(/(\.\d*?[1-9])0+$/, "$1")}`;
}
