// What the limiter is seeded from, in both dialects: each account's balance and credit total with
// the revision in one snapshot, and the spending per key and per account.
import { eq, type SQL, type SQLWrapper, sql } from "drizzle-orm";
import { nanos } from "../../base/money.ts";
import type { AccountId, KeyId } from "../../base/types.ts";
import type { Tables } from "../dialect.ts";
import { CREDITED_META, REVISION_META, type SeedFigures } from "./record.ts";

/**
 * The columns of seedFigures(): each account's balance, its credit total (`credited`, an alias of
 * store_meta joined on `credited:ID`) and the revision, in one statement so they share a snapshot.
 */
export function seedFieldsOf<A extends Tables["accounts"]>(
  accounts: A,
  storeMeta: Tables["storeMeta"],
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
export function creditedJoin(accounts: Tables["accounts"], creditedName: SQLWrapper) {
  return eq(creditedName, sql`cast(${CREDITED_META} as text) || cast(${accounts.id} as text)`);
}

export function toSeedFigures(
  rows: readonly { id: AccountId; balance: number; credited: number | null; revision: number }[],
): SeedFigures {
  return {
    revision: rows[0]?.revision ?? 0,
    accounts: new Map(
      rows.map((r) => [r.id, { balance: nanos(r.balance), credited: nanos(r.credited ?? 0) }]),
    ),
  };
}

/** The columns spendingOf sums up: the cost per key and account (grouped by both). */
export function spendingFields<U extends Tables["usageRecords"]>(
  u: U,
): { keyId: U["keyId"]; accountId: U["accountId"]; cost: SQL<number> } {
  return { keyId: u.keyId, accountId: u.accountId, cost: sql<number>`sum(${u.costNanos})`.mapWith(Number) };
}

/** Each key's and each account's spending from the costs summed per key and account. */
export function spendingOf(rows: readonly { keyId: KeyId; accountId: AccountId; cost: number }[]) {
  const byKey = new Map<KeyId, number>();
  const byAccount = new Map<AccountId, number>();
  for (const row of rows) {
    byKey.set(row.keyId, (byKey.get(row.keyId) ?? 0) + row.cost);
    byAccount.set(row.accountId, (byAccount.get(row.accountId) ?? 0) + row.cost);
  }
  return { byKey, byAccount };
}
