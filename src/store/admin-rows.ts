import { nanos } from "../base/money.ts";
import type { NewChannel, NotificationChannel } from "./admin.ts";
import type { Tables } from "./dialect.ts";
import type * as sqlite from "./sqlite/schema.ts";
import type { Account } from "./store.ts";

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
export function tokenColumnsOf<T extends Tables["adminTokens"]>(
  t: T,
): Pick<T, "id" | "name" | "prefix" | "revoked" | "createdAt"> {
  return { id: t.id, name: t.name, prefix: t.prefix, revoked: t.revoked, createdAt: t.createdAt };
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
