// A key as rows and columns, in both dialects: the columns operators see (joined with its account
// and group names) and such a row as a KeyRecord, a new key's row, a patch as column values.
import { eq } from "drizzle-orm";
import { nanos } from "../base/money.ts";
import type { AccountId } from "../base/types.ts";
import type { KeyPatch } from "./admin.ts";
import type { Dialect, Tables } from "./dialect.ts";
import type * as sqlite from "./sqlite/schema.ts";
import type { KeyRecord, NewKey } from "./store.ts";

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
  K extends Tables["apiKeys"],
  A extends { name: unknown; budgets: unknown },
  G extends { name: unknown },
> = Pick<K, (typeof KEY_FIELDS)[number]> & {
  account: A["name"];
  accountBudgets: A["budgets"];
  group: G["name"];
  dailyCap: K["dailyCapNanos"];
};

type KeyRow = Omit<KeyRecord, "dailyCap"> & { dailyCap: number | null };

/** A key row (keyColumnsOf) as the KeyRecord operators see. */
export function toKeyRecord(row: KeyRow): KeyRecord {
  return {
    ...row,
    dailyCap: row.dailyCap === null ? null : nanos(row.dailyCap),
  };
}

/** A key joined with its account and group names. */
export function keyColumnsOf<
  K extends Tables["apiKeys"],
  A extends Tables["accounts"],
  G extends Tables["groups"],
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

/** The api_keys row of a key being created, once its account and group ids are known. */
export function newKeyRow(
  key: NewKey,
  accountId: AccountId,
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
