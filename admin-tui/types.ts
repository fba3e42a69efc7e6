// What the terminal UI reads from the admin API. The views are defined once, by the gateway's view
// functions (src/admin/); the UI imports their types only — erased, so no gateway code is in the
// UI at run time — and checks each answer at the boundary with a valibot reader of the fields it
// shows, which tsc holds to the gateway's view (the API is external input: another version may answer).
import * as v from "valibot";
import type { accountView } from "../src/admin/api-accounts.ts";
import type { KeyBudgetsView, ListedKeyView } from "../src/admin/api-keys.ts";
import type { usageView } from "../src/admin/api-usage.ts";
import type { eventRecord } from "../src/admin/events.ts";
import type { budgetView } from "../src/admin/keys.ts";
import { formatUsd } from "../src/base/money.ts";
import type { Brand } from "../src/base/types.ts";

/** A value as its JSON carries it: the gateway's brands (Nanos, KeyId) are plain numbers and strings. */
type Wire<T> =
  T extends Brand<number, string>
    ? number
    : T extends Brand<string, string>
      ? string
      : T extends readonly (infer I)[]
        ? Wire<I>[]
        : T extends object
          ? { [K in keyof T]: Wire<T[K]> }
          : T;

/** The fields `F` of the gateway's view `V`, as the UI holds them. */
type Read<V, F extends keyof V> = { [K in F]: Wire<V[K]> };

/** Each entry a field of `V` whose schema accepts what the gateway writes there; `never` marks one that is not. */
type Checked<V, E extends v.ObjectEntries> = {
  [K in keyof E]: K extends keyof V ? (Wire<V[K]> extends v.InferInput<E[K]> ? E[K] : never) : never;
};

/**
 * The reader of view `V`: a valibot object of the fields the UI shows. tsc refuses a field the
 * view does not have, or one whose schema would refuse what the gateway writes; what it returns is
 * typed as the gateway's view (a value the view narrows further, a budget's period, taken as written).
 */
function reader<V>() {
  return <E extends v.ObjectEntries>(entries: E & Checked<V, E>) =>
    v.object(entries) as unknown as v.GenericSchema<unknown, Read<V, keyof E & keyof V>>;
}

const nullableString = v.nullable(v.string());

export const KeyView = reader<ListedKeyView>()({
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

/** A created key: the listed view and its secret, shown once. */
export const CreatedKey = v.intersect([KeyView, v.object({ secret: v.string() })]);

/** One budget in its current period (GET /admin/v1/keys/{id}: `budgets`, `account_budgets`). */
export const BudgetFigure = reader<ReturnType<typeof budgetView>>()({
  period: v.string(),
  limit_nanos: v.number(),
  spent_nanos: v.number(),
  reserved_nanos: v.number(),
  remaining_nanos: v.number(),
});
export type BudgetFigure = v.InferOutput<typeof BudgetFigure>;

/** A key's budgets and its account's (absent from a gateway whose meter reads no budgets: none). */
export const KeyBudgets = reader<KeyBudgetsView>()({
  budgets: v.optional(v.array(BudgetFigure), []),
  account_budgets: v.optional(v.array(BudgetFigure), []),
});
export type KeyBudgets = v.InferOutput<typeof KeyBudgets>;

export const AccountView = reader<ReturnType<typeof accountView>>()({
  id: v.number(),
  name: v.string(),
  balance_nanos: v.number(),
  spent_today_nanos: v.number(),
});
export type AccountView = v.InferOutput<typeof AccountView>;

export const UsageRow = reader<ReturnType<typeof usageView>>()({
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

export const RequestEvent = reader<ReturnType<typeof eventRecord>>()({
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
