// A key as the store keeps it, apart from store.ts so the admin part of the store
// (admin.ts) and the store itself (store.ts) can both name it without importing each other.
import type { AccountId, KeyId, Nanos } from "../base/types.ts";
import type { Budgets } from "./sqlite/schema.ts";

export type KeyStatus = "enabled" | "revoked";

/** A key as the operator sees it; the stored status is `enabled` or `revoked`, expiry is separate. */
export interface KeyRecord {
  id: KeyId;
  name: string;
  prefix: string;
  account: string;
  accountId: AccountId;
  group: string;
  status: KeyStatus;
  expiresAt: number | null;
  allowIps: string[] | null;
  dailyCap: Nanos | null;
  rpm: number | null;
  concurrency: number | null;
  /** Tokens per minute; null = the configured default of its group or account. */
  tpm: number | null;
  /** The key's budgets other than daily (nano-USD by period); null = none. */
  budgets: Budgets | null;
  /** Its account's budgets (nano-USD by period); null = none. */
  accountBudgets: Budgets | null;
  createdAt: number;
  lastUsedAt: number | null;
}
