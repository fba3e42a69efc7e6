// Notification payloads: one envelope for every event kind, the same for webhooks (as the JSON
// body) and e-mail (as the message). Documented with examples in docs/notifications.md.
import { randomBytes } from "node:crypto";
import { formatUsd } from "../base/money.ts";
import type { AccountId } from "../base/types.ts";

export const EVENT_KINDS = [
  "balance.low",
  "quota.daily_cap",
  "quota.budget",
  "key.security_alert",
  "announcement",
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

export interface AccountRef {
  id: AccountId;
  name: string;
}

export interface BalanceLow {
  balance_nanos: number;
  balance_usd: string;
  threshold_nanos: number;
  threshold_usd: string;
}

export interface DailyCap {
  key_id: string;
  key_name: string;
  /** 80: the key spent 80% of its daily cap today; 100: it reached the cap. */
  level: 80 | 100;
  spent_today_nanos: number;
  daily_cap_nanos: number;
  /** The UTC day, `YYYY-MM-DD`. */
  day: string;
}

export interface BudgetReached {
  /** The key whose budget it is; null for the account's own budget. */
  key_id: string | null;
  key_name: string | null;
  period: "daily" | "weekly" | "monthly" | "total";
  /** The threshold crossed, in percent of the budget (`[billing.budgets] notify_at_percent`). */
  level: number;
  spent_nanos: number;
  budget_nanos: number;
  period_start: string;
  /** When the period ends; null for a total budget. */
  period_end: string | null;
}

export type SecurityReason = "ip_not_allowed" | "revoked_key" | "expired_key";

export interface SecurityAlert {
  reason: SecurityReason;
  key_id: string;
  key_name: string;
  key_prefix: string;
  client_address: string | null;
  /** Refusals of this key for this reason not reported since the previous alert (rate limiting). */
  suppressed: number;
}

export interface Announcement {
  title: string;
  message: string;
}

interface DataOf {
  "balance.low": BalanceLow;
  "quota.daily_cap": DailyCap;
  "quota.budget": BudgetReached;
  "key.security_alert": SecurityAlert;
  announcement: Announcement;
}

/** The envelope every notification has. */
export interface Notification<K extends EventKind = EventKind> {
  id: string;
  type: K;
  created_at: string;
  /** The account concerned; null for an announcement to everyone. */
  account: AccountRef | null;
  data: DataOf[K];
}

export function notification<K extends EventKind>(
  type: K,
  account: AccountRef | null,
  data: DataOf[K],
  now = Date.now(),
): Notification<K> {
  return {
    id: `ntf_${randomBytes(8).toString("hex")}`,
    type,
    created_at: new Date(now).toISOString(),
    account,
    data,
  };
}

/** A one-line subject and a readable body for e-mail. */
export function describe(n: Notification): { subject: string; text: string } {
  const who = n.account ? `account ${n.account.name}` : "all accounts";
  const subject = (() => {
    switch (n.type) {
      case "balance.low": {
        const d = n.data as BalanceLow;
        return `Balance of ${who} is ${d.balance_usd} USD, under ${d.threshold_usd} USD`;
      }
      case "quota.daily_cap": {
        const d = n.data as DailyCap;
        return `Key ${d.key_name || d.key_id} used ${d.level}% of its daily cap (${formatUsd(d.daily_cap_nanos)} USD)`;
      }
      case "quota.budget": {
        const d = n.data as BudgetReached;
        const owner = d.key_id === null ? who : `key ${d.key_name || d.key_id}`;
        return `${owner} used ${d.level}% of its ${d.period} budget (${formatUsd(d.budget_nanos)} USD)`;
      }
      case "key.security_alert": {
        const d = n.data as SecurityAlert;
        return `Refused request with key ${d.key_name || d.key_id}: ${d.reason.replaceAll("_", " ")}`;
      }
      case "announcement":
        return (n.data as Announcement).title;
    }
    return n.type satisfies never;
  })();
  const body = n.type === "announcement" ? `${(n.data as Announcement).message}\n\n` : "";
  return {
    subject: `[modelgate] ${subject}`,
    text: `${body}${subject}\n\nEvent: ${n.type}\nId: ${n.id}\nTime: ${n.created_at}\n\n${JSON.stringify(n, null, 2)}\n`,
  };
}
