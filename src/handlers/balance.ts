// GET /v1/dashboard/billing/balance: the calling key's money figures, read from memory (no query).
//
// The JSON shape (all money as exact decimal USD strings plus the same amount in integer nano-USD):
// {
//   "object": "billing_balance",
//   "currency": "USD",
//   "account": "default",              // the key's account
//   "key_id": "key_…",
//   "balance_usd": "9.98",              // account balance after every settled request
//   "balance_nanos": 9980000000,
//   "reserved_usd": "0.25",             // worst-case reservations of the ACCOUNT's requests in flight
//   "reserved_nanos": 250000000,
//   "available_usd": "9.73",            // balance − reserved: what new requests may still reserve
//   "available_nanos": 9730000000,
//   "daily_cap_usd": "5.00" | null,     // the key's daily cap; null = no cap
//   "daily_cap_nanos": 5000000000 | null,
//   "spent_today_usd": "0.02",          // the key's settled cost in the current billing day
//   "spent_today_nanos": 20000000,
//   "reserved_today_usd": "0.25",       // reservations of THIS KEY's requests in flight
//   "reserved_today_nanos": 250000000,
//   "remaining_today_usd": "4.73" | null,  // max(0, cap − spent today − key reservations); null = no cap
//   "remaining_today_nanos": 4730000000 | null,
//   "in_flight": 1,                     // the key's requests holding a concurrency slot
//   "day_started_at": "2026-05-01T00:00:00.000Z",  // billing day (UTC unless configured)
//   "day_resets_at": "2026-05-02T00:00:00.000Z"
// }
// The answer carries the x-ratelimit-* headers of the key without counting as a request.
import { formatUsd } from "../base/money.ts";
import type { Nanos } from "../base/types.ts";
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import { authenticate } from "../pipeline/authenticate.ts";
import { GatewayError } from "../wire/errors.ts";

function money(prefix: string, value: Nanos | number | null): Record<string, string | number | null> {
  return {
    [`${prefix}_usd`]: value === null ? null : formatUsd(value),
    [`${prefix}_nanos`]: value,
  };
}

export async function getBalance(ctx: RequestContext, gateway: Gateway): Promise<Response> {
  const principal = authenticate(ctx, gateway);
  if (!gateway.meter.balance) {
    throw new GatewayError("internal", "This gateway runs without billing, so it keeps no balance to show.");
  }
  const view = await gateway.meter.balance(principal);
  const remaining =
    view.dailyCap === null ? null : Math.max(0, view.dailyCap - view.spentToday - view.keyReserved);
  const body = {
    object: "billing_balance",
    currency: "USD",
    account: principal.accountName,
    key_id: principal.keyId,
    ...money("balance", view.balance),
    ...money("reserved", view.accountReserved),
    ...money("available", view.balance - view.accountReserved),
    ...money("daily_cap", view.dailyCap),
    ...money("spent_today", view.spentToday),
    ...money("reserved_today", view.keyReserved),
    ...money("remaining_today", remaining),
    in_flight: view.inFlight,
    day_started_at: new Date(view.dayStart).toISOString(),
    day_resets_at: new Date(view.dayEnd).toISOString(),
  };
  return Response.json(body, { headers: view.headers });
}
